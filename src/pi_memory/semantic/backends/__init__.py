"""Semantic-memory backends other than the embedded default: ``rest_client`` (self-hosted: ``pi-memory serve``
or a Mem0 OSS server), ``rest_server`` (``pi-memory serve``) and ``platform`` (Mem0 Cloud, optional extra).
:func:`pi_memory.semantic.backends.build.build_backend` picks one from the settings' ``backend.type``."""
