"""The Docker runtime: podsync's ``Runtime`` protocol on the docker SDK.

``_runtime`` holds ``DockerRuntime`` (its constructor, and the theory of operation),
assembled from one mixin per concern: ``_connection`` the pool of clients, the API
version and the translation of errors (the base of the others); ``_containers`` the
list, inspect, create, start, stop and remove of containers; ``_images`` the list, pull
and remove of images; ``_volumes`` the named volumes and the files written and read in
the engine; ``_operating`` exec, logs, attached exec and events. ``_api`` translates
between podsync's values and the Engine API's shapes, both ways; ``_streams`` reads
logs, attached exec and events; ``_archive`` makes and reads the tar archives of the
archive API. Engine types stay in this folder.

May import: model, spec, actions, runtime, exceptions.
"""
