#!/usr/bin/env bash
# scripts/check_format on this tree, and on a file laid out otherwise: refused, named.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v clang-format >/dev/null; then
  echo "SKIP: no clang-format (scripts/bootstrap installs it)"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$src/scripts/check_format"
printf 'int  main( ) { return 0 ; }\n' >"$tmp/crooked.cpp"
if "$src/scripts/check_format" "$tmp/crooked.cpp" 2>"$tmp/err"; then
  echo "FAIL: a crooked file passed"; exit 1
fi
grep -qF "$tmp/crooked.cpp" "$tmp/err" || { echo "FAIL: not named:"; cat "$tmp/err"; exit 1; }
echo "ok: refused: $(cat "$tmp/err")"
