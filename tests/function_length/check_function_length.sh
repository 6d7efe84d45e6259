#!/usr/bin/env bash
# scripts/check_function_length on this tree (no function over 60 lines but marked hot loops), and on
# copies of it with one function appended: 61 lines plain, or long by a lambda or a coroutine body, is
# refused, named; 60 lines, or 61 under a "hot loop:" comment, passes.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$src/scripts/check_function_length"

# with_function FILE NAME BODY_LINES COMMENT OPEN CLOSE: a fresh copy of the tree with, appended to FILE,
# COMMENT, then `OPEN`, BODY_LINES statements and `CLOSE` (the function is BODY_LINES + 2 lines long
# when OPEN and CLOSE are one line each).
with_function() {
  rm -rf "$tmp/tree" && mkdir "$tmp/tree"
  cp -r "$src/core" "$src/netload" "$src/netserve" "$src/harness" "$tmp/tree/"
  {
    echo
    [[ -n $4 ]] && echo "$4"
    echo "$5"
    for ((i = 0; i < $3; i++)); do echo "  static_cast<void>($i);"; done
    echo "$6"
  } >>"$tmp/tree/$1"
}

refused() {  # refused FILE NAME LENGTH: the copy fails, naming FILE, NAME and LENGTH
  if NB_SOURCE_ROOT="$tmp/tree" "$src/scripts/check_function_length" 2>"$tmp/err"; then
    echo "FAIL: $2 in $1 passed"; exit 1
  fi
  grep -qF "$1" "$tmp/err" && grep -qF "$2 is $3 lines" "$tmp/err" || { echo "FAIL: not named:"; cat "$tmp/err"; exit 1; }
  echo "ok: refused: $(grep -F "$2" "$tmp/err")"
}

passes() {  # passes NAME: the copy passes
  NB_SOURCE_ROOT="$tmp/tree" "$src/scripts/check_function_length" >"$tmp/out" 2>"$tmp/err" ||
    { echo "FAIL: $1 refused:"; cat "$tmp/err"; exit 1; }
  echo "ok: passes: $1 $(cat "$tmp/out")"
}

with_function netload/cli/cli.cpp long_step 59 "" "void long_step() {" "}"
refused netload/cli/cli.cpp long_step 61
with_function core/data/rr.cpp long_lambda 58 "" "int long_lambda() {" "  }; return 0; }"
sed -i 's/^int long_lambda() {$/int long_lambda() {\n  auto f = [] {/' "$tmp/tree/core/data/rr.cpp"
refused core/data/rr.cpp long_lambda 61
with_function netserve/native/control_connection.cpp long_coroutine 59 "" \
  "asio::awaitable<void> long_coroutine() {" "  co_return; }"
refused netserve/native/control_connection.cpp long_coroutine 61
with_function harness/run/runner.cpp sixty_lines 58 "" "void sixty_lines() {" "}"
passes sixty_lines
with_function core/data/rr.cpp marked_loop 59 \
  "// hot loop: a call per datagram here would cost more than the split saves" "void marked_loop() {" "}"
passes marked_loop
with_function core/data/rr.cpp unexplained_mark 59 "// hot loop:" "void unexplained_mark() {" "}"
refused core/data/rr.cpp unexplained_mark 61
