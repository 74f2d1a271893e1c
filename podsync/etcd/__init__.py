"""etcd, the seed's distributed store: where it is (URLs, options, TLS, credentials) and
a client of its v3 JSON gateway (read, compare-and-swap, watch).

``_urls`` (``etcd://`` URLs, ``EtcdOptions``, the key of a host's pods) and ``_client``
(``EtcdClient`` on etcd3gw, the optional ``etcd`` extra). The loop's etcd source is
``podsync.load._etcd_watch``; publishing is ``podsync.fleet._publish``.

May import: exceptions.
"""
