#!/usr/bin/env bash
# Throughput of memctl's write path against `git commit` measured in the
# same run: per round, in a memory of SIZE entries (default 2000), one
# `git commit` of a one-line change (the baseline), one `memctl import` of
# one line, one `memctl add` and one `memctl consolidate --no-llm` of that
# candidate, each binary in turn (interleaved, so load hits both alike).
# Prints the median milliseconds and the ratio to the same run's git
# commit median (over every round of every binary). Usage:
#   [ROUNDS=n] [SIZE=n] testdata/bench/writepath.sh path/to/memctl [path/to/other-memctl]
set -euo pipefail
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
[ ${#bins[@]} -gt 0 ] || bins=("$(realpath ./memctl)")
rounds=${ROUNDS:-15}
size=${SIZE:-2000}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-writepath.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost

python3 - "$work/seed.jsonl" "$size" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    for i in range(n):
        f.write(json.dumps({"content": f"Seed note {i} about subject {i % 97} for the write path benchmark", "category": "note", "source": "bench"}) + "\n")
PY

# ms CMD... : runs CMD, prints its wall time in milliseconds.
ms() {
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; return 1; }
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
}

for i in "${!bins[@]}"; do
  "${bins[$i]}" init "$work/mem$i" >/dev/null
  MEMCTL_DIR=$work/mem$i "${bins[$i]}" import "$work/seed.jsonl" >/dev/null
  git init -q "$work/git$i"
  cp "$work/mem$i/MEMORY.md" "$work/git$i/MEMORY.md"
  git -C "$work/git$i" add MEMORY.md
  git -C "$work/git$i" commit -qm seed
done
: >"$work/samples"
for ((r = 0; r < rounds; r++)); do
  for i in "${!bins[@]}"; do
    m=${bins[$i]}
    echo "- line $r" >>"$work/git$i/MEMORY.md"
    echo "$i git $(ms git -C "$work/git$i" commit -qm "round $r" -- MEMORY.md)" >>"$work/samples"
    printf '{"content":"Imported round %d note for binary %d","category":"note","source":"bench"}\n' "$r" "$i" >"$work/one.jsonl"
    echo "$i import $(MEMCTL_DIR=$work/mem$i ms "$m" import "$work/one.jsonl")" >>"$work/samples"
    echo "$i add $(MEMCTL_DIR=$work/mem$i ms "$m" add "Added round $r preference for binary $i" -c preference)" >>"$work/samples"
    echo "$i consolidate $(MEMCTL_DIR=$work/mem$i ms "$m" consolidate --no-llm)" >>"$work/samples"
  done
done
python3 - "$work/samples" "${bins[@]}" <<'PY'
import statistics, sys
samples, bins = sys.argv[1], sys.argv[2:]
d = {}
for line in open(samples):
    i, what, v = line.split()
    d.setdefault((int(i), what), []).append(int(v))
base = statistics.median([v for (i, what), vs in d.items() if what == "git" for v in vs])
print(f"git commit median over every round: {base:.1f} ms (the baseline of every ratio)")
print(f"{'binary':<40} {'step':<12} {'median ms':>9} {'x git commit':>12}")
for i, b in enumerate(bins):
    for what in ("import", "add", "consolidate"):
        m = statistics.median(d[(i, what)])
        print(f"{b[-40:]:<40} {what:<12} {m:>9.1f} {m / base:>12.2f}")
PY
