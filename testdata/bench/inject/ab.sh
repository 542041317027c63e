#!/bin/sh
# A/B timing of the one-line-edit update, two binaries in one run on one
# memory: each round runs, per binary, memctl version, a one-line hand edit
# of one topic file and the inject that updates the cache, then a cached
# inject; the binaries alternate every round, so load on a shared machine
# hits both alike. Medians of ROUNDS rounds; ratios against the binary's
# own cached injects and against all cached injects of the run (pooled:
# both binaries run the same cached path).
# Usage: testdata/bench/inject/ab.sh OLD_BINARY NEW_BINARY [TOPIC_ENTRIES] [ROUNDS]
# (default 100000 entries, 21 rounds)
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
A=$1; B=$2; n=${3:-100000}; rounds=${4:-21}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
d=$work/mem
"$A" init "$d" > /dev/null 2>&1 || mkdir -p "$d/.memctl"
python3 "$root/testdata/bench/inject/gen.py" "$d" 200 "$n"
task="fix the slow report api timeout"
sleep 2.5 # past the cache's racy window, as when memory was written earlier
"$A" --dir "$d" inject --task "$task" > /dev/null
now_ms() { echo $(( $(date +%s%N) / 1000 )); }
med() { sort -n "$1" | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'; }
for x in A B; do : > "$work/v$x"; : > "$work/u$x"; : > "$work/c$x"; done
i=0
while [ $i -lt "$rounds" ]; do
	for x in A B; do
		if [ $x = A ]; then m=$A; else m=$B; fi
		s=$(now_ms); "$m" version > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/v$x"
		sed -i "7s/.*/- [fact-edit-$i$x] an edited line about the kafka deploy $i (session · 2025-03-0$((i % 9 + 1)))/" "$d/topics/topic-07.md"
		s=$(now_ms); "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/u$x"
		s=$(now_ms); "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/c$x"
	done
	i=$((i + 1))
done
cat "$work/cA" "$work/cB" > "$work/call"
call=$(med "$work/call")
for x in A B; do
	v=$(med "$work/v$x"); u=$(med "$work/u$x"); c=$(med "$work/c$x")
	echo "$x topic=$n rounds=$rounds version=${v}ms update=${u}ms cached=${c}ms update/cached=$(echo "$u $c" | awk '{printf "%.2f", $1/$2}')x update/pooled_cached(${call}ms)=$(echo "$u $call" | awk '{printf "%.2f", $1/$2}')x"
done
