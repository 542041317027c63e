#!/usr/bin/env bash
# make e2e: install Claude Code from the npm registry into a temporary
# prefix, then run the scenarios of testdata/e2e (e2e_test.go) with it:
# claude -p with memctl's hooks and MCP server against a fake Anthropic
# Messages API on 127.0.0.1. Nothing else is reached. Where npm or its
# registry is not there, it says so and exits 0 (skipped).
#
# CLAUDE_CODE_VERSION picks the version (default: the one last checked).
set -euo pipefail
cd "$(dirname "$0")/../.."

version="${CLAUDE_CODE_VERSION:-2.1.197}"
pkg="@anthropic-ai/claude-code@$version"
if ! command -v npm >/dev/null 2>&1; then
  echo "e2e: skipped: npm is not installed (Claude Code needs Node.js 18 or newer and npm)"
  exit 0
fi
if ! timeout 60 npm view --fetch-retries=0 --fetch-timeout=15000 "$pkg" version >/dev/null 2>&1; then
  echo "e2e: skipped: the npm registry ($(npm config get registry)) does not answer for $pkg"
  exit 0
fi
prefix="$(mktemp -d "${TMPDIR:-/tmp}/memctl-e2e-claude.XXXXXX")"
trap 'rm -rf "$prefix"' EXIT
npm install --prefix "$prefix" --no-fund --no-audit --loglevel=error "$pkg" >/dev/null
export PATH="$prefix/node_modules/.bin:$PATH"
echo "e2e: $(claude --version) from $pkg"
go test -tags e2e -count=1 -run '^TestE2EClaudeCode$' . "$@"
