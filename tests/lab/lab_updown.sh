#!/usr/bin/env bash
# Lab test: `lab up` is idempotent, `lab down` leaves `ip netns list` and the host's links as they were,
# also after a failed run (netserve killed mid-test, netload still running inside the lab), and the lab
# refuses to run without root, naming the reason.
#   lab_updown.sh LAB_CLI NETSERVE NETLOAD
lab_cli=$1 netserve=$2 netload=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

toml=$(lab_file lud 3 'rate = "20M"' 'pps = 5000' 'mtu_onprem = 1500' 'mtu_vpc = 1400')
host_snapshot() { ip netns list | awk '{print $1}' | sort; ip -o link show | awk -F': ' '{print $2}' | sort; }
# The lab as configured (not its counters): links, addresses, routes, qdiscs, nft rules per namespace.
lab_snapshot() {
  local ns
  for ns in lud-circuit lud-dev lud-i1 lud-i2 lud-i3; do
    echo "== $ns"
    ip -n "$ns" -br link | awk '{print $1, $2}'
    ip -n "$ns" -br addr
    ip -n "$ns" route
    tc -n "$ns" qdisc show | sed '/^qdisc noqueue/d'
    ip netns exec "$ns" nft list ruleset | sed -E 's/packets [0-9]+ bytes [0-9]+/packets N bytes N/'
  done
}
expect_same() {  # expect_same WHAT FILE_A FILE_B
  if ! diff -u "$2" "$3"; then echo "FAIL: $1"; exit 1; fi
}

host_snapshot >"$work/host0"
lab_start "$lab_cli" "$toml"
lab_snapshot >"$work/lab1"
"$lab_cli" up "$toml" >/dev/null
lab_snapshot >"$work/lab2"
expect_same "a second 'lab up' changed the lab" "$work/lab1" "$work/lab2"
grep -q 'tbf' "$work/lab1" || { echo "FAIL: no tbf qdisc in the circuit"; exit 1; }
grep -q 'limit rate over 5000/second' "$work/lab1" || { echo "FAIL: no packet-rate limit in the circuit"; exit 1; }
"$lab_cli" status | grep -q '^lab lud: ' || { echo "FAIL: 'lab status' does not list the lab"; exit 1; }

"$lab_cli" down "$toml" >/dev/null
host_snapshot >"$work/host1"
expect_same "'lab down' left something behind" "$work/host0" "$work/host1"
"$lab_cli" status "$toml" | grep -q 'present' && { echo "FAIL: 'lab status' still shows namespaces"; exit 1; }

# A failed run: netserve killed while netload sends; then down, with netload still inside the lab.
"$lab_cli" up "$toml" >/dev/null
netserve_in lud-dev 198.18.0.2 11256 "$work/ns"
netload_in lud-i1 "$work/load.json" -H 198.18.0.2 -p 11256 -t UDP_STREAM -l 5 --pps 1000 --json -- -m 100
sleep 0.7
kill -9 "${server_pids[0]}"
sleep 0.3
"$lab_cli" down "$toml" >/dev/null
if wait_loads; then echo "FAIL: netload reported success although its server was killed"; exit 1; fi
host_snapshot >"$work/host2"
expect_same "'lab down' after a failed run left something behind" "$work/host0" "$work/host2"
echo "netload after its server was killed: $(head -c 300 "$work/load.json.err")"

# Not root: a one-line reason, before anything is touched.
if command -v setpriv >/dev/null; then
  cp "$toml" "$work/public.toml"; chmod 755 "$work"; chmod 644 "$work/public.toml"
  if err=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$lab_cli" up "$work/public.toml" 2>&1); then
    echo "FAIL: 'lab up' succeeded without root"; exit 1
  fi
  grep -q 'needs root' <<<"$err" || { echo "FAIL: unclear error without root: $err"; exit 1; }
  echo "without root: $err"
fi
lab_toml=""  # already down
echo "ok: up twice identical, down restores $(wc -l <"$work/host0") host entries, also after a failed run"
