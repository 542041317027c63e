#!/usr/bin/env bash
# memctl sync against git pull in the same run (issue 24): a memory of SIZE
# entries (default 100000) on a bare remote and two clones. Per round:
#  - fast-forward: machine A consolidates one new entry and pushes; on
#    machine B, `git pull --ff-only` (the baseline, on a twin clone) and
#    `memctl sync` each bring that one entry;
#  - merge: both machines add one entry; `git pull --no-rebase` (twin
#    clones, a clean line merge: the entries land in different topic
#    files) and `memctl sync` (entry-level merge commit, then push).
# Prints the median milliseconds and the ratio to git pull. Usage:
#   [ROUNDS=n] [SIZE=n] testdata/bench/sync.sh path/to/memctl
set -euo pipefail
bin=$(realpath "${1:-./memctl}")
rounds=${ROUNDS:-5}
size=${SIZE:-100000}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-syncbench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@localhost

python3 - "$work/seed.jsonl" "$size" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
topics = ["databases", "deploys", "frontend", "billing", "search", "infra", "people", "tooling"]
with open(path, "w") as f:
    for i in range(n):
        f.write(json.dumps({"content": f"Seed note {i} about subject {i % 97} for the sync benchmark", "category": "note", "topic": topics[i % len(topics)], "source": "bench"}) + "\n")
PY
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

git init -q --bare -b main "$work/remote.git"
"$bin" init "$work/a" >/dev/null
git -C "$work/a" remote add origin "$work/remote.git"
"$bin" -C "$work/a" import "$work/seed.jsonl" >/dev/null
"$bin" -C "$work/a" sync >/dev/null
for c in b gb; do git clone -q "$work/remote.git" "$work/$c"; done
"$bin" -C "$work/b" list --json >/dev/null  # warm the cache like a used memory

: >"$work/ff.git" ; : >"$work/ff.memctl" ; : >"$work/mg.git" ; : >"$work/mg.memctl"
for r in $(seq "$rounds"); do
  # fast-forward
  "$bin" -C "$work/a" add "Fresh fact $r for the fast-forward" -c fact >/dev/null
  "$bin" -C "$work/a" consolidate --no-llm >/dev/null
  "$bin" -C "$work/a" sync >/dev/null
  ms git -C "$work/gb" pull -q --ff-only origin main >>"$work/ff.git"
  ms "$bin" -C "$work/b" sync >>"$work/ff.memctl"
  # merge: one entry on each side
  "$bin" -C "$work/a" add "Merge fact $r from A" -c fact >/dev/null
  "$bin" -C "$work/a" consolidate --no-llm >/dev/null
  "$bin" -C "$work/a" sync >/dev/null
  "$bin" -C "$work/b" add "Merge preference $r from B" -c preference >/dev/null
  "$bin" -C "$work/b" consolidate --no-llm >/dev/null
  printf -- "- gb line %s\n" "$r" >>"$work/gb/topics/tooling.md"
  git -C "$work/gb" commit -qam "gb $r"
  ms git -C "$work/gb" pull -q --no-rebase --no-edit origin main >>"$work/mg.git"
  ms "$bin" -C "$work/b" sync >>"$work/mg.memctl"
  git -C "$work/gb" reset -q --hard origin/main
done
for k in ff mg; do
  g=$(median <"$work/$k.git"); m=$(median <"$work/$k.memctl")
  name=$([ $k = ff ] && echo "fast-forward (one new entry)" || echo "merge (one entry each side)")
  awk -v n="$name" -v g="$g" -v m="$m" -v s="$size" 'BEGIN {printf "%s at %d entries: git pull %d ms, memctl sync %d ms, ratio %.2f\n", n, s, g, m, m / g}'
done
