#!/usr/bin/env python3
"""wirelike_truth.py — the kernel's ground truth for a rate search on the wire-like path (wirelike.sh).

For one message size and N senders (N netload processes, all pinned to the sender CPU, into one netserve
with N ports, pinned to the receiver CPU), it runs netload unpaced once, then sweeps `netload --pps` over a
list of offered aggregate rates (default 5, 10, 20, 40, 80 % of the unpaced sent rate), and bisects between
the best passing and the lowest failing rate until they are within --precision (2 %) of each other, going up
by half while nothing fails. Then it repeats the best rate (--confirm): near the knee of receive livelock a
rate can pass once and lose 10-20 % the next time, and a rate passes only if every trial at it passed.
A trial passes when the loss is at most the threshold (0.5 % and 0 %) AND the senders really offered the
rate (within 2 %); a short sender without loss is repeated (its core was taken away for a while) and, if it
stays short, the rate fails as "senders short of the rate". --max-trials caps the bisection, repeats included.

The loss is the KERNEL's by default (--criterion kernel):
    sent     = UDP frames the sender's veth carried or dropped
             = delta(tx_packets + tx_dropped) on the sender's veth - delta(Tcp OutSegs + Icmp OutMsgs)
               (test control is TCP; ARP is static and IPv6 off, so nothing else crosses)
    received = delta(Udp InDatagrams) in the receiver's namespace: datagrams the PROGRAM READ (Linux counts
               InDatagrams in recvmsg, not when it queues a datagram)
and where it was lost: the receiver CPU's input backlog (veth tx_dropped: the receiving stack never saw
it), the receiving socket (Udp RcvbufErrors), other UDP input errors, no socket on the port, and "unread":
queued in the socket but never read (discarded when the program closed it; no counter sees that).
--criterion netload judges by netload's own counts (sender.packets vs receiver.packets) instead; both are
always printed.

  wirelike_truth.py --bin-dir build/default -m 1 --senders 1
  wirelike_truth.py --netload P --netserve P -m 64 --senders 2 --rates 100k,200k,400k,800k --json out.json

The path (NAME-tx / NAME-rx) is created when absent and then removed on exit, also on failure or Ctrl-C;
a path that was already up is used as it is and left up. Every netload is bounded by -l and `timeout`;
every process started here is killed on exit. Exit status: 0 done, 1 failed, 2 bad usage, 77 skipped
(not root, no network namespaces).
"""
import argparse
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WIRELIKE = os.path.join(HERE, "wirelike.sh")
OFFERED_TOLERANCE = 0.01     # senders within 1 % of the asked rate offered it (the harness: sender-limited below 99 %)


class Failure(Exception):
    pass


ARMED = "netload: connected; waiting for the start instant on standard input"


def start_together(procs, lead=0.3):
    """The harness's start barrier: every netload connects and says so, then all get one instant."""
    for p in procs:
        line = p.stderr.readline().strip()
        if line != ARMED:
            raise Failure(f"netload did not arm: {line or 'exited'}")
    at = f"{time.time() + lead:.6f}\n"
    for p in procs:  # flushed, not closed: communicate() closes it
        p.stdin.write(at)
        p.stdin.flush()


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def parse_rate(s):
    s = s.strip().lower()
    mult = {"k": 1e3, "m": 1e6, "g": 1e9}.get(s[-1:], 1)
    return float(s[:-1] if mult != 1 else s) * mult


def fmt_pps(x):
    if x is None:
        return "-"
    return f"{x / 1e6:.3f}M" if x >= 1e6 else f"{x / 1e3:.1f}k"


def wl(*args, check=True):
    r = subprocess.run([WIRELIKE, *args], capture_output=True, text=True)
    if r.returncode == 77:
        print(r.stdout.strip() or "SKIP: wirelike.sh refused", flush=True)
        sys.exit(77)
    if check and r.returncode != 0:
        raise Failure(f"wirelike.sh {' '.join(args)}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def counters(name):
    return json.loads(wl("counters", name).stdout)


def delta(a, b):
    return {k: b[k] - a[k] for k in a if isinstance(a[k], (int, float)) and b.get(k) is not None and a[k] is not None
            and k not in ("receiver_cpu",)}


def kernel_view(d):
    """What the kernel counted over one trial (a counters delta)."""
    sent = (d["sender_veth_tx_packets"] + d["sender_veth_tx_dropped"]
            - d["sender_tcp_out_segs"] - d["sender_icmp_out_msgs"])
    recv = d["receiver_udp_in_datagrams"]
    backlog = d["sender_veth_tx_dropped"]
    socket_ = d["receiver_udp_rcvbuf_errors"]
    other = d["receiver_udp_in_errors"] - d["receiver_udp_rcvbuf_errors"] + d["receiver_udp_no_ports"]
    lost = sent - recv
    return {
        "sent": sent, "received": recv, "lost": lost,
        "loss_percent": 100.0 * lost / sent if sent > 0 else 0.0,
        "lost_backlog": backlog, "lost_socket": socket_, "lost_other": other,
        # Queued but never read: a receiver that closes its socket with datagrams still queued (iperf3 at the
        # end of its test) discards them, and no counter says so. netserve drains first: ~0 for it.
        "lost_unread": lost - backlog - socket_ - other,
        "softnet_dropped": d.get("receiver_softnet_dropped"), "time_squeeze": d.get("receiver_softnet_time_squeeze"),
        "sender_sndbuf_errors": d["sender_udp_sndbuf_errors"], "veth_tx_packets": d["sender_veth_tx_packets"],
        "non_udp_frames": d["sender_tcp_out_segs"] + d["sender_icmp_out_msgs"],
    }


class Runner:
    """The path, one netserve with N ports in the receiver namespace, and N netloads per trial."""

    def __init__(self, a):
        self.a = a
        self.procs = []          # every process started here, killed in close()
        self.made_path = False
        self.server = None
        self.ports = []
        self.trials = []
        self.work = a.out or tempfile.mkdtemp(prefix="wirelike-truth.")
        os.makedirs(self.work, exist_ok=True)
        self.ntrial = 0
        self.thresholds = a.thresholds_list

    # ------------------------------------------------------------ path and server
    def path_up(self):
        info = wl("info", self.a.name, check=False)
        if info.returncode != 0:
            log(f"path {self.a.name}: up (receiver CPU {self.a.recv_cpu})")
            self.made_path = True   # set before `up`: a half-made path is taken down too
            wl("up", self.a.name, str(self.a.recv_cpu))
            info = wl("info", self.a.name)
        env = dict(kv.split("=", 1) for kv in info.stdout.split())
        if int(env["WL_RECV_CPU"]) != self.a.recv_cpu:
            raise Failure(f"path {self.a.name} is up with receiver CPU {env['WL_RECV_CPU']}, not {self.a.recv_cpu}")
        self.tx_ns, self.rx_ns, self.rx_addr = env["WL_TX_NS"], env["WL_RX_NS"], env["WL_RX_ADDR"]

    def start_server(self):
        # Not confined with taskset: netserve runs as the harness starts it, and netload's -T ,RECV_CPU
        # puts the test's receive thread on the receiver's CPU (netserve pins it per test).
        argv = ["ip", "netns", "exec", self.rx_ns,
                "timeout", "-k", "2", str(self.a.server_timeout), self.a.netserve, "--bind", self.rx_addr]
        for _ in range(self.a.senders):
            argv += ["-p", "0"]
        argv += self.a.netserve_arg
        err = open(os.path.join(self.work, "netserve.err"), "a")
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True)
        self.procs.append(p)
        self.server = p
        ready = wait_ready(p.stdout, time.monotonic() + 10)
        if ready is not None:
            self.ports = ready["ports"]
            return
        raise Failure(f"netserve not ready in 10 s (see {err.name})")

    def ensure_server(self):
        if self.server is None or self.server.poll() is not None:
            if self.server is not None:
                log(f"netserve exited ({self.server.returncode}); restarted")
            self.start_server()

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        if self.made_path:
            wl("down", self.a.name, check=False)
            self.made_path = False

    # ------------------------------------------------------------ one trial
    def trial(self, offered):
        """offered: aggregate pps, or None for unpaced. Returns the trial record."""
        self.ensure_server()
        self.ntrial += 1
        n, a = self.a.senders, self.a
        before = counters(a.name)
        loads = []
        for i in range(n):
            out = os.path.join(self.work, f"t{self.ntrial:02d}-s{i}.json")
            argv = ["ip", "netns", "exec", self.tx_ns, "taskset", "-c", str(a.send_cpu),
                    "timeout", "-k", "2", str(int(a.seconds) + 45), a.netload, "-H", self.rx_addr,
                    "-p", str(self.ports[i]), "-t", "UDP_STREAM", "-l", str(a.seconds),
                    "-T", f"{a.send_cpu},{a.recv_cpu}", "--json", "--start-on-stdin"]
            if offered is not None:
                argv += ["--pps", f"{offered / n:.1f}"]
            argv += a.netload_arg + ["--", "-m", str(a.message_size)]
            f = open(out, "w")
            p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=f, stderr=subprocess.PIPE, text=True)
            self.procs.append(p)
            loads.append((p, out, f))
        start_together([p for p, _, _ in loads])
        results = []
        for p, out, f in loads:
            _, err = p.communicate()
            f.close()
            self.procs.remove(p)
            try:
                d = json.load(open(out))
            except ValueError:
                raise Failure(f"netload gave no JSON (exit {p.returncode}): {err.strip()[:300]}")
            if not d.get("ok") and p.returncode not in (0, 3):
                raise Failure(f"netload failed (exit {p.returncode}): {d.get('error') or err.strip()[:300]}")
            results.append(d)
        after = counters(a.name)
        k = kernel_view(delta(before, after))
        secs = max(d["sender"]["seconds"] for d in results) or a.seconds
        sent = sum(d["sender"]["packets"] for d in results)
        recv = sum(d["receiver"]["packets"] for d in results)
        t = {
            "offered_pps": offered, "seconds": secs,
            "netload": [{"sent": d["sender"]["packets"], "sent_pps": d["sender"]["pps"],
                         "received": d["receiver"]["packets"], "received_pps": d["receiver"]["pps"],
                         "batching": f"{d['sender'].get('batching')}/{d['receiver'].get('batching')}",
                         "kernel_drops": d["loss"].get("receiver_kernel_drops"),
                         "reconciles": d["loss"].get("reconciles")} for d in results],
            "netload_sent": sent, "netload_received": recv,
            "netload_sent_pps": sent / secs, "netload_received_pps": recv / secs,
            "netload_loss_percent": 100.0 * (sent - recv) / sent if sent else 0.0,
            "kernel": k,
            "kernel_sent_pps": k["sent"] / secs, "kernel_received_pps": k["received"] / secs,
        }
        # Did the senders offer the asked rate? (netload's sent count: the kernel's differs by its own drops)
        t["offered_ok"] = offered is None or sent / secs >= offered * (1 - OFFERED_TOLERANCE)
        self.trials.append(t)
        self.print_row(t)
        return t

    def measure(self, offered):
        """One rate: a trial, repeated (at most --short-retries times) while the senders fell short of the
        rate without losing more than the threshold. A short sender says nothing about the receiver (on a
        shared machine its core is taken away now and then); only a rate it cannot offer on any try is
        counted as failing, "senders short of the rate". A short trial that lost more does count: the
        receiver lost that much at less than the rate."""
        t = self.trial(offered)
        for _ in range(self.a.short_retries):
            if offered is None or t["offered_ok"] or self.loss(t) > max(self.thresholds) + 1e-12:
                break
            t["superseded"] = True
            log(f"senders short of {offered:.0f} pps ({t['netload_sent_pps']:.0f}): trial repeated")
            t = self.trial(offered)
        return t

    # ------------------------------------------------------------ search
    def loss(self, t):
        return t["kernel"]["loss_percent"] if self.a.criterion == "kernel" else t["netload_loss_percent"]

    def passes(self, t, thr):
        return t["offered_ok"] and self.loss(t) <= thr + 1e-12

    def at(self, rate):
        """The trials that count at one offered rate (repeats for short senders left out)."""
        return [t for t in self.trials if t["offered_pps"] == rate and not t.get("superseded")]

    def bracket(self, thr):
        """(best passing rate below the lowest failing one, lowest failing rate) among the paced trials so far.
        A rate passes only when every trial at it passed: near the knee of receive livelock a rate can pass
        once and lose 10 % the next time, and one loss at a rate is evidence enough that it is not safe."""
        rates = sorted({t["offered_pps"] for t in self.trials if t["offered_pps"] is not None})
        ok = {r: all(self.passes(t, thr) for t in self.at(r)) for r in rates}
        fails = [r for r in rates if not ok[r]]
        hi = min(fails) if fails else None
        oks = [r for r in rates if ok[r] and (hi is None or r < hi)]
        return (max(oks) if oks else None), hi

    def search(self, thr, budget):
        """Bisects for threshold thr; returns trials spent (repeats included)."""
        first = self.ntrial
        while self.ntrial - first < budget:
            lo, hi = self.bracket(thr)
            if lo is None and hi is None:
                break                              # no paced trial at all
            if hi is None:
                # Nothing fails yet: go up by half until something does. A rate the senders cannot offer
                # fails, so this ends at the senders' limit at the latest.
                nxt = lo * 1.5
                if nxt > self.a.max_rate:
                    break
            elif lo is None:
                nxt = hi / 2                       # nothing passes yet: halve
                if nxt < self.a.min_rate:
                    break
            elif (hi - lo) / hi <= self.a.precision:
                break
            else:
                nxt = (lo + hi) / 2
            self.measure(round(nxt))
        return self.ntrial - first

    # ------------------------------------------------------------ output
    HEADER = (f"{'offered':>9} {'sent/netload':>19} {'tx UDP frames':>13} {'InDatagrams':>12} {'k.loss%':>8} "
              f"{'lost: backlog/socket/other':>27} {'nl rx pps':>10} {'nl loss%':>8}  note")

    def print_row(self, t):
        k = t["kernel"]
        sent_each = "+".join(fmt_pps(x["sent_pps"]) for x in t["netload"])
        note = []
        if not t["offered_ok"]:
            note.append("senders short of the rate")
        if k["lost_unread"]:
            note.append(f"unread {k['lost_unread']}")
        if k["time_squeeze"]:
            note.append(f"squeeze {k['time_squeeze']}")
        print(f"{fmt_pps(t['offered_pps']) if t['offered_pps'] else 'unpaced':>9} {sent_each:>19} {k['sent']:>13,} "
              f"{k['received']:>12,} {k['loss_percent']:>8.3f} "
              f"{str(k['lost_backlog']) + '/' + str(k['lost_socket']) + '/' + str(k['lost_other']):>27} "
              f"{fmt_pps(t['netload_received_pps']):>10} {t['netload_loss_percent']:>8.3f}  {'; '.join(note)}",
              flush=True)


def default_cpus(recv):
    cpus = sorted(os.sched_getaffinity(0))
    others = [c for c in cpus if c != recv]
    if not others:
        raise Failure("needs two CPUs (the receiver's and another for the senders)")
    return others[0]


def wait_ready(stdout, deadline):
    """netserve's JSON ready line from its stdout, or None when it did not come by `deadline` (monotonic).
    Shared with bench/benchlib.py."""
    sel = selectors.DefaultSelector()
    sel.register(stdout, selectors.EVENT_READ)
    while time.monotonic() < deadline:
        if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
            return None
        line = stdout.readline()
        if not line:
            return None
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("event") == "ready":
            return d
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", help="build directory with netload/netload and netserve/netserve")
    ap.add_argument("--netload")
    ap.add_argument("--netserve")
    ap.add_argument("--name", default="wltruth", help="wire-like path name (default wltruth)")
    ap.add_argument("--recv-cpu", type=int, default=0)
    ap.add_argument("--send-cpu", type=int, help="default: the first other CPU")
    ap.add_argument("-m", "--message-size", type=int, default=1)
    ap.add_argument("--senders", type=int, choices=(1, 2), default=1)
    ap.add_argument("-l", "--seconds", type=float, default=2.0, help="per trial (default 2)")
    ap.add_argument("--rates", help="offered aggregate pps to sweep, comma-separated (k/M suffixes); default: "
                    "5, 10, 20, 40 and 80 %% of the unpaced run's sent rate")
    ap.add_argument("--no-unpaced", action="store_true", help="skip the unpaced run (then --rates is required)")
    ap.add_argument("--precision", type=float, default=0.02, help="bisection stops at (fail-pass)/fail <= this")
    ap.add_argument("--max-trials", type=int, default=15, help="bisection trials, both thresholds together")
    ap.add_argument("--confirm", type=int, default=1,
                    help="repeat each best rate this often; it stays best only if every repeat passes (default 1)")
    ap.add_argument("--short-retries", type=int, default=2,
                    help="repeat a trial whose senders fell short of the rate (without loss) up to this often")
    ap.add_argument("--min-rate", type=float, default=1000, help="halving below this stops")
    ap.add_argument("--max-rate", type=parse_rate, default=20e6,
                    help="going up (nothing failed yet) stops above this aggregate pps (default 20M)")
    ap.add_argument("--criterion", choices=("kernel", "netload"), default="kernel",
                    help="loss counted by the kernel (default) or by netload (sent vs received)")
    ap.add_argument("--thresholds", default="0.5,0", help="loss percentages to search for (default 0.5,0)")
    ap.add_argument("--json", help="write every trial and the result here")
    ap.add_argument("--out", help="keep netload's raw JSON and netserve's log here (default: a temp dir, removed)")
    ap.add_argument("--netload-arg", action="append", default=[], help="extra netload option (repeatable)")
    ap.add_argument("--netserve-arg", action="append", default=[], help="extra netserve option (repeatable)")
    ap.add_argument("--server-timeout", type=int, default=1800, help="netserve's hard bound, seconds")
    a = ap.parse_args()
    if a.bin_dir:
        a.netload = a.netload or os.path.join(a.bin_dir, "netload", "netload")
        a.netserve = a.netserve or os.path.join(a.bin_dir, "netserve", "netserve")
    if not a.netload or not a.netserve:
        ap.error("give --bin-dir or --netload and --netserve")
    a.netload, a.netserve = os.path.abspath(a.netload), os.path.abspath(a.netserve)
    if a.no_unpaced and not a.rates:
        ap.error("--no-unpaced needs --rates")
    thresholds = [float(x) for x in a.thresholds.split(",")]
    a.thresholds_list = thresholds
    if os.geteuid() != 0:
        print("SKIP: the wire-like path needs root (network namespaces, veth, sysfs)")
        return 77
    if a.send_cpu is None:
        a.send_cpu = default_cpus(a.recv_cpu)
    if a.send_cpu == a.recv_cpu:
        ap.error("sender and receiver CPU must differ")

    # SIGTERM/SIGHUP end the run like Ctrl-C: through the finally below, which stops everything.
    def on_signal(sig, _frame):
        raise KeyboardInterrupt(f"signal {sig}")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)

    r = Runner(a)
    rc = 0
    try:
        r.path_up()
        r.start_server()
        log(f"path {a.name}: {r.tx_ns} -> {r.rx_ns} {r.rx_addr} ports {r.ports}; -m {a.message_size}, "
            f"{a.senders} sender(s) on CPU {a.send_cpu}, receiver CPU {a.recv_cpu}, {a.seconds} s per trial, "
            f"criterion {a.criterion}")
        print(Runner.HEADER, flush=True)
        unpaced = None if a.no_unpaced else r.trial(None)
        if a.rates:
            rates = [parse_rate(x) for x in a.rates.split(",") if x.strip()]
        else:
            base = unpaced["netload_sent_pps"]
            rates = [round(base * f) for f in (0.05, 0.1, 0.2, 0.4, 0.8)]
        for rate in rates:
            r.measure(rate)
        # Bisect for each threshold, then repeat each best rate (--confirm): a best rate that fails on its
        # repeat becomes a failing rate and the bisection goes on below it. Every trial counts in the cap.
        first = r.ntrial
        while True:
            confirmed = True
            for thr in thresholds:
                r.search(thr, a.max_trials - (r.ntrial - first))
                lo, _ = r.bracket(thr)
                if lo is not None and len(r.at(lo)) < 1 + a.confirm and r.ntrial - first < a.max_trials:
                    log(f"repeating the best rate so far for {thr:g} %: {lo:.0f} pps")
                    r.measure(lo)
                    confirmed = False
            if confirmed:
                break
        best = {}
        for thr in thresholds:
            lo, hi = r.bracket(thr)
            t_lo = max(r.at(lo), key=r.loss) if lo is not None else None     # its worst trial
            t_hi = max(r.at(hi), key=r.loss) if hi is not None else None
            best[str(thr)] = {
                "threshold_percent": thr, "best_offered_pps": lo, "lowest_failing_pps": hi,
                "bracketed": lo is not None and hi is not None,
                "trials_at_best": len(r.at(lo)) if lo is not None else 0,
                "precision": (hi - lo) / hi if lo and hi else None,
                # why the lowest failing rate failed: its loss, or senders that could not offer it
                "failing_because": None if t_hi is None else
                ("loss" if r.loss(t_hi) > thr + 1e-12 else "senders short of the rate"),
                "kernel_loss_percent_at_best": t_lo["kernel"]["loss_percent"] if t_lo else None,
                "netload_loss_percent_at_best": t_lo["netload_loss_percent"] if t_lo else None,
                "netload_received_pps_at_best": t_lo["netload_received_pps"] if t_lo else None,
            }
        print()
        cnt = "kernel counters" if a.criterion == "kernel" else "netload's own counts"
        for thr in thresholds:
            b = best[str(thr)]
            if b["best_offered_pps"] is None:
                print(f"best rate with loss <= {thr:g} % ({cnt}): none passed (lowest tried failed: "
                      f"{fmt_pps(b['lowest_failing_pps'])} pps)")
            elif b["lowest_failing_pps"] is None:
                print(f"best rate with loss <= {thr:g} % ({cnt}): >= {fmt_pps(b['best_offered_pps'])} pps "
                      f"(no failing rate tried)")
            else:
                print(f"best rate with loss <= {thr:g} % ({cnt}): {fmt_pps(b['best_offered_pps'])} pps "
                      f"(passed {b['trials_at_best']} of {b['trials_at_best']} trials; "
                      f"fails at {fmt_pps(b['lowest_failing_pps'])} by {b['failing_because']}, "
                      f"{100 * b['precision']:.1f} % apart; worst kernel loss "
                      f"{b['kernel_loss_percent_at_best']:.3f} %, netload loss {b['netload_loss_percent_at_best']:.3f} %)")
        nrep = sum(1 for t in r.trials if t.get("superseded"))
        print(f"trials: {len(r.trials)} ({a.seconds} s each" + (f"; {nrep} repeated because the senders fell short"
                                                               if nrep else "") + ")")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"schema": "netbench.wirelike_truth/1", "path": a.name, "message_size": a.message_size,
                           "senders": a.senders, "send_cpu": a.send_cpu, "recv_cpu": a.recv_cpu,
                           "seconds": a.seconds, "criterion": a.criterion, "unpaced": unpaced,
                           "trials": r.trials, "best": best}, f, indent=1)
    except Failure as e:
        print(f"wirelike_truth: {e}", file=sys.stderr)
        rc = 1
    except KeyboardInterrupt as e:
        print(f"wirelike_truth: interrupted ({e or 'Ctrl-C'})", file=sys.stderr)
        rc = 130
    finally:
        r.close()
        if not a.out:
            subprocess.run(["rm", "-rf", r.work])
    return rc


if __name__ == "__main__":
    sys.exit(main())
