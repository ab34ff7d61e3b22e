#!/usr/bin/env bash
# Quick start: set everything up, then run the whole test suite against the real Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# passk's images built from other sources than this checkout's (each change to containers/ retags them all;
# kept, they filled CI's disk): removed, and with them their instance snapshots
passk images prune | tail -1 >&2
# The language images (Debian's toolchains on passk's image: a few minutes the first time, then cached)
base="${PASSK_BASE_IMAGE:-passk-base:bookworm}"
passk images build --base-image "$base" --language all >&2
# The reference docs: a broken link, anchor or include, or a page left out of the nav, fails here
site="$(mktemp -d)"
if ! python3 -m mkdocs build --strict --site-dir "$site/html" > "$site/log" 2>&1; then
  grep -v "^INFO" "$site/log" >&2
  echo "[test] the docs do not build (mkdocs build --strict)" >&2
  exit 1
fi
rm -rf "$site"
# The linter, with the project's own rules (pyproject.toml [tool.ruff])
python3 -m ruff check harness containers scripts tests
python3 -m pytest -q -p no:cacheprovider "$@"
