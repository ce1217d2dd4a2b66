"""Fixtures of the CLI tests: ``team_socket``, a team server on 127.0.0.1 that hangs, answers or dribbles
(``tests/team_sockets.py``, put on ``sys.path`` here for the test modules too)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: team_sockets, read_only_folder

from team_sockets import team_socket  # noqa: E402,F401

