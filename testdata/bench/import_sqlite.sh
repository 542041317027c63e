#!/usr/bin/env bash
# The import row of issue 25 for one or more memctl binaries side by side:
# `memctl import` of N of scale.sh's rows into a fresh memory by each
# binary, and SQLite FTS5 loading the same rows (`.import` of a CSV into a
# table `fts5(content, category, topic)`), one after the other in each of
# ROUNDS rounds (default 3), so a busy machine weighs on all alike. Each
# run is timed by /usr/bin/time: wall, CPU (user + sys) and peak RSS.
# Prints every run, then per binary the medians (peak RSS: the largest)
# and their ratios to SQLite's medians.
# Usage: [ROUNDS=n] testdata/bench/import_sqlite.sh N path/to/memctl...
set -euo pipefail
n=$1
shift
rounds=${ROUNDS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-importsql.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost
export MEMCTL_NO_UPDATE_CHECK=1

# The rows of scale.sh.
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

# run NAME CMD...: runs CMD, appends "NAME wall-s cpu-s rss-MiB" to the results.
run() {
  local name=$1 s e
  shift
  s=$(date +%s%N)
  /usr/bin/time -f '%U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
    echo "import_sqlite.sh: $* failed:" >&2
    cat "$work/stderr" >&2
    return 1
  }
  e=$(date +%s%N)
  read -r u sy m < <(tail -1 "$work/time")
  awk -v n="$name" -v w=$(((e - s) / 1000000)) -v u="$u" -v s="$sy" -v m="$m" \
    'BEGIN { printf "%s %.3f %.2f %d\n", n, w / 1000, u + s, m / 1024 }' | tee -a "$work/results"
}
: >"$work/results"
for _ in $(seq "$rounds"); do
  i=0
  for bin in "$@"; do
    i=$((i + 1))
    rm -rf "$work/m"
    "$bin" init "$work/m" >/dev/null
    MEMCTL_DIR=$work/m run "memctl#$i" "$bin" import "$work/seed.jsonl"
  done
  rm -f "$work/db"
  run sqlite sqlite3 "$work/db" "create virtual table notes using fts5(content, category, topic)" ".mode csv" ".import $work/seed.csv notes"
done

# med NAME COLUMN: the median of a column of NAME's runs.
med() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$work/results" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
peak() { awk -v n="$1" '$1 == n { print $4 }' "$work/results" | sort -n | tail -1; }
printf '\n### import of %d rows (medians of %d rounds)\n\n' "$n" "$rounds"
echo "| run | wall | CPU | peak RSS | wall / SQLite | CPU / SQLite |"
echo "|---|---|---|---|---|---|"
sw=$(med sqlite 2)
sc=$(med sqlite 3)
i=0
for bin in "$@" sqlite; do
  name=sqlite
  if [ "$bin" != sqlite ]; then
    i=$((i + 1))
    name="memctl#$i"
  fi
  w=$(med "$name" 2)
  c=$(med "$name" 3)
  awk -v n="$name" -v b="$bin" -v w="$w" -v c="$c" -v m="$(peak "$name")" -v sw="$sw" -v sc="$sc" \
    'BEGIN { printf "| %s (%s) | %.2f s | %.2f s | %d MiB | %.2f× | %.2f× |\n", n, b, w, c, m, w / sw, c / sc }'
done
