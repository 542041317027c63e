#!/usr/bin/env bash
# scale.sh: the results page of issue 25 ("cost follows the work asked, not
# the size of the memory"). For memories of SIZES entries (default "30000
# 300000"; add 1000000 for the full table, which takes minutes and GBs), it
# measures, in one run, each figure next to a baseline of the same run:
#
#   idle consolidate (empty queue, as cron runs it) ... memctl version
#   consolidate --no-llm of 20 queued candidates ..... memctl version, git commit
#   peak memory of stats, lint, list --json, import .. memctl version
#   import of the memory's entries ................... SQLite FTS5 loading the same rows
#   first inject after a one-line hand edit .......... a cached inject
#   a cached inject .................................. memctl version
#   search of a word (ripgrep where installed) ....... rg over the same files
#
# Times are medians of ROUNDS runs (default 5); memory is the peak RSS
# (/usr/bin/time). The last tables give each figure at each larger size
# as a ratio to the smallest (the issue's "≤ 2.5× from 30k to 300k").
# Usage: [ROUNDS=n] [SIZES="a b c"] testdata/bench/scale.sh [path/to/memctl]
set -euo pipefail
memctl=$(realpath "${1:-./memctl}")
rounds=${ROUNDS:-5}
sizes=${SIZES:-"30000 300000"}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
export MEMCTL_NO_UPDATE_CHECK=1

# run CMD...: runs CMD and prints "milliseconds max-RSS-KiB".
run() {
  local s e
  s=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    echo "scale.sh: $* failed:" >&2
    cat "$work/stderr" >&2
    return 1
  }
  e=$(date +%s%N)
  echo "$(((e - s) / 1000000)) $(tail -1 "$work/time")"
}
# med FILE COLUMN: the median of a column.
med() { awk -v c="$2" '{print $c}' "$1" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# rounds NAME CMD...: runs CMD ROUNDS times into $work/NAME.
rounds() {
  local name=$1
  shift
  : >"$work/$name"
  for _ in $(seq "$rounds"); do run "$@" >>"$work/$name"; done
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

declare -A fig
for n in $sizes; do
  echo "== $n entries" >&2
  python3 - "$work/seed.jsonl" "$work/seed.csv" "$n" <<'PY'
import csv, json, sys
jpath, cpath, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
topics = [f"topic-{i}" for i in range(40)]
with open(jpath, "w") as j, open(cpath, "w", newline="") as c:
    w = csv.writer(c)
    for i in range(n):
        row = {"content": f"Seed note {i} about subject {i % 977} and widget {i % 31} for the scale benchmark",
               "category": "note", "topic": topics[i % len(topics)], "source": "bench"}
        j.write(json.dumps(row) + "\n")
        w.writerow([row["content"], row["category"], row["topic"]])
PY
  rm -rf "$work/m" "$work/db"
  "$memctl" init "$work/m" >/dev/null
  read -r imp_ms imp_kb < <(MEMCTL_DIR=$work/m run "$memctl" import "$work/seed.jsonl")
  read -r sql_ms _ < <(run sqlite3 "$work/db" "create virtual table notes using fts5(content, category, topic)" ".mode csv" ".import $work/seed.csv notes")
  "$memctl" -C "$work/m" consolidate --no-llm >/dev/null 2>&1
  "$memctl" -C "$work/m" inject --task "subject 42" >/dev/null 2>&1 # builds the cache
  # builds consolidate's match cache (a binary without --full fails here, harmlessly)
  "$memctl" -C "$work/m" consolidate --no-llm --full >/dev/null 2>&1 || true

  rounds version "$memctl" version
  rounds idle "$memctl" -C "$work/m" consolidate --no-llm
  : >"$work/twenty"
  for r in $(seq "$rounds"); do
    for k in $(seq 20); do "$memctl" -C "$work/m" add "Queued note $r-$k about subject $((k * 7)) and widget $k, round $r" -c note >/dev/null 2>&1; done
    run "$memctl" -C "$work/m" consolidate --no-llm >>"$work/twenty"
  done
  rm -rf "$work/g" && git clone -q "$work/m" "$work/g"
  : >"$work/gitcommit"
  for r in $(seq "$rounds"); do
    echo "- a line of round $r" >>"$work/g/MEMORY.md"
    run git -C "$work/g" commit -q -am "round $r" >>"$work/gitcommit"
  done
  rounds stats "$memctl" -C "$work/m" stats
  rounds lint "$memctl" -C "$work/m" lint
  rounds list "$memctl" -C "$work/m" list --json
  # The consolidate runs above changed the files: the first inject rebuilds
  # the cache (stats, reading file by file, no longer does it on the way).
  "$memctl" -C "$work/m" inject --task "subject 42 widget" >/dev/null 2>&1
  rounds inject "$memctl" -C "$work/m" inject --task "subject 42 widget"
  : >"$work/edited"
  topic=$(ls "$work/m/topics" | head -1)
  for r in $(seq "$rounds"); do
    sed -i "0,/for the scale benchmark/s//for the scale benchmark, edited $r/" "$work/m/topics/$topic"
    run "$memctl" -C "$work/m" inject --task "subject 42 widget" >>"$work/edited"
  done
  git -C "$work/m" checkout -q -- "topics/$topic" 2>/dev/null || true
  rounds search "$memctl" -C "$work/m" search "widget 17"
  if command -v rg >/dev/null; then rounds rg rg -c "widget 17" "$work/m/topics"; fi

  v=$(med "$work/version" 1)
  fig[$n,idle]=$(med "$work/idle" 1)
  fig[$n,twenty]=$(med "$work/twenty" 1)
  fig[$n,twentykb]=$(med "$work/twenty" 2)
  fig[$n,inject]=$(med "$work/inject" 1)
  fig[$n,edited]=$(med "$work/edited" 1)
  fig[$n,import]=$imp_ms
  for c in stats lint list inject; do fig[$n,${c}kb]=$(med "$work/$c" 2); done
  fig[$n,importkb]=$imp_kb

  printf '\n### %d entries (medians of %d runs; memctl version: %d ms, %d MiB)\n\n' "$n" "$rounds" "$v" $(($(med "$work/version" 2) / 1024))
  echo "| figure | value | baseline (same run) | ratio |"
  echo "|---|---|---|---|"
  echo "| idle consolidate | ${fig[$n,idle]} ms | memctl version $v ms | $(ratio "${fig[$n,idle]}" "$v")× |"
  echo "| consolidate of 20 queued candidates | ${fig[$n,twenty]} ms, $((fig[$n,twentykb] / 1024)) MiB | git commit of one line $(med "$work/gitcommit" 1) ms | $(ratio "${fig[$n,twenty]}" "$(med "$work/gitcommit" 1)")× |"
  echo "| import of $n entries | $imp_ms ms, $((imp_kb / 1024)) MiB | SQLite FTS5 loads the same rows: $sql_ms ms | $(ratio "$imp_ms" "$sql_ms")× |"
  echo "| cached inject | ${fig[$n,inject]} ms, $((fig[$n,injectkb] / 1024)) MiB | memctl version $v ms | $(ratio "${fig[$n,inject]}" "$v")× |"
  echo "| first inject after a one-line hand edit | ${fig[$n,edited]} ms | cached inject ${fig[$n,inject]} ms | $(ratio "${fig[$n,edited]}" "${fig[$n,inject]}")× |"
  for c in stats lint list; do
    echo "| peak memory of $c$([ $c = list ] && echo ' --json') | $((fig[$n,${c}kb] / 1024)) MiB, $(med "$work/$c" 1) ms | memctl version $(($(med "$work/version" 2) / 1024)) MiB | $(ratio "${fig[$n,${c}kb]}" "$(med "$work/version" 2)")× |"
  done
  if [ -s "$work/rg" ] 2>/dev/null && command -v rg >/dev/null; then
    echo "| search \"widget 17\" | $(med "$work/search" 1) ms | rg over the files $(med "$work/rg" 1) ms | $(ratio "$(med "$work/search" 1)" "$(med "$work/rg" 1)")× |"
  else
    echo "| search \"widget 17\" | $(med "$work/search" 1) ms | (ripgrep not installed) | - |"
  fi
done

set -- $sizes
lo=$1
shift
for hi in "$@"; do
  printf '\n### Growth from %d to %d entries (the issue asks ≤ 2.5× for consolidate from 30k to 300k)\n\n' "$lo" "$hi"
  echo "| figure | at $lo | at $hi | ratio |"
  echo "|---|---|---|---|"
  for f in idle:"idle consolidate, ms" twenty:"consolidate of 20 candidates, ms" twentykb:"consolidate of 20 candidates, KiB" inject:"cached inject, ms" edited:"first inject after an edit, ms" statskb:"stats, KiB" lintkb:"lint, KiB" listkb:"list --json, KiB" importkb:"import, KiB"; do
    k=${f%%:*}
    echo "| ${f#*:} | ${fig[$lo,$k]} | ${fig[$hi,$k]} | $(ratio "${fig[$hi,$k]}" "${fig[$lo,$k]}")× |"
  done
done
