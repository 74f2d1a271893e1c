"""Reading desired pods: files, directories, HTTP(S) URLs, standard input and etcd.

``_config`` holds the entry points (``load_pods``, ``parse_pods``) and wires the
loader; ``_streams`` turns one stream's bytes into pods, ``_bad_files`` keeps the good
files' pods when some are bad; ``_sources`` reads the sources within their limits;
``_etcd`` is the etcd client; the continuous loop's sources are ``_source_set`` (each
file with its last good state), ``_source_reads`` (one poll of one source) and
``_etcd_watch`` (an etcd key, read and watched). The shape of a pod file is
``schema``'s; turning it into the model is ``convert``'s.

May import: model, spec, host, load/schema, load/convert, etcd, exceptions.
"""
