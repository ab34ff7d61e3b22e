#!/usr/bin/env bash
# Quick start: set everything up, then run the whole test suite against the real Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The language images (Debian's toolchains on passk's image: a few minutes the first time, then cached)
base="${PASSK_BASE_IMAGE:-passk-base:bookworm}"
passk images build --base-image "$base" --language all >&2
python3 -m pytest -q -p no:cacheprovider "$@"
