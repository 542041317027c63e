#!/usr/bin/env bash
# Whole-process timings of memctl, each reported against the process floor
# (`memctl version`) measured in the same run, interleaved, so a noisy
# machine shifts both. Usage: testdata/bench/process.sh [path/to/memctl] [runs]
set -euo pipefail
memctl=$(realpath "${1:-./memctl}")
runs=${2:-30}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost MEMCTL_DIR=$work/mem
"$memctl" init "$work/mem" >/dev/null

# now_ns prints a monotonic-enough wall clock in nanoseconds.
now_ns() { date +%s%N; }

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print int(NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# time_cmd LABEL CMD... : runs CMD once, prints elapsed microseconds
time_us() { local t0 t1; t0=$(now_ns); "$@" >/dev/null 2>&1; t1=$(now_ns); echo $(( (t1 - t0) / 1000 )); }

declare -A samples
for ((i = 0; i < runs; i++)); do
  samples[version]+="$(time_us "$memctl" version) "
  samples[add]+="$(time_us "$memctl" add "bench candidate $i" --category fact) "
done
floor=$(echo ${samples[version]} | tr ' ' '\n' | median)
add=$(echo ${samples[add]} | tr ' ' '\n' | median)
printf '%-34s %10s %8s\n' "command (median of $runs)" "µs" "x floor"
printf '%-34s %10d %8.2f\n' "memctl version (process floor)" "$floor" 1
printf '%-34s %10d %8.2f\n' "memctl add (one candidate)" "$add" "$(echo "$add / $floor" | bc -l)"

# import of 10,000 entries (one commit), then list and lint over them
python3 - "$work/import.jsonl" <<'PY'
import json, sys
cats = ["fact", "incident", "lesson", "note", "decision", "preference", "constraint"]
with open(sys.argv[1], "w") as f:
    for i in range(10000):
        c = cats[i % len(cats)]
        rec = {"content": f"Bench entry {i}: the report API p99 was {i % 900} ms after change {i}", "category": c,
               "source": "tool", "created_at": f"2026-01-{i % 28 + 1:02d}T10:00:00Z", "refs": [f"D{i % 30}:{i % 50}"]}
        if c in ("fact", "incident", "lesson", "note"):
            rec["topic"] = f"topic-{i % 40}"
        else:
            rec["topic"] = "" if i % 50 == 0 else f"core-overflow-{i % 5}"
        f.write(json.dumps(rec) + "\n")
PY
imp=$(time_us "$memctl" import "$work/import.jsonl")
floor2=$(for i in 1 2 3 4 5; do time_us "$memctl" version; done | median)
lst=$(for i in 1 2 3 4 5; do time_us "$memctl" list --json; done | median)
lnt=$(for i in 1 2 3 4 5; do time_us "$memctl" lint; done | median)
printf '%-34s %10d %8.1f\n' "memctl import (10,000 entries)" "$imp" "$(echo "$imp / $floor2" | bc -l)"
printf '%-34s %10d %8.1f\n' "memctl list --json (10,000)" "$lst" "$(echo "$lst / $floor2" | bc -l)"
printf '%-34s %10d %8.1f\n' "memctl lint (10,000)" "$lnt" "$(echo "$lnt / $floor2" | bc -l)"
