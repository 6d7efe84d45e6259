#!/usr/bin/env python3
"""Helper for bench/run (python3 stdlib only).

Subcommands:
  freeport                      print a port free for both TCP and UDP on 127.0.0.1
  wait-ready FILE TIMEOUT       wait for netserve's ready line in FILE, print its first port
  field FILE EXPR               print a value from a netload JSON result (EXPR like receiver.pps)
  ports NETSERVE CPU N OUT      start netserve with N x "-p 0" pinned to CPU ("-": unpinned), time the ready line,
                                read VmRSS/VmHWM, stop it, write JSON to OUT
  report RAWDIR OUTJSON         parse every raw output, print the table, write the JSON summary
                                (parsers.py reads the outputs, report.py builds the table)
"""
import json
import os
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
    elif cmd == "report":
        return report(argv[2], argv[3])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
