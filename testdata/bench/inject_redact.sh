#!/usr/bin/env bash
# What inject's redaction costs, measured in one run: BenchmarkInject10k
# of three builds of the inject package, interleaved round by round (so
# the load of a shared machine hits all three alike): BEFORE (a git ref,
# default HEAD~1), the same ref with the redaction in appendClean taken
# out (NOREDACT, the cost before issue 28 redacted), and the working tree
# (AFTER). Prints each build's median and minimum ns/op and the ratios.
# Usage: [ROUNDS=n] [ITER=n] testdata/bench/inject_redact.sh [before-ref]
set -euo pipefail
ref=${1:-HEAD~1}
rounds=${ROUNDS:-8}
iter=${ITER:-20}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/memctl-injredact.XXXXXX")
trap 'rm -rf "$work"' EXIT
for v in before noredact; do
  mkdir "$work/$v"
  git -C "$root" archive "$ref" | tar -x -C "$work/$v"
done
sed -i 's|s, _ = redact.Redact(redact.Neutralise(s)).*|s = redact.Neutralise(s)|' "$work/noredact/inject/render.go"
grep -q 's = redact.Neutralise(s)$' "$work/noredact/inject/render.go" || { echo "inject_redact.sh: could not take the redaction out of $ref" >&2; exit 1; }
(cd "$work/before" && go test -c -o "$work/before.test" ./inject/)
(cd "$work/noredact" && go test -c -o "$work/noredact.test" ./inject/)
(cd "$root" && go test -c -o "$work/after.test" ./inject/)
cd "$root/inject"
for ((i = 0; i < rounds; i++)); do
  for v in before noredact after; do
    "$work/$v.test" -test.run XXX -test.bench 'BenchmarkInject10k$' -test.benchtime "${iter}x" |
      awk -v v="$v" '/^BenchmarkInject10k/ {print v, $3}'
  done
done | python3 -c '
import sys, statistics
t = {}
for line in sys.stdin:
    v, ns = line.split()
    t.setdefault(v, []).append(int(ns))
med = {v: statistics.median(x) for v, x in t.items()}
low = {v: min(x) for v, x in t.items()}
for v in ("before", "noredact", "after"):
    print("%-9s median %7.1f ms   min %7.1f ms   (%d rounds)" % (v, med[v] / 1e6, low[v] / 1e6, len(t[v])))
for a, b in (("after", "before"), ("after", "noredact"), ("before", "noredact")):
    print("%s/%s median %.2f   min %.2f" % (a, b, med[a] / med[b], low[a] / low[b]))
'
