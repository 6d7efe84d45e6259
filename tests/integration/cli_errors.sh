#!/bin/sh
# Command-line errors of netload, netserve and harness: every class (unknown option, bad value, value out
# of range, missing argument, extra positional) exits with status 2 and one stderr line that starts with
# the program's name and says what is wrong; --help starts with "Usage: <program>" and has no CLI11 type
# tags. Arguments: the netload, netserve and (optional) harness binaries. Nothing is started that listens.
set -u
netload=$1
netserve=$2
harness=${3:-}
tmp=$(mktemp -d /tmp/cli-errors.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

# refused PROGRAM-PATH EXPECTED-TEXT ARGS...: exit status 2, exactly one stderr line "<name>: ...EXPECTED-TEXT..."
refused() {
  prog=$1 want=$2
  shift 2
  name=$(basename "$prog")
  timeout 20 "$prog" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?
  lines=$(wc -l <"$tmp/err")
  first=$(head -n 1 "$tmp/err")
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$first" | grep -qF -- "$name: " ||
     ! printf '%s' "$first" | grep -qF -- "$want"; then
    echo "FAIL: $name $*: status $status (want 2), stderr ($lines lines, want 1 containing '$name: ' and '$want'):"
    cat "$tmp/err"
    fails=1
  fi
}

# help PROGRAM-PATH [ARGS...]: status 0, stdout starts with "Usage: <name>", no "{false}" nor type tags.
help() {
  prog=$1
  shift
  name=$(basename "$prog")
  timeout 20 "$prog" "$@" --help >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?
  if [ "$status" -ne 0 ] || ! head -n 1 "$tmp/out" | grep -q "^Usage: $name" ||
     grep -qE '\{false\}|\{true\}|FLOAT|UINT|INT:|TEXT|:POSITIVE|:NONNEGATIVE' "$tmp/out" || ! grep -q '^Examples:' "$tmp/out" ||
     ! grep -q 'Exit status' "$tmp/out"; then
    echo "FAIL: $name $* --help: status $status, output:"
    cat "$tmp/out" "$tmp/err"
    fails=1
  fi
}

one_past_last_cpu=$(nproc --all)

refused "$netload" "unknown option '--bogus'" --bogus
# A misspelled option is named whatever follows it: a value, "--", another option, nothing.
psp="netload: unknown option '--psp' (did you mean '--pps'?)"
refused "$netload" "$psp" --psp 1000
refused "$netload" "$psp" --psp=1000
refused "$netload" "$psp" -t UDP_STREAM --psp 1000 -- -m 64
refused "$netload" "$psp" --psp --rate 1m
refused "$netload" "$psp" --psp
refused "$netload" "'-m' is a test option: give it after --" -t UDP_STREAM -m 64
refused "$netload" "'--pps' is not a test option: give it before --" -t UDP_STREAM -- --pps 1000
refused "$netload" "unknown option '--zerocpy' (did you mean '--zerocopy'?)" -- --zerocpy
refused "$netload" "did you mean --bitrate?" --iperf3 -c 127.0.0.1 --bitrat 100m
refused "$netload" "-l must be a positive number of seconds" -l abc
refused "$netload" "-l must be a positive number of seconds" -l -300
refused "$netload" "--streams must be a whole number from 1 to 64" --streams 0
refused "$netload" "-p must be a whole number from 1 to 65535" -p 70000
refused "$netload" "--send-copy and --zerocopy: one way of sending, not both" -- --send-copy --zerocopy
refused "$netload" "--mss must be a whole number from 88 to 32767" -t TCP_STREAM -- --mss 20
refused "$netload" "--mss must be a whole number from 88 to 32767" -t TCP_STREAM -- --mss 40000
refused "$netload" "a TCP message is at most 16 MiB" -t TCP_STREAM -- -m 32M
refused "$netload" "needs a value" -t UDP_STREAM -l
refused "$netload" "unexpected argument 'stray'" -t UDP_STREAM stray
refused "$netload" "may not run on CPU $one_past_last_cpu" -T "$one_past_last_cpu"
refused "$netload" "netperf option -b (burst size) is not supported" -b 4
refused "$netload" "iperf3 option --logfile (output to a file)" --iperf3 -c 127.0.0.1 --logfile x
refused "$netload" "iperf3 -f t: netload prints k, m, g" --iperf3 -c 127.0.0.1 -f t
refused "$netload" "-f x: the units are k, m or g" -f x
refused "$netload" "-M (the receiver's bytes per recv()) applies to TCP_STREAM only; the MSS is --mss" -t UDP_STREAM -- -M 1200
refused "$netload" "--omit 1.5 is not a whole number of --interval 1 s" --omit 1.5 --interval 1
refused "$netload" "--iperf3 goes first" -t UDP_STREAM --iperf3 -c 127.0.0.1
help "$netload"
grep -q -- '-b burst size' "$tmp/out" || { echo "FAIL: netload --help does not name the refused netperf options"; fails=1; }
grep -q -- '--iperf3' "$tmp/out" || { echo "FAIL: netload --help does not mention --iperf3"; fails=1; }
grep -q -- '-P data port' "$tmp/out" || { echo "FAIL: netload --help does not name the refused test options"; fails=1; }

refused "$netserve" "unknown option '--bogus'" -p 0 --bogus
rxthreads="netserve: unknown option '--rxthreads' (did you mean '--rx-threads'?)"
refused "$netserve" "$rxthreads" -p 0 --rxthreads 2
refused "$netserve" "$rxthreads" --rxthreads 2
refused "$netserve" "$rxthreads" --rxthreads 2 -p 0
refused "$netserve" "$rxthreads" -p 0 --rxthreads -- 2
refused "$netserve" "$rxthreads" -p 0 --rxthreads --max-tests 4
refused "$netserve" "$rxthreads" -p 0 --rxthreads
refused "$netserve" "--max-streams must be a whole number from 1 to 1024" -p 0 --max-streams many
refused "$netserve" "--max-duration must be a number of seconds from 0.001 to 10000000" -p 0 --max-duration 1e9
refused "$netserve" "--port is required"
refused "$netserve" "needs a value" -p
refused "$netserve" "unexpected argument 'stray'" -L 127.0.0.1 stray -p 0
refused "$netserve" "-p: bad port '70000'" -p 70000
refused "$netserve" "--engine xdp: needs --interface DEV" -p 0 --engine xdp
refused "$netserve" "apply only with --engine xdp" -p 0 --interface lo
refused "$netserve" "apply only with --engine xdp" -p 0 --xdp-pass
refused "$netserve" "--engine" -p 0 --engine dpdk
help "$netserve"
grep -q '^Budget, whole process' "$tmp/out" || { echo "FAIL: netserve --help lost its budget footer"; fails=1; }

if [ -n "$harness" ]; then
  refused "$harness" "unknown option '--bogus'" run --bogus
  refused "$harness" "unknown option '--bogus'" --bogus
  durration="harness: unknown option '--durration' (did you mean '--duration'?)"
  refused "$harness" "$durration" run --durration 5 lo.toml
  refused "$harness" "$durration" run lo.toml --durration 5
  refused "$harness" "$durration" run --durration -- lo.toml
  refused "$harness" "$durration" run --durration --repeats 2 lo.toml
  refused "$harness" "$durration" run --durration
  refused "$harness" "unknown option '--evry' (did you mean '--every'?)" watch --evry 15m lo.toml
  refused "$harness" "a command is required"
  refused "$harness" "unknown command 'frob'" frob
  refused "$harness" "needs a value" run --results
  refused "$harness" "not a finite number" run plan.toml --duration nan
  refused "$harness" "dir is required" report
  refused "$harness" "unexpected argument 'two'" run one two
  refused "$harness" "unexpected argument 'two'" run one two three
  help "$harness"
  timeout 20 "$harness" run --help >"$tmp/out" 2>&1
  head -n 1 "$tmp/out" | grep -q '^Usage: harness run' || { echo "FAIL: harness run --help:"; cat "$tmp/out"; fails=1; }
fi
[ "$fails" -eq 0 ] && echo "ok: every command-line error exits 2 with one line naming the program"
exit "$fails"
