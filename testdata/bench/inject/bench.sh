#!/bin/sh
# Whole-process inject timing against the process floor (memctl version),
# interleaved: each round runs version, inject and inject --top-k 0 back to
# back, so load on a shared machine hits all three alike; medians of RUNS
# rounds. Ratios are inject median / version median of the same run. Then
# REBUILDS timed rebuilds (inject with no cache: the first inject after a
# memory file changed), and peak RSS (median of 3, /usr/bin/time -v) of a
# cached inject, a rebuild and an inject --no-cache. Then UPDATES timed
# injects right after a one-line hand edit of one topic file (the cache
# updated from the old one and the changed file), and their peak RSS.
# Usage: testdata/bench/inject/bench.sh [TOPIC_ENTRIES...]   (default 10000 100000)
# MEMCTL_BIN=path times a prebuilt binary instead of building the tree.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${MEMCTL_BIN:-}" ]; then
	m=$MEMCTL_BIN
else
	go build -o "$work/memctl" "$root"
	m="$work/memctl"
fi
runs=${RUNS:-30}
rebuilds=${REBUILDS:-5}
updates=${UPDATES:-5}
now_ms() { echo $(( $(date +%s%N) / 1000 )); }
med() { sort -n "$1" | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'; }
task="fix the slow report api timeout"
for n in ${@:-10000 100000}; do
	d="$work/mem-$n"
	"$m" init "$d" > /dev/null 2>&1 || mkdir -p "$d/.memctl"
	python3 "$root/testdata/bench/inject/gen.py" "$d" 200 "$n"
	sleep 2.5 # past the cache's racy window, as when memory was written earlier
	"$m" --dir "$d" inject --task "slow report api" > /dev/null  # build the cache
	: > "$work/v"; : > "$work/i"; : > "$work/k"
	i=0
	while [ $i -lt $runs ]; do
		s=$(now_ms); "$m" version > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/v"
		s=$(now_ms); "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/i"
		s=$(now_ms); "$m" --dir "$d" inject --task "$task" --budget 4000 --top-k 0 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/k"
		i=$((i + 1))
	done
	: > "$work/n"
	i=0
	while [ $i -lt 3 ]; do
		s=$(now_ms); "$m" --dir "$d" inject --no-cache --task "$task" --budget 4000 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/n"
		i=$((i + 1))
	done
	# Rebuild: the first inject after a memory file changed (the cache
	# removed, which costs the same as a stale one: its key is read first).
	: > "$work/b"; : > "$work/br"; : > "$work/nr"
	i=0
	while [ $i -lt "$rebuilds" ]; do
		rm -f "$d/.memctl/cache/index.bin"
		s=$(now_ms); "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/b"
		i=$((i + 1))
	done
	: > "$work/r"
	for _ in 1 2 3; do
		{ /usr/bin/time -v "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2 * 1000}' >> "$work/r"
		rm -f "$d/.memctl/cache/index.bin"
		{ /usr/bin/time -v "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2 * 1000}' >> "$work/br"
		{ /usr/bin/time -v "$m" --dir "$d" inject --no-cache --task "$task" --budget 4000 > /dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2 * 1000}' >> "$work/nr"
	done
	"$m" --dir "$d" inject --task "$task" > /dev/null 2>&1 # a cache again
	: > "$work/u"; : > "$work/ur"; : > "$work/c2"
	i=0
	while [ $i -lt "$updates" ]; do
		sed -i "7s/.*/- [fact-edit-$i] an edited line about the kafka deploy $i (session · 2025-03-0$((i % 9 + 1)))/" "$d/topics/topic-07.md"
		s=$(now_ms); "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/u"
		s=$(now_ms); "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null 2>&1; e=$(now_ms); echo $((e - s)) >> "$work/c2"
		sed -i "7s/.*/- [fact-edit-$i] an edited line about the kafka deploy, again (session · 2025-03-0$((i % 9 + 1)))/" "$d/topics/topic-07.md"
		{ /usr/bin/time -v "$m" --dir "$d" inject --task "$task" --budget 4000 > /dev/null; } 2>&1 | awk -F: '/Maximum resident/ {gsub(/ /,"",$2); print $2 * 1000}' >> "$work/ur"
		i=$((i + 1))
	done
	v=$(med "$work/v"); inj=$(med "$work/i"); inj0=$(med "$work/k"); rb=$(med "$work/b"); up=$(med "$work/u"); c2=$(med "$work/c2")
	echo "topic=$n core=200 runs=$runs version=${v}ms inject=${inj}ms ($(echo "$inj $v" | awk '{printf "%.1f", $1/$2}')x) inject_topk0=${inj0}ms ($(echo "$inj0 $v" | awk '{printf "%.1f", $1/$2}')x) no_cache=$(med "$work/n")ms rebuild=${rb}ms ($(echo "$rb $v" | awk '{printf "%.1f", $1/$2}')x) peak_rss=$(med "$work/r")KB rebuild_rss=$(med "$work/br")KB no_cache_rss=$(med "$work/nr")KB update=${up}ms ($(echo "$up $c2" | awk '{printf "%.1f", $1/$2}')x the cached inject right after, ${c2}ms) update_rss=$(med "$work/ur")KB"
done
