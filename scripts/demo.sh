#!/usr/bin/env bash
# Quickstart 1: set everything up and run the main job -- the real pi CLI remembering across sessions
# through pi-memory, against a scripted model server on 127.0.0.1 (no API key, no network at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/setup-e2e.sh
exec .venv/bin/pi-memory demo
