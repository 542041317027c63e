#!/usr/bin/env bash
# inject_cache.sh: a cached inject and the first inject after a one-line
# hand edit, for several memctl binaries in one run (interleaved, so that
# a noisy machine weighs on all alike), on one memory of N entries in 40
# topic files (as scale.sh builds it), each binary on its own copy.
#
# Per binary, medians of ROUNDS (default 9) of: memctl version, a cached
# `inject --task "subject 42 widget"`, and the same inject after a
# one-line edit of a topic file: wall ms, peak RSS (KiB, /usr/bin/time)
# and user+system CPU ms; then cached/version and edited/cached.
# Usage: [ROUNDS=n] testdata/bench/inject_cache.sh N BINARY...
set -euo pipefail
n=$1
shift
rounds=${ROUNDS:-9}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-injcache.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
export MEMCTL_NO_UPDATE_CHECK=1
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
python3 - "$work/seed.jsonl" "$n" <<'PY'
import json, sys
jpath, n = sys.argv[1], int(sys.argv[2])
topics = [f"topic-{i}" for i in range(40)]
with open(jpath, "w") as j:
    for i in range(n):
        row = {"content": f"Seed note {i} about subject {i % 977} and widget {i % 31} for the scale benchmark",
               "category": "note", "topic": topics[i % len(topics)], "source": "bench"}
        j.write(json.dumps(row) + "\n")
PY
"${bins[0]}" init "$work/base" >/dev/null
MEMCTL_DIR=$work/base "${bins[0]}" import "$work/seed.jsonl" >/dev/null
"${bins[0]}" -C "$work/base" consolidate --no-llm >/dev/null 2>&1
rm -rf "$work/base/.memctl/cache"
task="subject 42 widget"
for i in "${!bins[@]}"; do
  cp -a "$work/base" "$work/m$i"
  "${bins[$i]}" -C "$work/m$i" inject --task "$task" >/dev/null 2>&1 # builds the cache
  : >"$work/r$i"
done
# run CMD...: "wall-ms max-RSS-KiB cpu-ms"
run() {
  local s e
  s=$(date +%s%N)
  /usr/bin/time -f '%M %U %S' -o "$work/time" "$@" >/dev/null 2>&1
  e=$(date +%s%N)
  echo "$(((e - s) / 1000000)) $(tail -1 "$work/time" | awk '{printf "%d %d", $1, ($2 + $3) * 1000}')"
}
for r in $(seq "$rounds"); do
  for i in "${!bins[@]}"; do
    b=${bins[$i]} m=$work/m$i
    echo "version $(run "$b" version)" >>"$work/r$i"
    echo "cached $(run "$b" -C "$m" inject --task "$task")" >>"$work/r$i"
    topic=$(ls "$m/topics" | head -1)
    sed -i "0,/for the scale benchmark/s//for the scale benchmark, edited $r/" "$m/topics/$topic"
    echo "edited $(run "$b" -C "$m" inject --task "$task")" >>"$work/r$i"
  done
done
med() { grep "^$2 " "$1" | awk -v c="$3" '{print $c}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
printf '### %d entries (medians of %d; wall ms, peak RSS MiB, CPU ms)\n\n' "$n" "$rounds"
echo "| binary | memctl version | cached inject | after a one-line edit | cached / version | edited / cached |"
echo "|---|---|---|---|---|---|"
for i in "${!bins[@]}"; do
  f=$work/r$i
  v=$(med "$f" version 2) c=$(med "$f" cached 2) e=$(med "$f" edited 2)
  echo "| $(basename "${bins[$i]}") | $v ms | $c ms, $(($(med "$f" cached 3) / 1024)) MiB, $(med "$f" cached 4) ms CPU | $e ms, $(($(med "$f" edited 3) / 1024)) MiB, $(med "$f" edited 4) ms CPU | $(ratio "$c" "$v")× | $(ratio "$e" "$c")× |"
done
