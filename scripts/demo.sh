#!/usr/bin/env bash
# Quick start: set everything up, then run passk on the bundled demo problems.
# Output goes to runs/demo (resumed if it exists; delete it for a fresh run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out="${1:-runs/demo}"
passk evaluate --problems problems/demo/problems.jsonl --samples problems/demo/samples.jsonl \
  --out "$out" --k 1,2,4 --timeout-s 2 --no-progress
passk report "$out"
echo
echo "demo results: $out/results.jsonl, $out/score.json, $out/manifest.json, $out/report.html"
