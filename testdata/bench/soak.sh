#!/bin/sh
# soak.sh REV SEED [CHUNKS] — the long write-path simulation on one pinned
# binary: memctl built from REV, the simulation harness from the work tree,
# chunks of 20 seeds × 250 steps run 2 at a time (every step kind, every
# fake LLM mode including timeout, every gated check: what `make soak`
# runs), one line per chunk appended to soak-summary.txt. It stops at the
# first chunk with a violation (its log says which seed and step, and how
# to replay it). CHUNKS defaults to forever; SOAK_SEEDS, SOAK_STEPS and
# SOAK_PARALLEL change the chunk, SOAK_OUT the output directory.
set -eu
rev=$(git rev-parse --short "$1") seed=$2 chunks=${3:-0}
seeds=${SOAK_SEEDS:-20} steps=${SOAK_STEPS:-250} parallel=${SOAK_PARALLEL:-2}
out=${SOAK_OUT:-/tmp/memctl-soak}
mkdir -p "$out"
export TMPDIR=${TMPDIR:-/dev/shm}
src=$(mktemp -d)
git archive "$rev" | tar -x -C "$src"
(cd "$src" && go build -o "$out/memctl-$rev" .)
go test -c -o "$out/sim.test" .
n=0
while [ "$chunks" = 0 ] || [ "$n" -lt "$chunks" ]; do
	log="$out/chunk-$seed.log"
	if "$out/sim.test" -test.count=1 -test.timeout=0 -test.parallel="$parallel" -test.v -test.run 'TestSimulation$' \
		-sim.bin="$out/memctl-$rev" -sim.seed="$seed" -sim.seeds="$seeds" -sim.steps="$steps" -sim.kinds=all \
		-sim.llm=all -sim.known=all >"$log" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	echo "$(date -u +%FT%TZ) seeds $seed-$((seed + seeds - 1)) rev $rev rc=$rc $(grep -h 'simulation: ' "$log" | tail -1)" >>"$out/soak-summary.txt"
	if [ "$rc" != 0 ]; then
		echo "soak.sh: chunk $seed failed; see $log" >&2
		exit 1
	fi
	seed=$((seed + seeds)) n=$((n + 1))
done
