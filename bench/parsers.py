"""Parsers of the raw outputs bench/run keeps (netload JSON, iperf3 JSON, iperf2 and sockperf text), and
the pacing analysis. Each parser returns a dict with at least "ok"; on failure "error" says why."""
import json
import os
import re

# ---------------------------------------------------------------- parsers
# Each parser returns a dict with at least "ok"; on failure "error" says why (never a zero figure).

class ParseError(Exception):
    pass


def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        raise ParseError(f"missing {os.path.basename(path)}")


def _stderr_tail(path, n=3):
    try:
        lines = [l for l in open(path).read().splitlines() if l.strip()]
        return " | ".join(lines[-n:])
    except FileNotFoundError:
        return ""


def parse_netload(raw, name):
    path = os.path.join(raw, name + ".json")
    txt = _read(path).strip()
    if not txt:
        raise ParseError(f"{name}: empty output; stderr: {_stderr_tail(os.path.join(raw, name + '.err'))}")
    d = json.loads(txt)
    if not d.get("ok", False):
        raise ParseError(f"{name}: netload reports failure: {d.get('error')}")
    s, r, loss = d["sender"], d["receiver"], d["loss"]
    out = {
        "ok": True,
        "tool": "netload",
        "sent_packets": s["packets"],
        "sent_pps": s["pps"],
        "sent_mbps": s["bits_per_second"] / 1e6,
        "recv_packets": r["packets"],
        "recv_bytes": r["bytes"],
        "seconds": r["seconds"],
        "recv_pps": r["pps"],
        "recv_mbps": r["bits_per_second"] / 1e6,
        "sender_batching": s.get("batching"),
        "receiver_batching": r.get("batching"),
        # None where the receiving kernel cannot count its socket drops (no SO_MEMINFO): its 0 is no count.
        "kernel_drops": None if "no drop count" in (r.get("batching") or "") else loss.get("receiver_kernel_drops"),
        "drops_estimated": loss.get("drops_estimated"),
        "loss_percent": loss.get("percent"),
        "reconciles": loss.get("reconciles"),
        "loss_note": loss.get("note", ""),
        "intervals": d.get("intervals") or [],
        "tcp": d.get("tcp"),
        "streams": d.get("streams"),
        "receive_mode": (d.get("receive") or {}).get("mode"),
    }
    return out


def parse_iperf3(raw, name):
    d = json.loads(_read(os.path.join(raw, name + ".json")))
    if "error" in d:
        raise ParseError(f"{name}: iperf3: {d['error']}")
    end = d["end"]
    proto = d["start"]["test_start"]["protocol"]
    if proto == "UDP":
        so = d.get("server_output_json")
        if so:
            # Server side: per stream "packets" is the highest sequence seen, lost_packets the gaps.
            ss = so["end"]["sum"]
            secs = ss["seconds"]
            recv = ss["packets"] - ss["lost_packets"]
            src = "server_output_json end.sum: packets - lost_packets"
        else:
            ss = end["sum"]
            secs = ss["seconds"]
            recv = ss["packets"] - ss["lost_packets"]
            src = "client end.sum: packets - lost_packets"
        sent = end["sum"]["packets"]
        blksize = d["start"]["test_start"]["blksize"]
        return {
            "ok": True, "tool": "iperf3", "sent_packets": sent,
            "sent_pps": sent / end["sum"]["seconds"], "recv_packets": recv, "seconds": secs,
            "recv_pps": recv / secs, "recv_mbps": recv * blksize * 8 / secs / 1e6,
            "sent_mbps": sent * blksize * 8 / end["sum"]["seconds"] / 1e6,
            "source": src,
        }
    sr = end["sum_received"]
    return {"ok": True, "tool": "iperf3", "recv_mbps": sr["bits_per_second"] / 1e6,
            "seconds": sr["seconds"], "recv_bytes": sr["bytes"],
            "sent_mbps": end["sum_sent"]["bits_per_second"] / 1e6,
            "retransmits": end["sum_sent"].get("retransmits"),
            "source": "end.sum_received (server-side bytes)"}


def parse_iperf2_tcp(raw, name, streams):
    """iperf2's TCP server report in CSV (-y C): a line per stream, bytes and bit/s over its own time. The
    aggregate is all bytes over the longest stream's time, as netload's and iperf3's are."""
    lines = [l.split(",") for l in _read(os.path.join(raw, name + ".server.csv")).splitlines() if l.count(",") >= 8]
    if not lines:
        raise ParseError(f"{name}: no iperf2 server report (CSV) found; stderr: "
                         f"{_stderr_tail(os.path.join(raw, name + '.server.err'))}")
    if len(lines) != streams:  # a stream that failed would lower the figure unseen
        raise ParseError(f"{name}: iperf2 reported {len(lines)} of {streams} streams")
    total = sum(int(l[7]) for l in lines)
    secs = max(int(l[7]) * 8 / float(l[8]) for l in lines if float(l[8]) > 0)
    return {"ok": True, "tool": "iperf2", "recv_bytes": total, "seconds": secs, "recv_mbps": total * 8 / secs / 1e6,
            "streams": len(lines), "source": "server CSV report: sum of the streams' bytes"}


IPERF2_REPORT = re.compile(
    r"\]\s+(\d+\.\d+)-(\d+\.\d+)\s+sec\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+ms\s+(\d+)/(\d+)\s+\(")


def parse_iperf2(raw, name, size):
    src = None
    m = None
    for fname, label in ((name + ".server.out", "server output"), (name + ".out", "client 'Server Report'")):
        try:
            txt = _read(os.path.join(raw, fname))
        except ParseError:
            continue
        ms = IPERF2_REPORT.findall(txt)
        if ms:
            m = ms[-1]
            src = label
            break
    if not m:
        raise ParseError(f"{name}: no iperf2 server report found")
    t0, t1, lost, total = float(m[0]), float(m[1]), int(m[2]), int(m[3])
    secs = t1 - t0
    recv = total - lost
    sent = None
    try:
        ms = re.search(r"Sent (\d+) datagrams", _read(os.path.join(raw, name + ".out")))
        sent = int(ms.group(1)) if ms else None
    except ParseError:
        pass
    return {"ok": True, "tool": "iperf2", "recv_packets": recv, "seconds": secs,
            "recv_pps": recv / secs, "recv_mbps": recv * size * 8 / secs / 1e6,
            "sent_packets": sent, "sent_pps": (sent / secs) if sent else None,
            "source": f"{src}: Total - Lost"}


def parse_sockperf(raw, name, size):
    cli = _read(os.path.join(raw, name + ".out"))
    srv = _read(os.path.join(raw, name + ".server.out"))
    mc = re.search(r"Total of (\d+) messages sent in ([\d.]+) sec", cli)
    ms = re.search(r"Total (\d+) messages received", srv)
    if not mc or not ms:
        raise ParseError(f"{name}: sockperf totals not found")
    sent, secs, recv = int(mc.group(1)), float(mc.group(2)), int(ms.group(1))
    return {"ok": True, "tool": "sockperf", "sent_packets": sent, "sent_pps": sent / secs,
            "recv_packets": recv, "seconds": secs, "recv_pps": recv / secs,
            "recv_mbps": recv * size * 8 / secs / 1e6,
            "source": "server 'Total N messages received' (incl. warm-up) / client test seconds"}


def safe(fn, *a):
    try:
        return fn(*a)
    except ParseError as e:
        return {"ok": False, "error": str(e)}
    except (ValueError, KeyError, TypeError, IndexError) as e:
        return {"ok": False, "error": f"{a[1] if len(a) > 1 else ''}: unparsable output ({type(e).__name__}: {e})"}


# ---------------------------------------------------------------- pacing analysis

def pacing_stats(res, target):
    iv = [i for i in res["intervals"] if i.get("complete", True)]
    out = {"target_pps": target,
           "recv_dev_pct": (res["recv_pps"] / target - 1) * 100,
           "sent_dev_pct": (res["sent_pps"] / target - 1) * 100,
           "intervals": len(iv)}

    def worst(sel, key):
        w = 0.0
        for i in sel:
            dt = (i["end_ns"] - i["start_ns"]) / 1e9
            if dt <= 0:
                continue
            dev = (i[key] / dt / target - 1) * 100
            if abs(dev) > abs(w):
                w = dev
        return w
    interior = iv[1:-1] if len(iv) > 2 else iv
    # Does the worst receiver interval have a neighbour that makes up for it (packets counted one interval
    # late or early at the receiver, not a burst from the sender)?
    devs = []
    for i in iv:
        dt = (i["end_ns"] - i["start_ns"]) / 1e9
        devs.append((i["received_packets"] / dt / target - 1) * 100 if dt > 0 else 0.0)
    lo, hi = (1, len(devs) - 1) if len(devs) > 2 else (0, len(devs))
    if hi > lo:
        k = max(range(lo, hi), key=lambda j: abs(devs[j]))
        pairs = [devs[k] + devs[j] for j in (k - 1, k + 1) if 0 <= j < len(devs)]
        out["worst_rx_compensated_by_neighbour"] = bool(pairs) and min(abs(p) for p in pairs) <= 1.0
        out["worst_rx_neighbours_pct"] = [round(devs[j], 2) for j in (k - 1, k + 1) if 0 <= j < len(devs)]
    out["worst_interval_recv_dev_pct_interior"] = worst(interior, "received_packets")
    out["worst_interval_sent_dev_pct_interior"] = worst(interior, "sent_packets")
    out["worst_interval_recv_dev_pct_all"] = worst(iv, "received_packets")
    # Worst 200-ms window (two adjacent interior intervals): immune to a sample taken a few ms late.
    def worst2(sel, key):
        w = 0.0
        for a, b in zip(sel, sel[1:]):
            dt = (b["end_ns"] - a["start_ns"]) / 1e9
            dev = ((a[key] + b[key]) / dt / target - 1) * 100 if dt > 0 else 0.0
            if abs(dev) > abs(w):
                w = dev
        return w
    out["worst_200ms_recv_dev_pct_interior"] = worst2(interior, "received_packets")
    out["worst_200ms_sent_dev_pct_interior"] = worst2(interior, "sent_packets")
    out["worst_interval_sent_dev_pct_all"] = worst(iv, "sent_packets")
    return out


# ---------------------------------------------------------------- wire-like path (bench/wirelike.sh)

def _wirelike_truth():
    """tests/lab/wirelike_truth.py: one definition of the kernel's loss accounting for the lab and the bench.
    Imported on first use, so the loopback report never depends on it."""
    import sys
    lab = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "lab")
    if lab not in sys.path:
        sys.path.insert(0, lab)
    sys.dont_write_bytecode = True   # no __pycache__ left in the source tree
    import wirelike_truth
    return wirelike_truth


def parse_wl_kernel(raw, name):
    """The kernel's view of one wire-like run: counters read before (NAME.k0.json) and after (NAME.k1.json).
    sent = UDP frames the sending veth carried or dropped, received = the receiver's Udp InDatagrams, and
    where the difference went (receiver CPU backlog, socket buffer, other UDP errors)."""
    wt = _wirelike_truth()
    a = json.loads(_read(os.path.join(raw, name + ".k0.json")))
    b = json.loads(_read(os.path.join(raw, name + ".k1.json")))
    k = wt.kernel_view(wt.delta(a, b))
    k["ok"] = True
    return k


def parse_wl_pdr(raw, name):
    """wirelike_netload_pdr's result (wirelike_truth.py --json): the best rate with <= 0.5 % loss."""
    d = json.loads(_read(os.path.join(raw, name + ".json")))
    b = d["best"]["0.5"]
    if b["best_offered_pps"] is None:
        raise ParseError(f"{name}: no rate passed (lowest tried {b['lowest_failing_pps']} pps failed)")
    at = max((t for t in d["trials"] if t["offered_pps"] == b["best_offered_pps"] and not t.get("superseded")),
             key=lambda t: t["netload_loss_percent"])   # the worst of its trials
    return {"ok": True, "tool": "netload", "criterion": d["criterion"], "pdr_offered_pps": b["best_offered_pps"],
            "lowest_failing_pps": b["lowest_failing_pps"], "bracketed": b["bracketed"], "precision": b["precision"],
            "failing_because": b.get("failing_because"), "trials_at_best": b.get("trials_at_best", 1),
            "recv_pps": at["netload_received_pps"], "sent_pps": at["netload_sent_pps"],
            "loss_percent": at["netload_loss_percent"], "kernel": at["kernel"], "trials": len(d["trials"]),
            "trial_seconds": d["seconds"]}
