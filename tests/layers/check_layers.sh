#!/usr/bin/env bash
# scripts/check_layers on this tree (every include between folders goes down), and on copies of it with
# one include added that goes up, sideways, or into a folder without a layer: each is refused, named.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$src/scripts/check_layers"

# refused SOURCE_FILE INCLUDE EXPECTED: a copy with `#include INCLUDE` appended to SOURCE_FILE fails, naming it.
refused() {
  rm -rf "$tmp/tree" && mkdir "$tmp/tree"
  cp -r "$src/core" "$src/netload" "$src/netserve" "$src/harness" "$src/README.md" "$tmp/tree/"
  mkdir -p "$tmp/tree/$(dirname "$2")" && touch "$tmp/tree/$2"
  echo "#include \"$2\"" >>"$tmp/tree/$1"
  if NB_SOURCE_ROOT="$tmp/tree" "$src/scripts/check_layers" 2>"$tmp/err"; then
    echo "FAIL: $1 including $2 passed"; exit 1
  fi
  grep -qF "$1" "$tmp/err" && grep -qF "$3" "$tmp/err" || { echo "FAIL: not named:"; cat "$tmp/err"; exit 1; }
  echo "ok: $1 -> $2 refused: $(head -1 "$tmp/err")"
}
refused harness/report/report.cpp harness/run/runner.hpp "upward include, harness/report -> harness/run"
refused core/sys/socket.cpp netload/cli/cli.hpp "upward include, core/sys -> netload"
refused harness/run/runner.cpp harness/store/record.hpp "sideways include, harness/run -> harness/store"
refused harness/plan/plan.cpp harness/newfolder/x.hpp "folder harness/newfolder has no layer"
refused harness/report/report.cpp ../run/runner.hpp "a relative include (..)"

# A room grown past the bound, and a README whose map is not the table, are refused too.
rm -rf "$tmp/tree" && mkdir "$tmp/tree" && cp -r "$src/core" "$src/netload" "$src/netserve" "$src/harness" "$tmp/tree/"
sed 's/^\(   0  core\/base\/ *\)[0-9]*/\1 99/' "$src/README.md" > "$tmp/tree/README.md"
for i in $(seq 1 17); do touch "$tmp/tree/netload/search/extra_$i.cpp"; done
if NB_SOURCE_ROOT="$tmp/tree" "$src/scripts/check_layers" 2>"$tmp/err"; then echo "FAIL: a crowded room passed"; exit 1; fi
grep -qF "folder netload/search holds 21 source files" "$tmp/err" || { echo "FAIL: crowded room not named:"; cat "$tmp/err"; exit 1; }
grep -qF "README.md's map of the tree differs" "$tmp/err" || { echo "FAIL: stale map not named:"; cat "$tmp/err"; exit 1; }
echo "ok: a crowded room and a stale map refused"
