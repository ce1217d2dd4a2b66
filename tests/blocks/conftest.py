"""The block tests: ``tests/`` put on ``sys.path`` here for their shared helpers (``cli_homes``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: cli_homes
