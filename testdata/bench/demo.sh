#!/usr/bin/env bash
# Demo: set up a throwaway memory and run the main job on the embedded
# default (no LLM): init, add, import, consolidate, list, inject.
set -euo pipefail
memctl=$(realpath "${1:-./memctl}")
dir=$(mktemp -d "${TMPDIR:-/tmp}/memctl-demo.XXXXXX")
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-demo} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-demo@localhost}
run() { printf '\n$ %s\n' "$*"; "$@"; }
run "$memctl" init "$dir"
export MEMCTL_DIR=$dir
run "$memctl" add "Example code uses Python 3.11; no Python 2 syntax" --category preference
run "$memctl" add "The order service must not add synchronous blocking calls" --category constraint --scope project:order-service --source "code review"
echo '{"content":"Order cache is two-level: Redis plus a local cache","category":"decision","source":"session_summary","refs":["session:2026-01-08"],"confidence":0.8}
{"content":"The report API p99 latency was 4s before the index on orders.created_at","category":"incident","topic":"incidents","refs":["INC-4411"]}' > "$dir.jsonl"
run "$memctl" import "$dir.jsonl"
run "$memctl" queue
if "$memctl" --help | grep -q "^  consolidate "; then run "$memctl" consolidate; fi
run "$memctl" list
if "$memctl" --help | grep -q "^  inject "; then run "$memctl" inject --task "why is the report API slow?" --budget 400; fi
run git -C "$dir" log --format='%h %an: %s'
rm -f "$dir.jsonl"
echo
echo "demo memory left at $dir (delete it when done)"
