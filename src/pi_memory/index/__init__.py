"""The session and memory index: one SQLite file (``<data_dir>/index.sqlite3``) with FTS5 word indexes.

* :func:`open_index` -- open/create/migrate the database, repair it once if corrupt (:mod:`.db`);
* :func:`index_paths`, :func:`reindex`, :func:`prune` -- read session transcripts incrementally (:mod:`.indexer`);
* :func:`plan_query` -- how a query is read for the word indexes (:mod:`.query`); ranking them is the engine's
  (:mod:`pi_memory.retrieval`: ``session_search``, ``memory_search``, recall);
* :func:`redaction_progress` -- credentials are stored redacted; an old index is redacted at open
  (:mod:`.redaction`); :func:`last_repair` / :func:`describe_repair` -- the record a corruption repair leaves;
* :func:`find_message`, :func:`conversation_around` -- the turns around one message (:mod:`.conversation`);
* :func:`sync_store`, :func:`sync_markdown`, :func:`add_extended` -- the memories mirror and the extended
  store (:mod:`.mirror`).

The database is derived from the Markdown stores and the session files, except the extended store and the
memories' usage counts, which live only here (see :mod:`.mirror`).
"""

from pi_memory._lazy import lazy_exports

# Names load their module on first use, so `from pi_memory.index.db import open_index` (a hook's recall) does not
# import the readers, the mirror and the search layer with it.
__getattr__, __dir__ = lazy_exports(__name__, {
    ".anchors": "AnchorResult anchor_search",
    ".conversation": "conversation_around find_message",
    ".filters": "SearchInputError parse_time",
    ".db": "INDEX_FILE IndexUnavailableError busy_wait index_path is_corruption migrate open_index transaction",
    ".indexer": "IndexStats clear_sessions index_paths prune reindex",
    ".mirror": "MirrorEntry MirrorInputError SyncStats add_extended list_memories remove_memory sync_markdown "
               "sync_store",
    ".query": "QueryPlan plan_query",
    ".redaction": "redaction_progress",
    ".results": "MemoryHit SearchResult SessionHit",
    ".salvage": "describe_repair last_repair repairs",
})

__all__ = [
    "AnchorResult",
    "anchor_search",
    "INDEX_FILE",
    "IndexStats",
    "IndexUnavailableError",
    "MemoryHit",
    "MirrorEntry",
    "MirrorInputError",
    "QueryPlan",
    "SearchInputError",
    "SearchResult",
    "SessionHit",
    "SyncStats",
    "add_extended",
    "clear_sessions",
    "conversation_around",
    "describe_repair",
    "find_message",
    "index_path",
    "index_paths",
    "is_corruption",
    "last_repair",
    "list_memories",
    "migrate",
    "open_index",
    "parse_time",
    "plan_query",
    "prune",
    "redaction_progress",
    "reindex",
    "remove_memory",
    "repairs",
    "sync_markdown",
    "sync_store",
    "transaction",
]
