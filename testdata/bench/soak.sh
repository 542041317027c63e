#!/bin/sh
# soak.sh REV SEED [CHUNKS] — the long write-path simulation on one pinned
# binary: memctl built from REV, the simulation harness from the work tree,
# chunks of 20 seeds × 250 steps (every step kind, every fake LLM mode but
# timeout), one line per chunk appended to soak-summary.txt. Run two at once
# with different seeds on a 2-core machine. CHUNKS defaults to forever;
# SOAK_SEEDS and SOAK_STEPS change the chunk, SOAK_OUT the output directory.
set -eu
rev=$(git rev-parse --short "$1") seed=$2 chunks=${3:-0}
seeds=${SOAK_SEEDS:-20} steps=${SOAK_STEPS:-250}
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
	if "$out/sim.test" -test.count=1 -test.timeout=0 -test.parallel=1 -test.v -test.run 'TestSimulation$' \
		-sim.bin="$out/memctl-$rev" -sim.seed="$seed" -sim.seeds="$seeds" -sim.steps="$steps" -sim.kinds=all \
		-sim.llm=add,compress,archive-all,copy-secret,invent-id,invent-fact,garbage,truncated,huge,status500,merge-unrelated >"$log" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	echo "$(date -u +%FT%TZ) seeds $seed-$((seed + seeds - 1)) rev $rev rc=$rc $(grep -h 'simulation: ' "$log" | tail -1)" >>"$out/soak-summary.txt"
	seed=$((seed + seeds)) n=$((n + 1))
done
