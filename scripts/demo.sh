#!/usr/bin/env bash
# Quick start: set everything up, then run passk on the bundled demo problems.
#   bash scripts/demo.sh            the HumanEval-format demo set, into runs/demo
#   bash scripts/demo.sh --all      every shipped set (one per problem format and per language, and the
#                                   judge's: Kattis packages, Codeforces and Code-Contests-Plus rows), into
#                                   runs/demo-<set> (the language images are built the first time: minutes)
#   bash scripts/demo.sh DIR        the demo set into DIR
# The default output directories (runs/demo, runs/demo-<set>) are the demo's own: each run starts them
# afresh (a run made by an older passk image could not be resumed). A DIR you name is resumed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

run_set() {  # run_set NAME OUT [extra evaluate options...]
  local name="$1" out="$2"; shift 2
  local problems="problems/$name/problems.jsonl" samples="problems/$name/samples.jsonl"
  [ -d "problems/$name/problems" ] && problems="problems/$name/problems"
  [ -d "problems/$name/samples" ] && samples="problems/$name/samples"
  [ -f "problems/$name/samples.json" ] && samples="problems/$name/samples.json"
  echo "== $name: $problems + $samples -> $out"
  rm -rf "$out"
  passk evaluate --problems "$problems" --samples "$samples" --out "$out" \
    --k 1,2 --timeout-s 2 --no-progress "$@"
  passk report "$out" >/dev/null
}

if [ "${1:-}" = "--all" ]; then
  for name in demo mbpp multipl-e apps codecontests livecodebench bigcodebench native humanevalplus mbppplus \
              lang-cpp lang-rust lang-go lang-java lang-javascript lang-typescript; do
    extra=()
    case "$name" in multipl-e|lang-*) extra=(--stop-tokens) ;; bigcodebench) extra=(--bigcodebench-timeout-s 2) ;; esac
    run_set "$name" "runs/demo-$name" "${extra[@]}"
    echo
  done
  # the judge: a Kattis contest directory judged against its submissions' directories, and judged rows
  echo "== kattis: problems/kattis (its own submissions) -> runs/demo-kattis"
  rm -rf runs/demo-kattis
  passk verify problems/kattis --out runs/demo-kattis --k 1 --no-progress
  passk report runs/demo-kattis >/dev/null
  for name in codeforces code-contests-plus; do
    run_set "$name" "runs/demo-$name"
    echo
  done
  echo "results: runs/demo-<set>/{results.jsonl,score.json,manifest.json,report.html}"
  exit 0
fi

out="${1:-runs/demo}"
[ -z "${1:-}" ] && rm -rf "$out"
passk evaluate --problems problems/demo/problems.jsonl --samples problems/demo/samples.jsonl \
  --out "$out" --k 1,2,4 --timeout-s 2 --no-progress
passk report "$out"
echo
echo "demo results: $out/results.jsonl, $out/score.json, $out/manifest.json, $out/report.html"
