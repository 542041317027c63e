#!/bin/sh
# Whole-process inject timing against the process floor (memctl version).
# Usage: bench/inject/bench.sh [TOPIC_ENTRIES...]   (default 10000 100000)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/memctl" "$root"
m="$work/memctl"
runs=${RUNS:-30}
timeit() { # prints median wall ms of $runs runs of "$@"
	i=0; : > "$work/t"
	while [ $i -lt $runs ]; do
		s=$(date +%s%N); "$@" > /dev/null 2>&1; e=$(date +%s%N)
		echo $(( (e - s) / 1000 )) >> "$work/t"; i=$((i+1))
	done
	sort -n "$work/t" | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}
for n in ${@:-10000 100000}; do
	d="$work/mem-$n"
	"$m" init "$d" > /dev/null 2>&1 || mkdir -p "$d/.memctl"
	python3 "$root/bench/inject/gen.py" "$d" 200 "$n"
	"$m" --dir "$d" inject --task "slow report api" > /dev/null  # warm the cache
	floor=$(timeit "$m" version)
	inj=$(timeit "$m" --dir "$d" inject --task "fix the slow report api timeout" --budget 4000)
	inj0=$(timeit "$m" --dir "$d" inject --task "fix the slow report api timeout" --budget 4000 --top-k 0)
	nocache=$(RUNS=5 timeit "$m" --dir "$d" inject --no-cache --task "fix the slow report api timeout" --budget 4000)
	rss=$( { /usr/bin/time -v "$m" --dir "$d" inject --task "fix the slow report api timeout" > /dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2}')
	echo "topic=$n core=200 version=${floor}ms inject=${inj}ms ($(echo "$inj $floor" | awk '{printf "%.1f", $1/$2}')x) inject_topk0=${inj0}ms no_cache=${nocache}ms peak_rss=${rss}KB"
done
