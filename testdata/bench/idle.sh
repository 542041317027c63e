#!/usr/bin/env bash
# An idle `memctl consolidate` (empty queue, as cron runs it) in memories of
# SIZES entries (default "30000 300000"), each binary in turn, against the
# same run's `memctl version` (process start, the floor). Prints the median
# milliseconds and the ratio to the floor. Usage:
#   [ROUNDS=n] [SIZES="a b"] testdata/bench/idle.sh memctl [other-memctl]
set -euo pipefail
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
rounds=${ROUNDS:-7}
sizes=${SIZES:-"30000 300000"}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-idle.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in $sizes; do
  python3 - "$work/seed.jsonl" "$n" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
topics = [f"topic-{i}" for i in range(40)]
with open(path, "w") as f:
    for i in range(n):
        f.write(json.dumps({"content": f"Seed note {i} about subject {i % 97} for the idle benchmark", "category": "note", "topic": topics[i % len(topics)], "source": "bench"}) + "\n")
PY
  rm -rf "$work/m"
  "${bins[0]}" init "$work/m" >/dev/null
  "${bins[0]}" -C "$work/m" import "$work/seed.jsonl" >/dev/null
  "${bins[0]}" -C "$work/m" consolidate --no-llm >/dev/null
  : >"$work/floor"
  for b in "${bins[@]}"; do : >"$work/t.$(basename "$b")"; done
  for r in $(seq "$rounds"); do
    ms "${bins[0]}" version >>"$work/floor"
    for b in "${bins[@]}"; do ms "$b" -C "$work/m" consolidate --no-llm >>"$work/t.$(basename "$b")"; done
  done
  f=$(median <"$work/floor")
  for b in "${bins[@]}"; do
    m=$(median <"$work/t.$(basename "$b")")
    awk -v n="$n" -v b="$(basename "$b")" -v m="$m" -v f="$f" 'BEGIN {printf "%s: idle consolidate at %d entries: %d ms, %.1fx memctl version (%d ms)\n", b, n, m, m / f, f}'
  done
done
