"""Ids stored before the team server refused credential-looking ids: found and rewritten at every start.

An add under a ``user_id`` / ``agent_id`` / ``run_id`` that the secret scanner reads as a credential is a 400
(:func:`~.rest_requests.check_new_scope`), but rows stored before that check keep the credential as their id:
in results, ``serve export``, ``serve audit`` and ``token list``. :func:`clean_stored_ids` rewrites them.

What is rewritten (every place an id is stored):

* the scope columns (``user_id``, ``project_id``, ``agent_id``) of ``semantic_memories`` and
  ``semantic_history``; ``api_tokens.user_id``; ``project_stores.project_id`` and ``updated_by``;
* ``audit_log``: ``user_id``, ``scope`` (the scope key, ``<user>:project:<run>:agent:<agent>`` or
  ``project:<name>``) and any string of ``detail`` that holds one of the credentials found;
* ``api_tokens.label`` (free text, typed at ``token create``) is redacted as a text is (``[REDACTED:<id>]``).

Decisions
---------
* **When: at every start, not as a one-off migration.** :func:`~.pg_connect.open_pool` calls it right after
  the schema migrations, under the same advisory lock, so ``serve`` and every ``serve`` subcommand (``export``
  first of all) never see an old id. A named migration runs once, but the scanner learns new formats and a
  server of an older version may still write such ids while a team upgrades; a check at every start catches
  both, and a second start changes nothing. It costs one ``SELECT DISTINCT`` over the memories' scope columns
  (their index), and the tokens and project stores (small tables): about 0.1 s at 200,000 memories here; the
  history and the audit log are read only when a credential was found (1.9 s to rewrite one user's 5,000
  memories, 5,000 events and 12,500 audit rows). Their ids are the memories', the tokens' and the project stores' (every
  history event is written with its memory's scope, every audit row with its token's user and the scope or
  project it wrote), so that is where credentials are looked for.
* **The placeholder** is ``redacted-<scanner id>-<12 letters>`` (``redacted-aws_access_key_id-kcpfmbnaodlg``):
  the letters are an HMAC-SHA-256 of the credential under a random key of the database (table
  ``pi_memory_keys``, made once, never exported). So the same credential always becomes the same id, and rows
  that shared a scope still share one; the secret itself is kept nowhere, and a weak password in an id cannot
  be confirmed by hashing guesses against an export. Letters only, no digits: a placeholder after ``token=``
  must not read as a secret itself. Only the credential's part of an id is replaced (``bob-ghp_…`` becomes
  ``bob-redacted-github_token-…``); when the result still reads as a credential or is over
  :data:`MAX_ID_CHARS` characters, the whole id is replaced by the placeholder of the whole id.
* A memory whose text an active memory of its new scope already holds (an older server stored it again after
  a first clean-up) is marked superseded by that memory, with a history event saying why; a project store
  whose new name exists already is merged into it (its entries that the other lacks are appended).
* Rows this cannot reach through the scopes, tokens and project stores (a history event or audit row whose
  memory is gone, a memory id holding a credential) and texts stored before they were redacted (memory
  texts, metadata, sources, history texts, project store entries) are read by :mod:`.pg_sweep`, in the same
  transaction: only the rows written since the last start, all of them once when the scanner changed.
* Everything runs in one transaction: when it fails, nothing was rewritten.

A client still configured with an old id keeps getting the add's 400 ("looks like a credential") and must
pick a plain name; what it stored is kept under the new id, which the start-up lines name.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from psycopg.types.json import Jsonb

from pi_memory import safety
from pi_memory.semantic.backends import pg_sweep
from pi_memory.semantic.backends.pg_schema import LOCK_KEY
from pi_memory.semantic.id_redaction import CleanReport, IdRewriter, placeholder
from pi_memory.semantic.models import Scope, now_iso

KEY_NAME = "id-redaction"
_MERGED = "the same text is stored under the rewritten id (its credential-looking id was rewritten at start)"


def id_key(conn: Any) -> bytes:
    """The database's placeholder key, made the first time it is needed (inside the caller's transaction)."""
    conn.execute("INSERT INTO pi_memory_keys(name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                 (KEY_NAME, secrets.token_hex(32)))
    return bytes.fromhex(conn.execute("SELECT value FROM pi_memory_keys WHERE name = %s", (KEY_NAME,)).fetchone()[0])


def clean_stored_ids(conn: Any) -> CleanReport:
    """Rewrite every stored id that holds a credential (module docstring), in one transaction on ``conn``
    (autocommit). Returns what changed; a database without such ids is read, not written."""
    report = CleanReport()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        triples = conn.execute("SELECT DISTINCT user_id, project_id, agent_id FROM semantic_memories "
                                "ORDER BY 1, 2, 3").fetchall()
        tokens = conn.execute("SELECT id, user_id, label FROM api_tokens ORDER BY id").fetchall()
        stores = conn.execute("SELECT project_id, target, updated_by FROM project_stores ORDER BY 1, 2").fetchall()
        ids = {v for t in triples for v in t} | {t[1] for t in tokens} | {v for s in stores for v in (s[0], s[2])}
        found = sorted(v for v in ids if v and safety.secret_spans(v))
        labels = {tid for tid, _user, label in tokens if label and safety.secret_spans(label)}
        swept = pg_sweep.sweep(conn)
        pg_sweep.clean_store_entries(conn, report)
        if not found and not labels and not swept.anything:
            pg_sweep.save_marks(conn, swept)
            return report
        ids_of = IdRewriter(id_key(conn) if found or swept.anything else b"")
        for value in found:
            ids_of.rewrite(value)
        scopes = _memories(conn, ids_of, [t for t in triples if any(ids_of.rewrite(v) != v for v in t)], report)
        _history(conn, ids_of, found, report)
        _tokens(conn, ids_of, tokens, labels, report)
        scopes.update(_stores(conn, ids_of, [s for s in stores if ids_of.rewrite(s[0]) != s[0]
                                             or (s[2] and ids_of.rewrite(s[2]) != s[2])], report))
        if found:
            _audit(conn, ids_of, found, scopes, report)
        pg_sweep.rewrite_memory_ids(conn, ids_of, swept, report)
        pg_sweep.clean_rows(conn, ids_of, swept, report)
        pg_sweep.save_marks(conn, swept)
    return report


_SCOPE_NAMES = ("user_id", "run_id", "agent_id")  # the memories' scope columns as a request names them


def _scope_key(user: str, project: str, agent: str) -> str | None:
    try:
        return Scope(user_id=user, project_id=project or None, agent_id=agent or None).key
    except ValueError:
        return None


def _memories(conn: Any, ids_of: IdRewriter, triples: list[tuple[str, str, str]],
              report: CleanReport) -> dict[str, tuple[str, list[str]]]:
    """Rewrite the memories' scopes; returns the audit log's scope keys: old key -> (new key, new ids)."""
    scopes: dict[str, tuple[str, list[str]]] = {}
    now = now_iso()
    for old in triples:
        new = tuple(ids_of.rewrite(v) for v in old)
        merged = conn.execute(
            "SELECT o.id, o.text, n.id FROM semantic_memories o JOIN semantic_memories n ON n.hash = o.hash AND "
            "n.status = 'active' AND n.user_id = %s AND n.project_id = %s AND n.agent_id = %s WHERE o.status = "
            "'active' AND o.user_id = %s AND o.project_id = %s AND o.agent_id = %s", (*new, *old)).fetchall()
        for old_id, text, kept in merged:
            conn.execute("UPDATE semantic_memories SET status = 'superseded', superseded_by = %s, superseded_at = %s, "
                         "updated_at = %s WHERE id = %s", (kept, now, now, old_id))
            conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, "
                         "new_text, related_id, reason, at) VALUES (%s,%s,%s,%s,'SUPERSEDE',%s,%s,%s,%s,%s)",
                         (old_id, *old, text, text, kept, _MERGED, now))
        report.merged += len(merged)
        n = conn.execute("UPDATE semantic_memories SET user_id = %s, project_id = %s, agent_id = %s WHERE user_id = %s "
                         "AND project_id = %s AND agent_id = %s", (*new, *old)).rowcount
        report.rows["semantic_memories"] += n
        changed = [(name, v) for name, v, was in zip(_SCOPE_NAMES, new, old, strict=True) if v != was]
        for name, v in changed:
            report.note(v, ids_of.kinds[v], name, "semantic_memories", n)
        old_key, new_key = _scope_key(*old), _scope_key(*new)
        if old_key and new_key:
            scopes[old_key] = (new_key, [v for _name, v in changed])
    return scopes


def _history(conn: Any, ids_of: IdRewriter, found: list[str], report: CleanReport) -> None:
    groups = conn.execute("SELECT user_id, project_id, agent_id FROM semantic_history WHERE user_id = ANY(%s) OR "
                          "project_id = ANY(%s) OR agent_id = ANY(%s) GROUP BY 1, 2, 3",
                          (found, found, found)).fetchall()
    for old in groups:
        new = tuple(ids_of.rewrite(v) for v in old)
        n = conn.execute("UPDATE semantic_history SET user_id = %s, project_id = %s, agent_id = %s WHERE user_id = %s "
                         "AND project_id = %s AND agent_id = %s", (*new, *old)).rowcount
        report.rows["semantic_history"] += n
        for name, v, was in zip(_SCOPE_NAMES, new, old, strict=True):
            if v != was:
                report.note(v, ids_of.kinds[v], name, "semantic_history", n)


def _tokens(conn: Any, ids_of: IdRewriter, tokens: list[tuple[str, str, str | None]], labels: set[str],
            report: CleanReport) -> None:
    """Rewrite the tokens' users; redact the ``labels`` (token ids) that hold a credential."""
    for tid, user, label in tokens:
        new = ids_of.rewrite(user)
        if new == user and tid not in labels:
            continue
        conn.execute("UPDATE api_tokens SET user_id = %s, label = %s WHERE id = %s",
                     (new, safety.redact(label) if tid in labels else label, tid))
        report.rows["api_tokens"] += 1
        if new != user:
            report.note(new, ids_of.kinds[new], "user_id", "api_tokens", 1)
            report.ids[new].tokens.append(tid)
    report.labels = len(labels)


def _stores(conn: Any, ids_of: IdRewriter, stores: list[tuple[str, str, str | None]],
            report: CleanReport) -> dict[str, tuple[str, list[str]]]:
    """Rewrite the project stores' names and writers; returns the audit scope keys of renamed stores."""
    scopes: dict[str, tuple[str, list[str]]] = {}
    for project, target, by in stores:
        name, writer = ids_of.rewrite(project), ids_of.rewrite(by) if by else by
        there = conn.execute("SELECT entries FROM project_stores WHERE project_id = %s AND target = %s",
                             (name, target)).fetchone() if name != project else None
        if there is not None:  # an older server wrote under the old name after a first clean-up: merge
            mine = conn.execute("DELETE FROM project_stores WHERE project_id = %s AND target = %s RETURNING entries",
                                (project, target)).fetchone()[0]
            conn.execute("UPDATE project_stores SET entries = %s, version = version + 1, updated_at = %s WHERE "
                         "project_id = %s AND target = %s",
                         (Jsonb(list(there[0]) + [e for e in mine if e not in there[0]]), now_iso(), name, target))
        else:
            conn.execute("UPDATE project_stores SET project_id = %s, updated_by = %s WHERE project_id = %s AND "
                         "target = %s", (name, writer, project, target))
        report.rows["project_stores"] += 1
        for where, new, old in (("project store", name, project), ("user_id", writer, by)):
            if new != old:
                report.note(new, ids_of.kinds[new], where, "project_stores", 1)
        if name != project:
            scopes[f"project:{project}"] = (f"project:{name}", [name])
    return scopes


def _audit(conn: Any, ids_of: IdRewriter, found: list[str], scopes: dict[str, tuple[str, list[str]]],
           report: CleanReport) -> None:
    """Rewrite the audit rows: ``detail`` where it holds a credential found, then ``user_id`` and ``scope``."""
    needles = sorted(ids_of.secrets | set(found))
    in_json = [json.dumps(s, ensure_ascii=False)[1:-1] for s in needles]
    done: list[int] = []
    for row_id, user, scope, detail in conn.execute(
            "SELECT id, user_id, scope, detail FROM audit_log WHERE EXISTS (SELECT 1 FROM unnest(%s::text[]) s "
            "WHERE strpos(detail::text, s) > 0)", (in_json,)).fetchall():
        new_user, new_scope, in_scope = _audit_ids(ids_of, scopes, user, scope)
        conn.execute("UPDATE audit_log SET user_id = %s, scope = %s, detail = %s WHERE id = %s",
                     (new_user, new_scope, Jsonb(ids_of.rewrite_json(detail)), row_id))
        done.append(row_id)
        report.rows["audit_log"] += 1
        for new in in_scope:
            report.note(new, ids_of.kinds[new], None, "audit_log", 1)
    groups = conn.execute(
        "SELECT user_id, scope FROM audit_log WHERE (user_id = ANY(%s) OR scope = ANY(%s) OR EXISTS (SELECT 1 FROM "
        "unnest(%s::text[]) s WHERE strpos(scope, s) > 0)) AND NOT (id = ANY(%s)) GROUP BY 1, 2",
        (found, list(scopes), needles, done)).fetchall()
    for user, scope in groups:
        new_user, new_scope, in_scope = _audit_ids(ids_of, scopes, user, scope)
        if (new_user, new_scope) == (user, scope):
            continue  # a scope that holds a credential's text without being one (the scanner says so)
        n = conn.execute("UPDATE audit_log SET user_id = %s, scope = %s WHERE user_id = %s AND scope = %s AND NOT "
                         "(id = ANY(%s))", (new_user, new_scope, user, scope, done)).rowcount
        report.rows["audit_log"] += n
        for new in in_scope:
            report.note(new, ids_of.kinds[new], None, "audit_log", n)


def _audit_ids(ids_of: IdRewriter, scopes: dict[str, tuple[str, list[str]]], user: str,
               scope: str) -> tuple[str, str, set[str]]:
    """An audit row's new user and scope, and the rewritten ids they hold (for the report)."""
    new_user = ids_of.rewrite(user)
    new_scope, in_scope = scopes[scope] if scope in scopes else (ids_of.rewrite(scope), [])
    return new_user, new_scope, {*in_scope, *([new_user] if new_user != user else [])}


__all__ = ["CleanReport", "IdRewriter", "clean_stored_ids", "placeholder"]
