"""The wire: length-prefixed msgpack frames over a Unix or TCP socket (:mod:`.client`), the
values a request may carry (:mod:`.args`), and the protocol's names and numbers generated from
Go (:mod:`yutenv._protocol`). Wire error codes become exceptions in :mod:`yutenv.errors`.
Nothing above this layer opens a socket; front ends get a client through
:class:`yutenv.connection.Session`."""
