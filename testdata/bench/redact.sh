#!/usr/bin/env bash
# Cost of redaction on `memctl add`, against the process floor (`memctl
# version`) measured in the same run, interleaved: wall time (median) and
# max RSS. Usage: testdata/bench/redact.sh [path/to/memctl] [runs]
set -euo pipefail
memctl=$(realpath "${1:-./memctl}")
runs=${2:-30}
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-redact.XXXXXX")
trap 'rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@localhost MEMCTL_DIR=$work/mem
"$memctl" init "$work/mem" >/dev/null

now_ns() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print int(NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
time_us() { local t0 t1; t0=$(now_ns); "$@" >/dev/null 2>&1; t1=$(now_ns); echo $(( (t1 - t0) / 1000 )); }
rss_kb() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

# a 4 KB text (the largest candidate by default) dense with digits, keys
# and keywords, so every detector runs
long=$(python3 -c '
import random
r = random.Random(7)
words = "password token key secret card order deploy service cache api aws ghp_ sk- eyJ Bearer Basic".split()
out = []
while len(" ".join(out)) < 3900:
    w = r.choice(words)
    out.append(w if r.random() < 0.6 else str(r.randrange(10**6, 10**16)))
print(" ".join(out)[:4000])')

declare -A t
for ((i = 0; i < runs; i++)); do
  t[version]+="$(time_us "$memctl" version) "
  t[plain]+="$(time_us "$memctl" add "bench candidate $i about the order service cache" --category fact) "
  t[secret]+="$(time_us "$memctl" add "deploy key AKIAQYLPMN5HFIQR7XYZ and ghp_R8kQ2vXm9LpT4sWz7NcB1yHd6JfG3aE5uK0o run $i" --category fact) "
  t[long]+="$(time_us "$memctl" add "$long $i" --category fact) "
done
floor=$(echo ${t[version]} | tr ' ' '\n' | median)
printf '%-44s %9s %8s %10s %8s\n' "command (median of $runs)" "µs" "x floor" "max RSS KB" "x floor"
rfloor=$(rss_kb "$memctl" version)
row() {
  local label=$1 key=$2; shift 2
  local m r
  m=$(echo ${t[$key]} | tr ' ' '\n' | median)
  r=$(rss_kb "$@")
  printf '%-44s %9d %8.2f %10d %8.2f\n' "$label" "$m" "$(echo "$m / $floor" | bc -l)" "$r" "$(echo "$r / $rfloor" | bc -l)"
}
row "memctl version (process floor)" version "$memctl" version
row "memctl add (plain text)" plain "$memctl" add "rss plain" --category fact
row "memctl add (two secrets, redacted)" secret "$memctl" add "key AKIAQYLPMN5HFIQR7XYZ" --category fact
row "memctl add (4 KB text, every detector runs)" long "$memctl" add "$long" --category fact
