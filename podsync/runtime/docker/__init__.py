"""The Docker runtime: podsync's ``Runtime`` protocol on the docker SDK.

``_runtime`` holds ``DockerRuntime``; ``_api`` translates between podsync's values and
the Engine API's shapes, both ways; ``_streams`` reads logs, attached exec and events;
``_archive`` makes and reads the tar archives of the archive API. Engine types stay in
this folder.

May import: model, spec, actions, runtime, exceptions.
"""
