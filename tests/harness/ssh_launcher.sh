#!/bin/sh
# The ssh launcher against a real sshd: the test starts its own sshd on 127.0.0.1/127.0.0.2 on a free
# port with a throw-away host key and client key, then runs a two-instance plan whose hosts all use the
# ssh launcher. It checks the run succeeded through ssh (master connection, multiplexed commands, remote
# stop of netserve by pid) and that nothing it started is left running.
set -eu
harness=$1
build=$2
[ "$(id -u)" = 0 ] || { echo "SKIP: sshd needs root to run here"; exit 77; }
tmp=$(mktemp -d /tmp/harness-sshd.XXXXXX)
cleanup() { [ -f "$tmp/sshd.pid" ] && kill "$(cat "$tmp/sshd.pid")" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$tmp/bin" "$tmp/results"
# The remote netserve's end reaches the harness a moment after it exits, as over a real network (here
# the session stays 0.5 s): a stop the harness asked for must not be mistaken for a failure meanwhile.
cat > "$tmp/bin/netserve" <<WRAP
#!/bin/sh
status=0
"$build/netserve/netserve" "\$@" || status=\$?
sleep 0.5
exit \$status
WRAP
chmod +x "$tmp/bin/netserve"
ln -s "$build/netload/netload" "$tmp/bin/netload"
. "$(dirname "$0")/../support/throwaway_sshd.sh"
start_throwaway_sshd "$tmp" 127.0.0.1 127.0.0.2

opts='ssh_options = ["StrictHostKeyChecking=no", "UserKnownHostsFile=/dev/null", "LogLevel=ERROR"]'
cat > "$tmp/ssh.toml" <<PLAN
name = "ssh"
[defaults]
duration = 2
warmup = 1
lead = 2.0
ports = [0, 0]
[hosts]
server = { address = "127.0.0.1", launcher = "ssh", user = "root", ssh_port = $port, identity = "$tmp/client_key", bin_dir = "$tmp/bin", $opts }
client = { address = "127.0.0.2", launcher = "ssh", user = "root", ssh_port = $port, identity = "$tmp/client_key", bin_dir = "$tmp/bin", $opts }
[[tests]]
name = "over-ssh"
message_size = 100
pps = 2000
topology = "fan-in"
server = "server"
clients = ["client", "client"]
PLAN

"$harness" run "$tmp/ssh.toml" --results "$tmp/results" --no-live > "$tmp/out" 2> "$tmp/err" || {
  echo "FAIL: harness over ssh exited $?"; cat "$tmp/err" "$tmp/out"; exit 1; }
cat "$tmp/out"
# Stopping the remote netserve is what we asked for: no "ended with status 255" from its ssh client.
if grep -q "ended with status" "$tmp/err"; then echo "FAIL: a stop we asked for reported as a failure:"; cat "$tmp/err"; exit 1; fi
dir=$(ls -d "$tmp"/results/ssh-*)
grep -q '"ok": true' "$dir/summary.json" || { echo "FAIL: run not ok"; cat "$dir/summary.json"; exit 1; }
[ "$(ls "$dir/raw/over-ssh-m100" | wc -l)" = 3 ] || { echo "FAIL: expected run.json + 2 raw files"; exit 1; }
# The commands really went through ssh, and the remote netserve was stopped by pid over ssh.
grep -q "ControlMaster=yes" "$dir/environment.json" || { echo "FAIL: no ssh master connection"; exit 1; }
grep -q "kill -TERM" "$dir/environment.json" || { echo "FAIL: netserve not stopped remotely"; exit 1; }
sleep 0.5
if pgrep -f "$tmp/bin/net" >/dev/null; then echo "FAIL: left running:"; pgrep -af "$tmp/bin/net"; exit 1; fi
if pgrep -f "ControlMaster=yes.*$tmp/client_key" >/dev/null; then echo "FAIL: ssh master left running"; exit 1; fi
echo "ok: two instances over ssh via sshd on 127.0.0.1:$port"

# start_long NAME N: the plan above as NAME, 30 s long, in the background ($pid; stderr in $tmp/errN);
# returns once its two remote netload processes run.
start_long() {
  sed -e 's/^duration = 2/duration = 30/' -e "s/^name = \"ssh\"/name = \"$1\"/" "$tmp/ssh.toml" > "$tmp/$1.toml"
  "$harness" run "$tmp/$1.toml" --results "$tmp/results" --no-live > "$tmp/out$2" 2> "$tmp/err$2" &
  pid=$!
  # Only the test's netload processes (they carry --start-on-stdin): the preflight's `netload --version` on
  # each host can briefly make two as well.
  for i in $(seq 150); do
    [ "$(pgrep -fc "^$tmp/bin/netload .*--start-on-stdin" || true)" -ge 2 ] && return
    sleep 0.1
  done
  echo "FAIL: remote netload never started"; cat "$tmp/err$2"; kill $pid; exit 1
}

# Ctrl-C during a run over ssh: the remote netload processes (which a signal to the local ssh client
# does not reach) and the remote netserve must be stopped too.
start_long sshint 2
kill -INT $pid
wait $pid || true
for i in $(seq 50); do
  pgrep -f "$tmp/bin/net" >/dev/null || break
  sleep 0.1
done
if pgrep -f "$tmp/bin/net" >/dev/null; then echo "FAIL: left running after Ctrl-C:"; pgrep -af "$tmp/bin/net"; exit 1; fi
grep -q "interrupted" "$tmp/err2" || { echo "FAIL: no 'interrupted'"; cat "$tmp/err2"; exit 1; }
# Stopped by the harness, not merely by a broken pipe at netload's next interval line.
dir2=$(ls -d "$tmp"/results/sshint-*)
kills=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print(sum("kill -TERM" in c for c in e["hosts"]["client"]["commands"]))' "$dir2/environment.json")
[ "$kills" = 2 ] || { echo "FAIL: expected 2 remote kills of netload on the client host, got $kills"; exit 1; }
echo "ok: Ctrl-C over ssh stopped the remote netload and netserve processes"

# A remote netload stopped with SIGSTOP ignores `kill -TERM`: 5 s after Ctrl-C the harness kills every
# process, the remote ones over ssh (kill -KILL), and nothing is left on the remote side.
start_long sshstop 3
stopped=$(pgrep -f "^$tmp/bin/netload .*--start-on-stdin" | head -1)
kill -STOP "$stopped"
started=$(date +%s)
kill -INT $pid
for i in $(seq 150); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
elapsed=$(( $(date +%s) - started ))
if kill -0 $pid 2>/dev/null; then
  echo "FAIL: the harness still runs 15 s after Ctrl-C with a stopped remote netload"; kill -CONT "$stopped"; kill -KILL "$stopped" $pid; exit 1
fi
wait $pid || true
for i in $(seq 50); do pgrep -f "$tmp/bin/net" >/dev/null || break; sleep 0.1; done
if pgrep -f "$tmp/bin/net" >/dev/null; then
  echo "FAIL: left running after Ctrl-C:"; pgrep -af "$tmp/bin/net"; kill -CONT "$stopped"; kill -KILL "$stopped"; exit 1
fi
dir3=$(ls -d "$tmp"/results/sshstop-*)
grep -q "kill -KILL $stopped" "$dir3/environment.json" || { echo "FAIL: the stopped netload was not killed over ssh"; cat "$tmp/err3"; exit 1; }
echo "ok: a stopped remote netload was killed over ssh; the harness ended ${elapsed}s after Ctrl-C"
