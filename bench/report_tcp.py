"""The TCP rows of the bench table (bench/tcp.sh runs them): every cell's median over interleaved rounds,
graded against iperf3 and iperf2, with each tool's spread over the rounds beside its median."""
from statistics import median

from parsers import parse_iperf2_tcp, parse_iperf3, safe
from table import fmt_mbps, read_record


def tcp_cell(t, where, size, n, tool, rounds):
    """One tool's runs of one cell: every round's parse, and the median received rate of those that ran."""
    runs = []
    for r in range(1, rounds + 1):
        name = f"tcp_{where}_m{size}_s{n}_{tool}_r{r}"
        if tool.startswith("iperf3"):
            runs.append(safe(parse_iperf3, t.raw, name))
        elif tool == "iperf2":
            runs.append(safe(parse_iperf2_tcp, t.raw, name, n))
        else:
            runs.append(t.netload(name))
    ok = [x["recv_mbps"] for x in runs if x["ok"]]
    # A cell is judged on a majority of its rounds: a median of one run is the minute's, not the tool's.
    res = {"ok": len(ok) * 2 > rounds, "recv_mbps": median(ok) if ok else None,
           "rounds": [x.get("recv_mbps") for x in runs],
           "min_mbps": min(ok, default=None), "max_mbps": max(ok, default=None), "runs": runs}
    # max/min over the rounds that ran: how far apart two identical runs of the tool may land.
    res["spread"] = res["max_mbps"] / res["min_mbps"] if ok and res["min_mbps"] > 0 else None
    if not res["ok"]:
        res["error"] = "; ".join(x["error"] for x in runs if not x["ok"])
    return res


def fmt_spread(cell):
    if not cell.get("spread"):
        return "-"
    return f"{cell['min_mbps'] / 1000:.1f}-{cell['max_mbps'] / 1000:.1f} G, x{cell['spread']:.2f}"


def spread_row(t, label, a, b, other_label, target=None, a_label="netload"):
    """a vs b on the received rate (graded when `target` is set, else info), each tool's min-max over the rounds
    beside its median and every round in the note."""
    t.ratio_row(label, a, b, "recv_mbps", fmt_mbps, target, other_label)
    row = t.rows[-1]
    if a["ok"]:
        row["netload"] += f" ({fmt_spread(a)})"
    if b["ok"]:
        row["other"] += f" ({fmt_spread(b)})"
    add_note(t, f"medians of {len(a['rounds'])} rounds: {a_label} {tcp_note(a)}, {other_label} {tcp_note(b)}")


def add_note(t, note):
    """Appends to the last row's note (an error row already has one)."""
    t.rows[-1]["note"] = (t.rows[-1]["note"] + "; " if t.rows[-1]["note"] else "") + note


def tcp_note(cell):
    return "/".join("failed" if x is None else f"{x / 1000:.1f}" for x in cell["rounds"]) + " Gbit/s"


def receive_modes(cell):
    """The receive modes a netload cell's rounds ran in ("copy", "discard", "copy/discard" if they differed)."""
    return "/".join(sorted({x.get("receive_mode") or "?" for x in cell["runs"] if x["ok"]})) or "?"


def tcp(t, where):
    """4 (loopback) and 8 (wire-like): TCP_STREAM against iperf3 and iperf2 at equal write size, streams and
    congestion control; the median of the interleaved rounds, graded >= 1.0x against each."""
    meta = read_record(t.raw, f"tcp_{where}.json", "the TCP rows")
    num, place = ("4", "loopback") if where == "lo" else ("8", "wire-like")
    t.results[f"tcp_{where}"] = res = {"meta": meta}
    if not meta.get("ran"):
        t.row(f"{num}  TCP {place}", "skipped", "-", "-", ">= 1.0x", "FAIL", meta.get("reason", ""))
        return
    rounds, cc = meta["rounds"], meta["cc"]
    for size in meta["sizes"]:
        for n in meta["streams"]:
            cells = {tool: tcp_cell(t, where, size, n, tool, rounds)
                     for tool in ("netload", "othermode", "iperf3", "iperf2", "zerocopy", "iperf3sendfile", "sendcopy")}
            res[f"m{size}_s{n}"] = {k: dict(v, runs=None) for k, v in cells.items()}
            streams = f"{n} stream{'s' if n > 1 else ''}"
            label = f"{num}  TCP {place} -m {size}, {streams}, {cc}, rx Mbit/s"
            nl = cells["netload"]
            for other in ("iperf3", "iperf2"):
                spread_row(t, f"{label} vs {other}", nl, cells[other], other, 1.0)
            # netload's receive mode (chosen from where the peer is) against the other one, same rounds.
            om, mode = cells["othermode"], receive_modes(nl)
            spread_row(t, f"{num}   receive mode: netload's own ({mode}) vs the other, -m {size}, {streams}", nl, om,
                       f"the other mode ({receive_modes(om)})", a_label=mode)
            # Like for like: the same send call on both sides (bench/tcp.sh says why these two rows).
            spread_row(t, f"{num}   sendfile both (iperf3's receiver copies): netload vs iperf3 -Z, -m {size}, {streams}",
                       nl, cells["iperf3sendfile"], "iperf3 -Z")
            for other in ("iperf3", "iperf2"):
                spread_row(t, f"{num}   copies at both ends: netload --send-copy --recv-copy vs {other}, -m {size}, "
                           f"{streams}", cells["sendcopy"], cells[other], other, a_label="netload copying")
            zc = cells["zerocopy"]
            spread_row(t, f"{num}   --zerocopy, -m {size}, {streams} vs without", zc, nl, "netload",
                       a_label="--zerocopy")
            add_note(t, f"sender: {next((x.get('sender_batching') for x in zc['runs'] if x['ok']), None)}")


def tcp_user(t):
    """4u: one stream placed as users place the tools by hand (bench/tcp.sh tcp_user): graded >= 1.0x iperf3,
    and netload's spread over the rounds no wider than iperf3's plus ten points; iperf2 beside them."""
    meta = read_record(t.raw, "tcp_user.json", "the rows")
    t.results["tcp_user"] = res = {"meta": meta}
    if not meta.get("ran"):
        t.row("4u TCP loopback as users pin it", "skipped", "-", "-", ">= 1.0x", "FAIL", meta.get("reason", ""))
        return
    rounds, secs = meta["rounds"], meta["seconds"]
    for run in meta.get("ccs", []):
        cc = run["cc"]
        how = f"{cc}, named" if run["named"] else f"{cc}, the host's own"
        for size in meta["sizes"]:
            cells = {tool: tcp_cell(t, f"user_{cc}", size, 1, tool, rounds) for tool in ("netload", "iperf3", "iperf2")}
            res[f"{cc}_m{size}_s1"] = {k: dict(v, runs=None) for k, v in cells.items()}
            label = f"4u TCP loopback as users pin it (taskset only, {how}, {secs}-s runs) -m {size}, 1 stream, rx Mbit/s"
            nl, i3 = cells["netload"], cells["iperf3"]
            spread_row(t, f"{label} vs iperf3", nl, i3, "iperf3", 1.0)
            spread_row(t, "4u   same, vs iperf2 (info)", nl, cells["iperf2"], "iperf2")
            steady_row(t, f"4u   spread over the rounds (max/min), {cc}, -m {size}: netload vs iperf3's + 10 points", nl,
                       i3)


def steady_row(t, label, nl, i3):
    """netload's max/min over the rounds against iperf3's plus 0.10: graded. A tool that lost rounds is not
    steady, whatever the rounds it kept say."""
    target = "<= iperf3 + 0.10"
    for name, cell in (("netload", nl), ("iperf3", i3)):
        failed = sum(1 for x in cell["rounds"] if x is None)
        if failed or not cell.get("spread"):
            why = f"{failed} of {len(cell['rounds'])} rounds failed" if failed else "a round received nothing"
            t.row(label, "FAILED" if name == "netload" else "-", "FAILED" if name == "iperf3" else "-", "-", target,
                  "FAIL", f"{name}: {why}" + (f" ({cell['error']})" if cell.get("error") else ""))
            return
    bound = i3["spread"] + 0.10
    t.row(label, f"x{nl['spread']:.2f}", f"iperf3 x{i3['spread']:.2f}", "-", f"<= x{bound:.2f}",
          "PASS" if nl["spread"] <= bound else "FAIL")
