# Sourced by iperf3_peer_plan.sh and netserver_peer_plan.sh: a stock server started on a free port of
# 127.0.0.1 and checked to be listening, and the two-instance fan-in plan that drives two of them.
# Needs $tmp and $pids_to_clean from the sourcing script.

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# listening PORT PID: 0 when PID's own socket listens on 127.0.0.1:PORT, 1 not yet, 2 PID is gone (it could
# not bind: another test took the port first). Read from /proc: a probe connection would be a test to the
# server (the one test an iperf3 -s -1 serves; a forked netserver child).
listening() {
  python3 - "$1" "$2" <<'PY'
import sys
import os
want = "0100007F:%04X" % int(sys.argv[1])
inodes = {l.split()[9] for l in list(open("/proc/net/tcp"))[1:] if l.split()[1] == want and l.split()[3] == "0A"}
try:
    if open(f"/proc/{sys.argv[2]}/stat").read().rsplit(")", 1)[1].split()[0] == "Z":
        sys.exit(2)
    mine = {os.readlink(f"/proc/{sys.argv[2]}/fd/{fd}") for fd in os.listdir(f"/proc/{sys.argv[2]}/fd")}
except OSError:
    sys.exit(2)
sys.exit(0 if any(f"socket:[{i}]" in mine for i in inodes) else 1)
PY
}

# start_stock NAME LAUNCH: LAUNCH PORT starts the server in the background (in a process group of its own,
# setsid, when it forks) on a free port; retried on another port when one was taken. Sets $port.
start_stock() {
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    "$2" "$port"
    pid=$!
    pids_to_clean="$pids_to_clean $pid"
    for _ in $(seq 50); do
      listening "$port" "$pid"
      case $? in 0) return 0 ;; 2) break ;; esac
      sleep 0.1
    done
    kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null
  done
  echo "FAIL: $1 did not listen"; exit 1
}

# write_peer_plan PEER [DEFAULTS...]: $tmp/p.toml, two instances on host a (127.0.0.2) driving the stock
# servers on ports $p1 and $p2 of host device (peer = PEER), 1 s at 1000 pps of 64 bytes; DEFAULTS are
# extra lines of its [defaults].
write_peer_plan() {
  local peer=$1
  shift
  {
    echo 'name = "p"'
    echo '[defaults]'
    for line in "$@"; do echo "$line"; done
    cat <<PLAN
duration = 1
warmup = 0
lead = 0.5
settle = 0.2
ports = [$p1, $p2]
[hosts]
device = { address = "127.0.0.1", peer = "$peer" }
a = { address = "127.0.0.2" }
[[tests]]
name = "t"
message_size = 64
pps = 1000
topology = "fan-in"
server = "device"
clients = ["a", "a"]
PLAN
  } > "$tmp/p.toml"
}
