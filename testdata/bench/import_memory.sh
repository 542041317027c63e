#!/usr/bin/env bash
# Peak memory (max RSS) of `memctl import` for 10k, 100k and 1M small
# notes, each into a fresh memory, against the floor of `memctl version`
# measured in the same run. Also checks that `memctl lint` still reads the
# result. Each size runs RUNS times (default 3; the median RSS is shown),
# since the garbage collector's timing moves the peak by ±20% on a busy
# machine. Usage: [RUNS=n] testdata/bench/import_memory.sh [path/to/memctl] [sizes...]
set -euo pipefail
memctl=$(realpath "${1:-./memctl}")
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
runs=${RUNS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-importmem.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost

# rss_kb CMD... : runs CMD, prints "max-RSS-KiB elapsed-seconds"
rss_kb() {
  /usr/bin/time -f '%M %e' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; return 1; }
  cat "$work/time"
}

read -r floor _ < <(rss_kb "$memctl" version)
printf '%-36s %12s %9s %8s %-22s %s\n' "command" "max RSS KiB" "x floor" "seconds" "topic files" "readable after"
printf '%-36s %12d %9.1f %8s %-22s %s\n' "memctl version (floor)" "$floor" 1 "-" "-" "-"
for n in "${sizes[@]}"; do
  python3 - "$work/in.jsonl" "$n" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for i in range(n):
        f.write(json.dumps({"content": f"Imported note number {i} about subject {i % 977} for the import memory benchmark", "category": "note", "source": "bench"}) + "\n")
PY
  : >"$work/samples"
  for ((r = 0; r < runs; r++)); do
    rm -rf "$work/mem"
    "$memctl" init "$work/mem" >/dev/null
    MEMCTL_DIR=$work/mem rss_kb "$memctl" import "$work/in.jsonl" >>"$work/samples"
  done
  read -r rss secs < <(sort -n "$work/samples" | sed -n "$(( (runs + 1) / 2 ))p")
  files=$(ls "$work/mem/topics" | wc -l)
  big=$(find "$work/mem" -name '*.md' -not -path '*/.git/*' -printf '%s\n' | sort -n | tail -1)
  readable=yes
  MEMCTL_DIR=$work/mem "$memctl" stats >/dev/null 2>&1 || readable="NO (stats fails)"
  printf '%-36s %12d %9.1f %8s %-22s %s\n' "import $n notes (median of $runs)" "$rss" "$(echo "$rss / $floor" | bc -l)" "$secs" "$files (largest $((big / 1048576)) MiB)" "$readable"
done
