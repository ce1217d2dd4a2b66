#!/usr/bin/env bash
# Create .venv (Python >= 3.11) and install pi-memory into it in editable mode.
# Usage: scripts/bootstrap.sh [extras]   e.g. scripts/bootstrap.sh dev
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi
spec="."
[ -n "${1:-}" ] && spec=".[$1]"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e "$spec"
