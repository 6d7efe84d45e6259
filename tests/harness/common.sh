# Shell helpers of the harness tests (sourced; POSIX sh). The caller sets $tmp and $pids_to_clean.

# fan_in_plan NAME DURATION [PORTS] [CLIENTS] [LOAD]: $tmp/NAME.toml, a plan of one test "t" (UDP -m 64,
# LOAD its line of the test, by default "pps = 1000") from host a (127.0.0.2) to host device (127.0.0.1).
fan_in_plan() {
  ports=${3:-"[0, 0]"}
  clients=${4:-'["a", "a"]'}
  load=${5:-"pps = 1000"}
  cat > "$tmp/$1.toml" <<PLAN
name = "$1"
[defaults]
duration = $2
skew_bound_ms = 200  # what these tests check is not the start: a loaded 2-core machine starts late
warmup = 0
lead = 0.5
settle = 0.2
ports = $ports
[hosts]
device = { address = "127.0.0.1" }
a = { address = "127.0.0.2" }
[[tests]]
name = "t"
message_size = 64
$load
topology = "fan-in"
server = "device"
clients = $clients
PLAN
}

# hold_port tcp|both: a process holding a 127.0.0.1 port until the test ends: listening on TCP and never
# saying a word; with "both", the same UDP port bound too. Sets $port.
hold_port() {
  python3 -c '
import socket, sys, time
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(8)
if sys.argv[1] == "both":
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", t.getsockname()[1]))
print(t.getsockname()[1], flush=True)
time.sleep(60)' "$1" > "$tmp/port" &
  pids_to_clean="$pids_to_clean $!"
  for i in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/port")
}
