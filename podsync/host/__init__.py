"""This machine, outside the engine: what podsync reads and writes on the host it
runs on.

``_files`` (pod directories under the root directory), ``_volume_writer`` (the host
files of content volumes, written as the kubelet's atomic writer does), ``_secret_key``
(the host's key of Secret digests), ``_clock`` (where the time is read) and ``_node``
(the node's name and capacity, which the loader resolves pods against) and
``_version`` (the installed package's version, ``podsync.__version__``).

May import: model, spec, actions, exceptions.
"""
