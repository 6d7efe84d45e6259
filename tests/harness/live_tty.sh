#!/bin/sh
# The live view, both ways, on a plan of two 2 s runs: on a terminal (a pty from util-linux `script`) the
# plan's line and the aggregate are redrawn in place with ANSI cursor-up / erase-line, and what stays on
# the screen is one plain line per run; with stderr to a file, plain lines only, no escape sequence.
# The two runs go at the same time (ports 0), to keep the test short.
set -eu
harness=$1
build=$2
tmp=$(mktemp -d /tmp/harness-live.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
command -v script > /dev/null || { echo "SKIP: no util-linux script"; exit 77; }
cat > "$tmp/live.toml" <<PLAN
name = "live"
[defaults]
duration = 2
warmup = 0
lead = 0.3
settle = 0.2
repeats = 2
ports = [0, 0]
skew_bound_ms = 1000  # what is tested is the display: a late start on a busy machine is no failure here
[hosts]
device = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }
b = { address = "127.0.0.3" }
[groups]
clients = ["a", "b"]
[[tests]]
name = "t"
message_size = 64
pps = 1000
topology = "fan-in"
server = "device"
clients = "clients"
PLAN
fail() { echo "FAIL: $*"; exit 1; }

# Exit status 3 (a run failed: lost packets on a loaded machine) still shows the live view; 1 does not.
"$harness" run "$tmp/live.toml" --results "$tmp/plain" --bin-dir "$build" > "$tmp/plain.out" 2> "$tmp/plain.err" &
plain=$!
status=0
TERM=xterm script -qec "'$harness' run '$tmp/live.toml' --results '$tmp/tty' --bin-dir '$build'" /dev/null \
  < /dev/null > "$tmp/tty.out" 2>&1 || status=$?
[ $status = 0 ] || [ $status = 3 ] || fail "the run on a terminal exited $status: $(cat "$tmp/tty.out")"
status=0
wait $plain || status=$?
[ $status = 0 ] || [ $status = 3 ] || fail "the plain run exited $status: $(cat "$tmp/plain.err")"

# On the terminal: the block was drawn and redrawn, and what the screen shows at the end (the escape
# sequences played back) is plain: one aggregate line per run, no plan line left over.
grep -q "$(printf '\033\\[1A\033\\[2K')" "$tmp/tty.out" || fail "no cursor-up / erase-line on the terminal: $(cat -v "$tmp/tty.out")"
grep -q 'plan live: run 2 of 2 (t-m64-r2), [0-9:]* elapsed, ETA [0-9][0-9]:[0-9][0-9] (ends ~[0-9:]*)' "$tmp/tty.out" ||
  fail "no plan line for run 2: $(cat -v "$tmp/tty.out")"
python3 - "$tmp/tty.out" > "$tmp/screen" <<'PY'
import re, sys
lines, row = [""], 0
for tok in re.split(r"(\x1b\[1A\x1b\[2K|\r?\n)", open(sys.argv[1], encoding="utf-8").read()):
    if tok.startswith("\x1b"):
        row -= 1; lines[row] = ""
    elif tok in ("\n", "\r\n"):
        row += 1
        if row == len(lines): lines.append("")
    else:
        lines[row] += tok.replace("\r", "")
print("\n".join(lines))
PY
cat "$tmp/screen"
! grep -q "plan live:" "$tmp/screen" || fail "a plan line left on the screen"
[ "$(grep -c '^  t-m64-r[12] ' "$tmp/screen")" = 2 ] || fail "not one aggregate line per run on the screen"
grep -q '^harness: run 1 of 2: t-m64-r1 ' "$tmp/screen" || fail "no 'harness: run 1 of 2' line"

# To a file: the plain lines, one per second, and not one escape sequence.
cat "$tmp/plain.err"
! grep -q "$(printf '\033')" "$tmp/plain.err" || fail "escape sequences in the plain output"
grep -q '^  t-m64-r2 .* running 2/2 failed ' "$tmp/plain.err" || fail "no plain per-second line"
! grep -q "plan live:" "$tmp/plain.err" || fail "a plan line in the plain output"
echo "ok: redrawn in place on a terminal, plain lines to a file"
