#!/usr/bin/env python3
"""Helper for bench/run (python3 stdlib only).

Subcommands:
  freeport                      print a port free for both TCP and UDP on 127.0.0.1
  wait-ready FILE TIMEOUT       wait for netserve's ready line in FILE, print its first port
  field FILE EXPR               print a value from a netload JSON result (EXPR like receiver.pps)
  ports NETSERVE CPU N OUT      start netserve with N x "-p 0" pinned to CPU ("-": unpinned), time the ready line,
                                read VmRSS/VmHWM, stop it, write JSON to OUT
  meta                          write RAW/meta.json from bench/run's B_* variables; pacing rows NAME:PPS on stdin
  report RAWDIR OUTJSON         parse every raw output, print the table, write the JSON summary
                                (parsers.py reads the outputs, report.py builds the table)
"""
import hashlib
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import time

from report import report


# ---------------------------------------------------------------- small helpers

def freeport():
    for _ in range(200):
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.bind(("127.0.0.1", 0))
        port = t.getsockname()[1]
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.bind(("127.0.0.1", port))
        except OSError:
            t.close()
            continue
        t.close()
        u.close()
        return port
    raise SystemExit("no free port")


def wait_ready(path, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if not line.startswith("{"):
                        continue
                    try:
                        d = json.loads(line)
                    except ValueError:
                        continue
                    if d.get("event") == "ready":
                        return d["ports"][0]
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise SystemExit(f"netserve not ready after {timeout}s ({path})")


def dig(d, expr):
    for k in expr.split("."):
        d = d[k]
    return d


def ports_test(netserve, cpu, n, out):
    """Start netserve with n ports, time start -> ready line, read RSS, stop it. cpu "-": unpinned."""
    argv = ([] if cpu == "-" else ["taskset", "-c", str(cpu)]) + [netserve, "--bind", "127.0.0.1"]
    for _ in range(n):
        argv += ["-p", "0"]
    res = {"ports_requested": n, "ok": False}
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "lab"))
        from wirelike_truth import wait_ready  # one reader of netserve's ready line for the lab and the bench
        ready = wait_ready(p.stdout, t0 + 10.0)
        t1 = time.monotonic()
        if ready is None:
            res["error"] = "no ready line within 10 s"
        else:
            res["ready_seconds"] = t1 - t0
            res["ports_bound"] = len(ready.get("ports", []))
            time.sleep(0.2)  # let it settle (threads started after the ready line count too)
            status = open(f"/proc/{ready.get('pid', p.pid)}/status").read()
            for key in ("VmRSS", "VmHWM", "Threads"):
                m = re.search(rf"^{key}:\s+(\d+)", status, re.M)
                if m:
                    res[key] = int(m.group(1))  # kB for Vm*, count for Threads
            res["rss_mb"] = res.get("VmRSS", 0) / 1024.0
            res["hwm_mb"] = res.get("VmHWM", 0) / 1024.0
            res["ok"] = res["ports_bound"] == n
            if not res["ok"]:
                res["error"] = f"ready line lists {res['ports_bound']} ports, asked {n}"
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


# ---------------------------------------------------------------- meta.json

def version_line(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=5)
        return (r.stdout + r.stderr).strip().splitlines()[0]
    except Exception as e:
        return f"unknown ({e})"


def utc_mtime(path):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(path)))


def write_meta(pacing_lines):
    """RAW/meta.json: what ran, where, on what; bench/run passes its settings as B_* variables."""
    E = os.environ
    pacing = [[l.split(":")[0], float(l.split(":")[1])] for l in pacing_lines.split() if ":" in l]
    git = subprocess.run(["git", "-C", E["B_ROOT"], "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    s, r = E["B_SND"], E["B_RCV"]
    snap = E["B_SNAP"]
    sha = {k: hashlib.sha256(open(os.path.join(snap, k), "rb").read()).hexdigest()[:16] for k in ("netload", "netserve")}
    meta = {
        "utc": E["B_STAMP"], "git": git, "kernel": platform.release(), "cpus_online": os.cpu_count(),
        "sender_cpu": int(s), "receiver_cpu": int(r), "seconds": float(E["B_DUR"]), "pace_seconds": float(E["B_PDUR"]),
        "netload": E["B_NETLOAD"], "netserve": E["B_NETSERVE"],
        "binary_mtime_utc": {"netload": utc_mtime(E["B_NETLOAD"]), "netserve": utc_mtime(E["B_NETSERVE"])},
        "machine_load": {"start": E["B_LOAD_START"], "end": E["B_LOAD_END"]},
        "sha256": sha,
        "versions": {"netload": version_line([os.path.join(snap, "netload"), "--version"]),
                     "iperf3": version_line(["iperf3", "--version"]), "iperf2": version_line(["iperf", "-v"]),
                     "sockperf": version_line(["sockperf", "--version"])},
        "pacing": pacing,
        "sections": E["B_SECTIONS"].split(","),
        "notes": [
            f"All traffic on 127.0.0.1; sender pinned to CPU {s}, receiver to CPU {r} (taskset for every tool, plus netload -T {s},{r}), except the --streams rows (unpinned).",
            "Counts are the receiver side: netserve (netload JSON receiver.*), iperf3 server JSON (packets - lost_packets), iperf2 server report (Total - Lost), sockperf server Total N messages received.",
            "UDP receive buffer 4 MB for every tool (netserve --rcvbuf 4M; iperf3/iperf2 -w 4M; sockperf --buffer-size), except the --streams rows (netserve defaults).",
            "On loopback UDP GSO buffers are never segmented when the receiver has GRO: netserve receives whole GSO buffers (up to 64 KiB) and counts their segments. The GSO -> --no-gro rows are the figure where the kernel delivers every datagram separately; --no-gso -> --no-gro is one datagram per packet end to end, like the other tools.",
            "Pacing: the worst 100-ms interval is judged on interior intervals (first and last excluded); the all-interval figure is printed in the note.",
            "Wire-like rows (8): two network namespaces joined by a veth pair with gso_max_segs 1 on both ends (every datagram its own frame), RPS steering the stack of the receiver to the receiver CPU, receiver pinned there and sender on the other CPU (tests/lab/wirelike.sh). Receive buffer 4 MB for every tool. Notes give the kernel counters around each run: UDP frames the sending veth carried, Udp InDatagrams at the receiver, and where the rest was lost (receiver CPU backlog, socket buffer, other)."
        ]
    }
    with open(os.path.join(E["B_RAW"], "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd = argv[1]
    if cmd == "freeport":
        print(freeport())
    elif cmd == "wait-ready":
        print(wait_ready(argv[2], float(argv[3])))
    elif cmd == "field":
        txt = open(argv[2]).read()
        print(dig(json.loads(txt), argv[3]))
    elif cmd == "ports":
        ports_test(argv[2], argv[3], int(argv[4]), argv[5])
    elif cmd == "meta":
        write_meta(sys.stdin.read())
    elif cmd == "report":
        return report(argv[2], argv[3])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
