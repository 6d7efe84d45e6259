#!/usr/bin/env bash
# Lab test: TCP_INFO across a bit-rate limited circuit (tbf at 50 Mbit/s, a 20 ms queue), in both
# directions: netload sending (forward) and netserve sending (--reverse). One unpaced stream fills the
# queue and overflows it (cubic, and BBR too, measured: hundreds of retransmits in 4 s), so:
#  (a) the end sample counts retransmits (> 0);
#  (b) the RTT under load is far above the idle RTT: the median of the interval samples after the first
#      second is above 4 x the connection's min_rtt (the idle figure the kernel keeps) and above 1 ms
#      (measured: 2 to 3 ms against 5 us; single samples dip below 1 ms when BBR drains the queue);
#  (c) netload's figures match `ss -tin` on the same connection: ss runs in a loop in the sender's
#      namespace during the test (about every 20 ms, slower on a loaded machine), each run stamped with
#      the wall clock before and after it, and every interval sample (50 ms apart, stamped too: at_ns)
#      is set beside the ss runs around it. Cumulative figures lie between those of the last ss run that
#      ended before the sample and the first that began after it (within 100 ms): the retransmits to
#      10 % or 3 segments, the bytes acked exactly; MSS and path MTU are equal. The RTT moves by a third
#      within 10 ms under BBR, so one pair compares instants more than figures (measured: a third of
#      the pairs 10 % apart, both ways): the median over the samples of netload's RTT / ss's at the
#      nearest run (within 25 ms) is within 10 % of 1 (measured: 0.98 to 1.04 over 14 directions, idle
#      or beside a build). The data connection is the one that acked the most bytes (the control
#      connection on the same port carries a few hundred), followed by its addresses.
#   lab_tcp_info.sh LAB_CLI NETSERVE NETLOAD
lab_cli=$1 netserve=$2 netload=$3
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lab_common.sh"
lab_require

duration=5 interval=0.05
lab_start "$lab_cli" "$(lab_file ltcpi 1 'rate = "50M"' 'mtu_onprem = 1500' 'mtu_vpc = 1500')"
netserve_in ltcpi-dev 198.18.0.2 11256 "$work/ns"

# ss_loop NS OUT: `ss -tin` on port 11256 in NS as often as it runs, each output framed by wall-clock
# stamps; stops by itself after the test's duration and some margin.
ss_loop() {
  ip netns exec "$1" nice -n -10 python3 - "$2" "$((duration + 3))" <<'PY' &
import subprocess, sys, time
out, until = open(sys.argv[1], "w"), time.time() + float(sys.argv[2])
while time.time() < until:
    before = time.time_ns()
    text = subprocess.run(["ss", "-tinH", "state", "established", "( sport = :11256 or dport = :11256 )"],
                          capture_output=True, text=True).stdout
    out.write(f"@ {before} {time.time_ns()}\n{text}")
    out.flush()
PY
  load_pids+=($!)
}

run() {  # run NAME SENDER_NS [netload options...]
  local name=$1 sender=$2; shift 2
  ss_loop "$sender" "$work/$name.ss"
  ip netns exec ltcpi-i1 "$netload" -H 198.18.0.2 -p 11256 -t TCP_STREAM -l $duration --interval $interval --json "$@" \
    >"$work/$name.json" 2>"$work/$name.err" || { cat "$work/$name.err"; echo "FAIL: netload ($name) failed"; exit 1; }
  wait_loads
}

check() {  # check NAME
  python3 - "$work/$1.json" "$work/$1.ss" "$1" <<'PY'
import json, re, sys
r, ss_text, name = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
assert r["ok"], r["error"]
t = r["tcp"]
assert t and t["congestion"], "no congestion control"
end = t["streams"][0]

# ss runs: (start, end, {connection: figures}); the data connection: the one that acked the most.
runs = []
for block in ss_text.split("@ ")[1:]:
    head, _, body = block.partition("\n")
    a, b = map(int, head.split())
    conns = {}
    for info in re.split(r"\n(?=\S)", body):
        acked = re.search(r"bytes_acked:(\d+)", info)
        rtt = re.search(r"\brtt:([\d.]+)/([\d.]+)", info)
        if not acked or not rtt:
            continue
        key = " ".join(info.split()[2:4])  # local and peer address:port
        retr = re.search(r"retrans:\d+/(\d+)", info)
        conns[key] = {"acked": int(acked.group(1)), "rtt_us": float(rtt.group(1)) * 1000,
                      "retransmits": int(retr.group(1)) if retr else 0,
                      "mss": int(re.search(r"\bmss:(\d+)", info).group(1)), "pmtu": int(re.search(r"pmtu:(\d+)", info).group(1))}
    runs.append((a, b, conns))
seen = [(c["acked"], k) for _, _, conns in runs for k, c in conns.items()]
assert seen, "ss never saw the connection"
data = max(seen)[1]
runs = [(a, b, conns[data]) for a, b, conns in runs if data in conns]

# (a) retransmits at the end
assert end["retransmits"] > 0, f"no retransmits at the end: {end}"
# (b) RTT under load against the idle RTT
idle = end["min_rtt_us"]
start_ns = r["intervals"][0]["start_ns"]
loaded = [i["tcp"]["streams"][0] for i in r["intervals"] if i["end_ns"] - start_ns >= 1e9 and i.get("tcp")]
assert loaded, "no interval samples after the first second"
low = sorted(s["rtt_us"] for s in loaded)[len(loaded) // 2]  # the median: BBR drains the queue now and then
assert low > 4 * idle and low > 1000, f"RTT under load {low} us (median) is not far above the idle {idle} us"
# (c) against ss: each interval sample beside the ss runs around it (a loaded machine runs ss less often:
# cumulative figures need the runs on both sides, within 100 ms; the RTT the nearest run, within 25 ms)
brackets, bad, ratios = 0, [], []
for i in r["intervals"]:
    if not i.get("tcp"):
        continue
    s = i["tcp"]["streams"][0]
    at = s["at_ns"]
    before = [x for x in runs if x[1] <= at]
    after = [x for x in runs if x[0] >= at]
    nearest = min(runs, key=lambda x: abs((x[0] + x[1]) / 2 - at))
    if abs((nearest[0] + nearest[1]) / 2 - at) <= 25e6:
        ratios.append(s["rtt_us"] / nearest[2]["rtt_us"])
    if not before or not after or after[0][0] - before[-1][1] > 100e6:
        continue
    x, y = before[-1][2], after[0][2]
    brackets += 1
    line = (f"  RTT {s['rtt_us']} us, ss {x['rtt_us']:.0f} .. {y['rtt_us']:.0f}   retransmits {s['retransmits']}, ss "
            f"{x['retransmits']} .. {y['retransmits']}   bytes acked {s['bytes_acked']}, ss {x['acked']} .. {y['acked']}   "
            f"MSS {s['snd_mss']}/{x['mss']}   PMTU {s['pmtu']}/{x['pmtu']}")
    if (not x["retransmits"] - max(3, 0.1 * x["retransmits"]) <= s["retransmits"] <= y["retransmits"] + max(3, 0.1 * y["retransmits"])
            or not x["acked"] <= s["bytes_acked"] <= y["acked"]
            or s["snd_mss"] != x["mss"] or s["pmtu"] != x["pmtu"]):
        bad.append(line)
    if brackets % 10 == 1 or line in bad:
        print(line)
assert brackets >= 15, f"only {brackets} interval samples had ss runs on both sides within 100 ms"
assert len(ratios) >= 20, f"only {len(ratios)} interval samples had an ss run within 25 ms"
assert not bad, "netload and ss differ:\n" + "\n".join(bad)
ratios.sort()
median = ratios[len(ratios) // 2]
print(f"  RTT netload / ss at the nearest run over {len(ratios)} samples: median {median:.3f}, "
      f"{sum(abs(x - 1) <= 0.1 for x in ratios)} within 10 % one by one")
assert abs(median - 1) <= 0.1, f"netload's RTT differs from ss's by {100 * (median - 1):+.1f} % (median over the samples)"
print(f"ok {name}: retransmits {end['retransmits']} at the end ({t['retransmit_percent']:.2f} %), idle RTT {idle} us, "
      f"under load {low} us (median), {brackets} samples between ss runs and {len(ratios)} beside one agree, MSS {end['snd_mss']}, PMTU {end['pmtu']}")
PY
}

run forward ltcpi-i1
check forward || exit 1
run reverse ltcpi-dev --reverse
check reverse || exit 1
