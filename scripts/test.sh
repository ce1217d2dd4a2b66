#!/usr/bin/env bash
# Quickstart 2: set everything up and run the whole test suite, end-to-end tests on the real pi CLI included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh dev
bash scripts/setup-e2e.sh
.venv/bin/ruff check src tests benchmarks
exec .venv/bin/python -m pytest "$@"
