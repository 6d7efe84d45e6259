#!/usr/bin/env bash
# Lab test: nothing netserve sends leaves in IP fragments. Across the lab's circuit (MTU 1500 both sides;
# loopback's 64 KiB MTU fits any UDP datagram), netserve in instance 1, clients in the device namespace:
#  - netload UDP_RR -r 1,65507 is refused at registration with netload's own MTU words, -r 1,1473 too,
#    and -r 1,1472 runs;
#  - a raw client's reverse UDP_STREAM of 65507-byte messages (netload would refuse it itself) is refused
#    the same way, and one of 1472 runs;
#  - the device's kernel reassembled nothing meanwhile (Ip: ReasmReqds did not move).
#   lab_df.sh LAB_CLI NETSERVE NETLOAD
lab_cli=$1 netserve=$2 netload=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

lab_start "$lab_cli" "$(lab_file ldf 1 'mtu_onprem = 1500' 'mtu_vpc = 1500')"
netserve_in ldf-i1 198.19.0.2 11256 "$work/ns"
load() { ip netns exec ldf-dev "$netload" -H 198.19.0.2 -p 11256 -l 0.5 "$@"; }
raw() { ip netns exec ldf-dev python3 "$here/raw_reverse.py" 198.19.0.2 11256 "$1"; }
reassembled() {  # the device's Ip: ReasmReqds, fragments its kernel was handed to put back together
  ip netns exec ldf-dev awk '/^Ip:/ { if (!n) { n = split($0, k) } else { split($0, v); for (i = 1; i <= n; i++) if (k[i] == "ReasmReqds") print v[i] } }' /proc/net/snmp
}
before=$(reassembled)

for answer in 65507 1473; do
  if load -t UDP_RR --pps 100 -- -r 1,$answer >"$work/rr.out" 2>"$work/rr.err"; then
    echo "FAIL: UDP_RR answers of $answer bytes across a 1500 MTU ran (exit 0)"; exit 1
  fi
  want="message of $answer bytes does not fit the path MTU 1500 to 198.18.0.2 (largest UDP payload 1472)"
  grep -qF "rejected: $want" "$work/rr.err" || { echo "FAIL: -r 1,$answer: not refused at registration: $(cat "$work/rr.err")"; exit 1; }
  echo "-r 1,$answer: $(cat "$work/rr.err")"
done
# exit 4: ran and reconciles, but this short paced test missed its rate; not what is tested here
load -t UDP_RR --pps 100 -- -r 1,1472 >"$work/fits.out" 2>"$work/fits.err" || [[ $? -eq 4 ]] ||
  { echo "FAIL: UDP_RR -r 1,1472 fits 1500 but failed: $(cat "$work/fits.err")"; exit 1; }

said=$(raw 65507)
grep -qF "refused: rejected: message of 65507 bytes does not fit the path MTU 1500 to 198.18.0.2 (largest UDP payload 1472)" <<<"$said" ||
  { echo "FAIL: a raw reverse stream of 65507-byte messages: $said"; exit 1; }
echo "raw reverse -m 65507: $said"
said=$(raw 1472)
[[ $said =~ ^ran:\ ([0-9]+) ]] && (( BASH_REMATCH[1] > 0 )) || { echo "FAIL: a raw reverse stream of 1472-byte messages: $said"; exit 1; }
echo "raw reverse -m 1472: $said"

# A stock iperf3 client asking netserve to send 8000-byte datagrams (-R): refused when it registers, as
# netload's tests are, with iperf3's own error; never an empty test, never a fragment.
if command -v iperf3 >/dev/null; then
  if ip netns exec ldf-dev timeout 20 iperf3 -c 198.19.0.2 -p 11256 -u -R -l 8000 -b 10M -t 1 >"$work/i3.out" 2>&1; then
    echo "FAIL: iperf3 -u -R -l 8000 across a 1500 MTU ran (exit 0): $(tail -3 "$work/i3.out")"; exit 1
  fi
  grep -qF "does not fit the path MTU 1500" "$work/ns.err" ||
    { echo "FAIL: iperf3 -R -l 8000: netserve did not say why it refused"; exit 1; }
  echo "iperf3 -u -R -l 8000: refused: $(tail -1 "$work/i3.out")"
fi

after=$(reassembled)
(( after == before )) || { echo "FAIL: the device reassembled $((after - before)) fragments from netserve"; exit 1; }
echo "ok: nothing fragmented (ReasmReqds $before -> $after)"
