#!/usr/bin/env bash
# Quick start: set everything up, then run the whole test suite against the real Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m pytest -q -p no:cacheprovider "$@"
