"""Filter values of the search tools: times (``since``/``until``), projects, roles, targets, categories.

Unlike the query text, a filter value can be plainly invalid; :class:`SearchInputError` then says which values
are accepted, in words a person and a model can act on.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROLES = ("user", "assistant", "tool", "system", "summary")
TARGETS = ("memory", "user", "project", "failure")
CATEGORIES = ("failure", "correction", "insight", "preference", "convention", "tool-quirk")
_RELATIVE = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_HEX_ID = re.compile(r"^[0-9a-f]{12}$")


class SearchInputError(ValueError):
    """A filter value (not the query text) is invalid; the message says which values are accepted."""


def parse_time(value: str | date | datetime | None, upper: bool = False) -> str | None:
    """A ``since``/``until`` value as an ISO UTC string comparable with stored timestamps.

    Accepts ``datetime``/``date`` objects, ISO dates and times (``2026-11-29``, ``2026-11-29T13:28``, with
    ``Z`` or an offset), ages (``30m``, ``12h``, ``7d``, ``2w``: that long before now) and ``now``. With ``upper`` a
    bare date means the end of that day.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        moment = _moment(value, upper)
    except OverflowError:  # an age of 99999999d, 9999-12-31 in a zone west of UTC: before year 1 or after 9999
        shown = str(value).strip()
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise SearchInputError(
            f"The time {shown!r} is outside the years 1 to 9999 this index can compare. Use an ISO date or "
            "time such as 2026-11-29, or an age such as 7d or 2w."
        ) from None
    return stored_time(moment)


def stored_time(moment: datetime) -> str:
    """An aware ``moment`` in the form every stored timestamp has, ``YYYY-MM-DDTHH:MM:SS.mmmZ`` in UTC, so they
    compare as text; the year padded to four digits (strftime writes 999 for the year 999, after 2026 as text)."""
    moment = moment.astimezone(UTC)
    return f"{moment.year:04d}-" + moment.strftime("%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _moment(value: str | date | datetime, upper: bool) -> datetime:
    """``value`` as an aware UTC datetime (:func:`parse_time`); ``OverflowError`` past the years 1-9999."""
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day, tzinfo=UTC) + (
            timedelta(days=1, milliseconds=-1) if upper else timedelta()
        )
    else:
        text = str(value).strip()
        rel = _RELATIVE.match(text)
        if text.lower() == "now":  # what the options' help calls their default
            moment = datetime.now(UTC)
        elif rel:
            if len(rel.group(1)) > 9:  # more than any age back to the year 1 (and int() refuses 4,300 digits)
                raise OverflowError(text)
            moment = datetime.now(UTC) - timedelta(**{_UNITS[rel.group(2).lower()]: int(rel.group(1))})
        else:
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            except ValueError:
                shown = text if len(text) <= 60 else text[:57] + "..."
                raise SearchInputError(
                    f"Cannot read the time {shown!r}. Use an ISO date or time such as 2026-11-29 or "
                    "2026-11-29T13:28:00Z, an age such as 30m, 12h, 7d or 2w, or now."
                ) from None
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            if upper and len(text) <= 10:
                moment += timedelta(days=1, milliseconds=-1)
    return moment.astimezone(UTC)


def project_ids(conn: sqlite3.Connection, project: str | Path) -> list[str]:
    """Project ids meant by ``project``: an id as stored, a path (mapped to its repository root) or a name."""
    from pi_memory.project import project_id, project_root

    text = str(project).strip()
    if _HEX_ID.match(text):
        return [text]
    if isinstance(project, Path) or text.startswith(("/", "~", ".")) or "/" in text or "\\" in text:
        return [project_id(project_root(Path(text)))]
    rows = conn.execute("SELECT DISTINCT project_id FROM sessions WHERE project_name = ?", (text,))
    return [r[0] for r in rows if r[0]] or [text]


SHOWN_PROJECTS = 10  # projects an unknown-project note names (the ones with the newest sessions)


def unknown_project(conn: sqlite3.Connection, project: str | Path) -> str | None:
    """Why a session search of ``project`` found nothing when no indexed session belongs to it (a name or path
    that is not a project here: ``../../etc``), naming the projects that have sessions; ``None`` when some do.
    Names and folders come from transcripts: shown quoted (escaped, redacted, cut), and left out when they read
    like an instruction."""
    from pi_memory import safety

    ids = project_ids(conn, project)
    if conn.execute(f"SELECT 1 FROM sessions WHERE project_id IN ({','.join('?' * len(ids))}) LIMIT 1",
                    ids).fetchone():
        return None
    rows = conn.execute("SELECT project_name, project_root FROM sessions WHERE project_id IS NOT NULL "
                        "GROUP BY project_id ORDER BY max(started_at) DESC").fetchall()
    shown = [f"{safety.quoted_name(name or '?')} in {safety.quoted_name(root, 120)}" if root else
             safety.quoted_name(name or "?") for name, root in rows if not safety.scan_threats(f"{name} {root}")]
    head = f"No indexed session belongs to the project {safety.quoted_name(str(project))}, so nothing matched. "
    if not shown:
        return head + "Leave project out to search every session, or give 'current' for this project."
    more = f" and {len(shown) - SHOWN_PROJECTS:,} more" if len(shown) > SHOWN_PROJECTS else ""
    return (head + f"Projects with indexed sessions: {'; '.join(shown[:SHOWN_PROJECTS])}{more}. Give one of "
            "these names or folders, 'current' for this project, or leave project out to search every session.")


def choice(value: str | None, allowed: Sequence[str], name: str) -> str | None:
    if value is None or value == "":
        return None
    if value not in allowed:
        raise SearchInputError(f"Unknown {name} {value!r}; use one of: {', '.join(allowed)}.")
    return value
