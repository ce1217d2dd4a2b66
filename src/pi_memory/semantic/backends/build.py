"""Which semantic backend the settings name, built: :func:`build_backend` (``backend.type``: ``embedded``, the
default on the search index; ``self-hosted``, a ``pi-memory serve`` or Mem0 OSS server; ``platform``, Mem0's
cloud). Re-exported by :mod:`pi_memory.semantic.service`, whose :func:`~pi_memory.semantic.service.open_semantic`
calls it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_memory.semantic.backend import SemanticBackend
from pi_memory.semantic.config import BackendSettings


def build_backend(settings: BackendSettings, *, data_dir: Path | None = None, embedder: Any = None,
                  conn: Any = None, index_check: bool | None = None,
                  migrate_wait: float | None = None) -> SemanticBackend:
    """The backend ``settings.type`` names. ``embedded`` needs ``conn`` or ``data_dir`` (the index) and an
    embedder (``migrate_wait``: :class:`~pi_memory.semantic.embedded.EmbeddedBackend`'s); ``self-hosted`` reads
    ``baseUrl``, ``apiKey`` (bearer token), ``requestTimeoutMs`` and ``compositeUserId``; ``platform`` reads
    ``apiKey``, ``host``, ``orgId`` and ``projectId`` (Mem0's)."""
    opts = settings.options
    if settings.type == "self-hosted":
        from pi_memory.semantic.backends.rest_client import RestBackend

        timeout = float(opts.get("requestTimeoutMs", 30_000)) / 1000.0
        return RestBackend(str(opts.get("baseUrl") or ""), opts.get("apiKey"), timeout,
                           composite_user_id=bool(opts.get("compositeUserId", False)))
    if settings.type == "platform":
        from pi_memory.semantic.backends.platform import PlatformBackend

        return PlatformBackend(opts.get("apiKey"), host=opts.get("host") or opts.get("baseUrl"),
                               org_id=opts.get("orgId"), mem0_project_id=opts.get("projectId"))
    from pi_memory.semantic.embedded import EmbeddedBackend

    own = conn is None
    if own:
        from pi_memory.index import open_index

        if data_dir is None:
            raise ValueError("the embedded backend needs the data directory (or an open index connection)")
        conn = open_index(data_dir, check=index_check)
    if embedder is None:
        from pi_memory.embed import get_embedder

        embedder = get_embedder(None)
    weights = opts.get("weights") if isinstance(opts.get("weights"), dict) else None
    try:
        return EmbeddedBackend(conn, embedder, weights=weights, migrate_wait=migrate_wait)
    except BaseException:
        if own:  # the connection opened here (another process holding the index stopped the migrations)
            conn.close()
        raise
