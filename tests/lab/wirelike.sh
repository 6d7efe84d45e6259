#!/usr/bin/env bash
# wirelike.sh — the wire-like test path: two network namespaces joined by a veth pair that behaves like
# a NIC without UDP segmentation offload, with the receiver's network stack steered to one CPU.
#
#   wirelike.sh up NAME [RECV_CPU [SUBNET]]   create or re-apply (idempotent); RECV_CPU default 0
#   wirelike.sh down NAME                     end processes left inside, delete both namespaces
#   wirelike.sh counters NAME                 the kernel's counters of the path, one JSON object on stdout
#   wirelike.sh info NAME                     tx/rx namespaces, devices, addresses, receiver CPU (shell words)
#
# Or source it (functions wl_up, wl_down, wl_counters, wl_info, wl_require) from another script.
#
# Why this path: on loopback a UDP GSO buffer is never cut into datagrams, so a receiver with UDP GRO gets
# 64 datagrams for the price of one and loopback figures are not real-path figures. Here:
#   NAME-tx  198.18.X.1/30  wl-tx ══ veth ══ wl-rx  198.18.X.2/30  NAME-rx
#   - gso_max_segs 1 on both ends: the sender's kernel cuts every GSO/TSO buffer before the veth, so every
#     datagram is its own frame, as on a NIC without UDP segmentation offload. veth GRO stays off (veth's
#     default), so the receiver's stack also handles every datagram on its own.
#   - RPS on wl-rx's rx-0 queue steers the receiver's whole stack (IP, UDP, socket enqueue) to RECV_CPU, as
#     a NIC's interrupt would: the receiving program pinned to that CPU then competes with its own softirq,
#     which is how receive livelock shows up on a real one-queue receiver.
#   - static ARP entries and IPv6 off: no ARP, ND or MLD frame lands in the counters the tests compare.
# Only the two namespaces this script creates ever carry traffic (198.18.0.0/15, RFC 2544 benchmarking
# space); no device of the path ever exists in the host's own namespace.
set -euo pipefail

WL_TX_DEV=wl-tx
WL_RX_DEV=wl-rx
WL_MTU=1500

wl_skip() { echo "SKIP: $*"; exit 77; }

# Same rules as tests/lab/lab_common.sh: exit 77 saying why, before anything is touched.
wl_require() {
  [[ $(id -u) -eq 0 ]] || wl_skip "the wire-like path needs root (network namespaces, veth, sysfs)"
  unshare --net true 2>/dev/null || wl_skip "this kernel or sandbox refuses new network namespaces"
  local t
  for t in ip python3 taskset; do command -v "$t" >/dev/null || wl_skip "$t is not installed"; done
}

wl_check_name() {
  [[ $1 =~ ^[a-z0-9]{1,10}$ ]] || { echo "wirelike: NAME must be 1-10 of a-z 0-9, got '$1'" >&2; exit 2; }
}

# Third octet of 198.18.X.0/30: derived from the name, so two paths get different addresses and logs and
# packet captures say which path they come from (the namespaces keep them apart anyway).
wl_subnet_of() { echo $(( $(printf '%s' "$1" | cksum | cut -d' ' -f1) % 254 + 1 )); }

wl_ns_exists() { ip netns list | awk '{print $1}' | grep -qx "$1"; }
wl_link_exists() { ip -n "$1" link show "$2" >/dev/null 2>&1; }
wl_mac() { ip -n "$1" -j link show "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'; }

wl_ensure_ns() {  # NS
  wl_ns_exists "$1" || ip netns add "$1"
  # IPv6 off: router solicitations and MLD reports would add frames to the veth counters.
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$1" link set lo up
}

# wl_up NAME [RECV_CPU [SUBNET]]: creates what is missing and (re)applies every setting, so a second run is
# a no-op and a run after a half-done one completes it.
wl_up() {
  local name=$1 cpu=${2:-0} x=${3:-}
  wl_check_name "$name"
  [[ -n $x ]] || x=$(wl_subnet_of "$name")
  [[ $x =~ ^[0-9]+$ && $x -ge 0 && $x -le 255 ]] || { echo "wirelike: SUBNET must be 0-255, got '$x'" >&2; exit 2; }
  [[ $cpu =~ ^[0-9]+$ && -d /sys/devices/system/cpu/cpu$cpu ]] || { echo "wirelike: no CPU $cpu" >&2; exit 2; }
  [[ $cpu -eq 0 || $(cat "/sys/devices/system/cpu/cpu$cpu/online" 2>/dev/null || echo 1) -eq 1 ]] ||
    { echo "wirelike: CPU $cpu is offline" >&2; exit 2; }
  local tx=$name-tx rx=$name-rx
  wl_ensure_ns "$tx"
  wl_ensure_ns "$rx"
  # Made inside the tx namespace with its peer placed straight into the rx one: never in the host's.
  # One queue each way, as a one-queue NIC: veth otherwise gets a queue per CPU, records the sender's tx
  # queue as the receiver's rx queue, and a flow hashed to rx-1 would escape rx-0's RPS setting.
  if ! wl_link_exists "$tx" "$WL_TX_DEV"; then
    if wl_link_exists "$rx" "$WL_RX_DEV"; then ip -n "$rx" link del "$WL_RX_DEV"; fi  # a stray half from an odd state
    ip -n "$tx" link add "$WL_TX_DEV" numtxqueues 1 numrxqueues 1 type veth \
      peer name "$WL_RX_DEV" numtxqueues 1 numrxqueues 1 netns "$rx"
  fi
  ip -n "$tx" link set "$WL_TX_DEV" mtu "$WL_MTU" gso_max_segs 1 up
  ip -n "$rx" link set "$WL_RX_DEV" mtu "$WL_MTU" gso_max_segs 1 up
  # Exactly one address each: a re-run with another SUBNET must not leave the old one behind.
  ip -n "$tx" addr flush dev "$WL_TX_DEV"
  ip -n "$rx" addr flush dev "$WL_RX_DEV"
  ip -n "$tx" addr add "198.18.$x.1/30" dev "$WL_TX_DEV"
  ip -n "$rx" addr add "198.18.$x.2/30" dev "$WL_RX_DEV"
  ip -n "$tx" neigh replace "198.18.$x.2" lladdr "$(wl_mac "$rx" "$WL_RX_DEV")" dev "$WL_TX_DEV" nud permanent
  ip -n "$rx" neigh replace "198.18.$x.1" lladdr "$(wl_mac "$tx" "$WL_TX_DEV")" dev "$WL_RX_DEV" nud permanent
  # RPS: the receiving veth's stack runs on RECV_CPU (hex CPU mask). sysfs is the rx namespace's own under
  # `ip netns exec`, which mounts it afresh.
  # Every rx queue, should the device have more than one (made by an older version of this script).
  local mask
  mask=$(printf '%x' $((1 << cpu)))
  ip netns exec "$rx" sh -c "for q in /sys/class/net/$WL_RX_DEV/queues/rx-*; do echo $mask > \$q/rps_cpus; done"
}

# wl_down NAME: ends what still runs inside the namespaces (a netserve from a failed run would keep a
# deleted namespace alive), then deletes them; the veth pair goes with them.
wl_down() {
  local name=$1 ns p pids
  wl_check_name "$name"
  for ns in "$name-tx" "$name-rx"; do
    wl_ns_exists "$ns" || continue
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    for p in $pids; do kill -TERM "$p" 2>/dev/null || true; done
    for p in $pids; do
      for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$p" 2>/dev/null || true
    done
    ip netns del "$ns"
  done
}

# wl_info NAME: shell assignments (eval-able) describing a path that is up.
wl_info() {
  local name=$1
  wl_check_name "$name"
  if ! { wl_ns_exists "$name-rx" && wl_link_exists "$name-rx" "$WL_RX_DEV"; }; then
    echo "wirelike: path '$name' is not up" >&2
    return 1
  fi
  local rx_addr tx_addr mask
  rx_addr=$(ip -n "$name-rx" -4 -o addr show dev "$WL_RX_DEV" | awk '{print $4}' | cut -d/ -f1)
  tx_addr=$(ip -n "$name-tx" -4 -o addr show dev "$WL_TX_DEV" | awk '{print $4}' | cut -d/ -f1)
  mask=$(ip netns exec "$name-rx" cat "/sys/class/net/$WL_RX_DEV/queues/rx-0/rps_cpus" | tr -d ',')
  echo "WL_TX_NS=$name-tx WL_RX_NS=$name-rx WL_TX_ADDR=$tx_addr WL_RX_ADDR=$rx_addr WL_RECV_CPU=$(wl_mask_cpu "$mask")"
}

wl_mask_cpu() {  # hex mask -> lowest CPU set in it (the path steers to exactly one)
  local m=$((16#$1)) c=0
  while (( m > 0 && (m & 1) == 0 )); do m=$((m >> 1)); c=$((c + 1)); done
  echo "$c"
}

# wl_counters NAME: every counter the ground truth needs, read at one point in time, as one JSON object.
#   sender_veth_tx_packets / _tx_dropped   frames the sender's veth passed on / could not (the receiver
#                                          CPU's backlog was full: veth counts that drop on the sending end)
#   sender_tcp_out_segs, sender_icmp_out_msgs  the sender's non-UDP frames (test control), to subtract
#   receiver_veth_rx_packets / _rx_dropped
#   receiver_udp_*                          Udp: line of the rx namespace's /proc/net/snmp
#   receiver_softnet_*                      /proc/net/softnet_stat row of the receiver CPU: machine-wide,
#                                          so other traffic steered to that CPU counts too
wl_counters() {
  local name=$1 cpu
  wl_check_name "$name"
  local info
  info=$(wl_info "$name") || return 1   # eval "$(…)" alone would hide the failure from set -e
  eval "$info"
  cpu=$WL_RECV_CPU
  {
    echo "#txlink"; ip -n "$name-tx" -j -s link show dev "$WL_TX_DEV"
    echo "#rxlink"; ip -n "$name-rx" -j -s link show dev "$WL_RX_DEV"
    echo "#txsnmp"; ip netns exec "$name-tx" cat /proc/net/snmp
    echo "#rxsnmp"; ip netns exec "$name-rx" cat /proc/net/snmp
    echo "#softnet"; cat /proc/net/softnet_stat
  } | python3 -c '
import json, sys, time
name, cpu = sys.argv[1], int(sys.argv[2])
sec, cur = {}, None
for line in sys.stdin:
    if line.startswith("#"):
        cur = line[1:].strip(); sec[cur] = []
    else:
        sec[cur].append(line.rstrip("\n"))
def snmp(lines):
    out, hdr = {}, {}
    for l in lines:
        k, _, v = l.partition(": ")
        if k in hdr:
            out[k] = dict(zip(hdr[k], map(int, v.split())))
        else:
            hdr[k] = v.split()
    return out
def link(lines):
    return json.loads("".join(lines))[0]["stats64"]
tx, rx = link(sec["txlink"]), link(sec["rxlink"])
ts, rs = snmp(sec["txsnmp"]), snmp(sec["rxsnmp"])
# softnet_stat: one row per online CPU; column 13 is the CPU number (kernels >= 5.10), else the row index.
row = None
for i, l in enumerate(sec["softnet"]):
    f = [int(x, 16) for x in l.split()]
    if (f[12] if len(f) > 12 else i) == cpu:
        row = f
print(json.dumps({
    "path": name, "time": time.time(), "receiver_cpu": cpu,
    "sender_veth_tx_packets": tx["tx"]["packets"], "sender_veth_tx_dropped": tx["tx"]["dropped"],
    "sender_tcp_out_segs": ts["Tcp"]["OutSegs"], "sender_icmp_out_msgs": ts["Icmp"]["OutMsgs"],
    "sender_udp_out_datagrams": ts["Udp"]["OutDatagrams"], "sender_udp_sndbuf_errors": ts["Udp"]["SndbufErrors"],
    "receiver_veth_rx_packets": rx["rx"]["packets"], "receiver_veth_rx_dropped": rx["rx"]["dropped"],
    "receiver_udp_in_datagrams": rs["Udp"]["InDatagrams"], "receiver_udp_rcvbuf_errors": rs["Udp"]["RcvbufErrors"],
    "receiver_udp_in_errors": rs["Udp"]["InErrors"], "receiver_udp_no_ports": rs["Udp"]["NoPorts"],
    "receiver_softnet_processed": row[0] if row else None, "receiver_softnet_dropped": row[1] if row else None,
    "receiver_softnet_time_squeeze": row[2] if row else None,
}))
' "$name" "$cpu"
}

wl_main() {
  local cmd=${1:-} name=${2:-}
  case "$cmd" in
    up) [[ -n $name ]] || { wl_usage; exit 2; }; wl_require; wl_up "$name" "${3:-0}" "${4:-}" ;;
    down) [[ -n $name ]] || { wl_usage; exit 2; }; wl_require; wl_down "$name" ;;
    counters) [[ -n $name ]] || { wl_usage; exit 2; }; wl_require; wl_counters "$name" ;;
    info) [[ -n $name ]] || { wl_usage; exit 2; }; wl_require; wl_info "$name" ;;
    -h|--help) wl_usage ;;
    *) wl_usage >&2; exit 2 ;;
  esac
}

wl_usage() { sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

# Run as a command, not when sourced.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then wl_main "$@"; fi
