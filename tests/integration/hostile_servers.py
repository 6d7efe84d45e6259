#!/usr/bin/env python3
"""netload against hostile servers, each a fake in this script on 127.0.0.1 (ports from the kernel), each
run bounded (netload is killed at 15 s). Prints what netload did (seconds, CPU seconds, exit status, what
the server saw) and fails when the harm is still done.
    hostile_servers.py NETLOAD CASE
Cases (--peer iperf3 unless said):
  trickle    after CREATE_STREAMS, TEST_START every 3 s and never TEST_RUNNING: netload (--connect-timeout
             2) ends by its setup deadline, within 3.5 s, naming TEST_RUNNING and the TEST_START it had, on
             under 0.5 s of CPU
  flood      after CREATE_STREAMS, TEST_START bytes without end: netload ends within 2 s, naming the second
             TEST_START, on under 0.5 s of CPU
  recreate   CREATE_STREAMS every 50 ms: netload connects its one stream once and ends within 2 s naming the
             second, on under 0.5 s of CPU
  during     TEST_START 0.5 s into a 5 s test: netload ends within 2 s, naming it, on under 0.5 s of CPU
  escape     a whole test whose server version holds ESC, BEL, CR and LF ("FORGED: receiver ok"): netload's
             table and messages hold no raw control byte and forge no line
  native     a netserve whose refusal and whose version hold ESC and BEL: netload's message holds no raw
             control byte
  intervals  a netserve that sends interval reports numbered 4 000 000 000 and on: netload keeps none and ends
             within 2 s, naming the first
  port       --peer netserver: a netserver naming data port 65536 + P (P: a UDP port of this script):
             refused naming the port, and no datagram reaches P
"""
import json
import os
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

netload, case = sys.argv[1], sys.argv[2]
HOSTILE = "iperf 3.12\x1b[2J\x1b]0;owned\x07\r\nFORGED: receiver ok"
failures = []


def fail(why):
    print("FAIL:", why)
    failures.append(why)


def exactly(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


class FakeIperf3:
    """An iperf3 server: the cookie, PARAM_EXCHANGE and the parameters as iperf3's, then `script(self)`.
    Every later connection is a stream: its bytes are counted."""

    def __init__(self, script):
        self.script = script
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.control = None
        self.streams = []
        self.stream_bytes = 0
        self.lock = threading.Lock()
        self.stopping = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            if self.control is None:
                self.control = conn
                threading.Thread(target=self.serve, daemon=True).start()
            else:
                self.streams.append(conn)
                threading.Thread(target=self.count, args=(conn,), daemon=True).start()

    def count(self, conn):
        try:
            exactly(conn, 37)  # the cookie
            while chunk := conn.recv(1 << 16):
                with self.lock:
                    self.stream_bytes += len(chunk)
        except OSError:
            pass

    def serve(self):
        c = self.control
        try:
            exactly(c, 37)
            c.sendall(b"\x09")  # PARAM_EXCHANGE
            (n,) = struct.unpack(">I", exactly(c, 4))
            self.params = json.loads(exactly(c, n))
            self.script(self)
        except (OSError, ConnectionError):
            pass

    def send_for(self, seconds, every, byte):
        """`byte` every `every` s for `seconds` s, or until netload goes."""
        end = time.monotonic() + seconds
        try:
            while time.monotonic() < end:
                self.control.sendall(byte)
                time.sleep(every)
        except OSError:
            pass

    def stop(self):
        self.stopping = True
        for s in [self.listener, self.control] + self.streams:
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


def run_netload(args, limit=15):
    """netload with `args`, killed at `limit` s: (seconds, CPU seconds, exit status, stdout, stderr)."""
    start = time.monotonic()
    p = subprocess.Popen([netload] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    got = {p.stdout.fileno(): b"", p.stderr.fileno(): b""}
    open_fds = set(got)
    while open_fds and time.monotonic() - start < limit:
        ready, _, _ = select.select(list(open_fds), [], [], 0.05)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            got[fd] += chunk
            if not chunk:
                open_fds.discard(fd)
    killed = bool(open_fds)
    if killed:
        p.send_signal(signal.SIGKILL)
    out, err = got[p.stdout.fileno()], got[p.stderr.fileno()]
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.monotonic() - start
    code = "killed at %d s" % limit if killed else os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    print(f"netload {' '.join(args)}\n  -> {seconds:.2f} s, CPU {cpu:.2f} s, exit {code}")
    print("  stderr:", err.decode(errors="replace").strip()[:400])
    return seconds, cpu, code, out, err


def iperf3_args(fake, extra=()):
    return ["--peer", "iperf3", "-H", "127.0.0.1", "-p", str(fake.port), "-t", "TCP_STREAM", "--connect-timeout",
            "2"] + list(extra)


def expect(cond, why):
    if not cond:
        fail(why)


def no_raw_control(name, data):
    bad = sorted({b for b in data if (b < 0x20 and b != 0x0A) or b == 0x7F})
    print(f"  {name}: {len(data)} bytes, raw control bytes: {', '.join('0x%02x' % b for b in bad) or 'none'}")
    expect(not bad, f"{name} holds raw control bytes {bad}")
    expect(not re.search(rb"(^|\n)FORGED", data), f"{name} holds a forged line")


def case_trickle():
    def trickle(f):
        f.control.sendall(b"\x0a")  # CREATE_STREAMS
        time.sleep(0.5)
        f.send_for(20, 3, b"\x01")  # TEST_START now and every 3 s

    fake = FakeIperf3(trickle)
    secs, cpu, code, _, err = run_netload(iperf3_args(fake, ["-l", "1"]))
    fake.stop()
    expect(code == 1, f"exit {code}, want 1")
    expect(secs <= 3.5, f"netload took {secs:.1f} s, want the setup deadline (2 s) within 3.5 s")
    expect(cpu <= 0.5, f"netload took {cpu:.2f} s of CPU, want 0.5 s at most")
    expect(b"TEST_RUNNING" in err and b"TEST_START" in err, "the error names neither TEST_RUNNING nor TEST_START")


def case_flood():
    def flood(f):
        f.control.sendall(b"\x0a")
        time.sleep(0.3)  # the stream connects
        f.send_for(12, 0, b"\x01" * 65536)

    fake = FakeIperf3(flood)
    secs, cpu, code, _, err = run_netload(iperf3_args(fake, ["-l", "1"]))
    fake.stop()
    expect(code == 1, f"exit {code}, want 1")
    expect(secs <= 2, f"netload took {secs:.1f} s, want 2 s at most")
    expect(cpu <= 0.5, f"netload took {cpu:.2f} s of CPU, want 0.5 s at most")
    expect(b"TEST_START a second time" in err, "the error does not name the second TEST_START")


def case_recreate():
    fake = FakeIperf3(lambda f: f.send_for(5, 0.05, b"\x0a"))
    secs, cpu, code, _, err = run_netload(iperf3_args(fake, ["-l", "1"]))
    time.sleep(0.2)
    print(f"  the server accepted {len(fake.streams)} stream connections (netload asked for 1 stream)")
    fake.stop()
    expect(code == 1, f"exit {code}, want 1")
    expect(len(fake.streams) == 1, f"{len(fake.streams)} stream connections, want 1")
    expect(secs <= 2, f"netload took {secs:.1f} s, want 2 s at most")
    expect(cpu <= 0.5, f"netload took {cpu:.2f} s of CPU, want 0.5 s at most")
    expect(b"CREATE_STREAMS a second time" in err, "the error does not name the second CREATE_STREAMS")


def case_during():
    def script(f):
        f.control.sendall(b"\x0a")
        time.sleep(0.3)
        f.control.sendall(b"\x01\x02")  # TEST_START, TEST_RUNNING
        time.sleep(0.5)
        f.control.sendall(b"\x01")
        time.sleep(10)

    fake = FakeIperf3(script)
    secs, cpu, code, _, err = run_netload(iperf3_args(fake, ["-l", "5", "--rate", "100M"]))
    fake.stop()
    expect(code == 1, f"exit {code}, want 1")
    expect(secs <= 2, f"netload took {secs:.1f} s, want 2 s at most (the test was to last 5 s)")
    expect(cpu <= 0.5, f"netload took {cpu:.2f} s of CPU, want 0.5 s at most")
    expect(b"TEST_START during the test" in err, "the error does not name TEST_START during the test")


def case_escape():
    def script(f):
        c = f.control
        c.sendall(b"\x0a")
        time.sleep(0.3)
        c.sendall(b"\x01\x02")
        exactly(c, 1)  # TEST_END: netload's senders are done and the server's kernel has every byte
        time.sleep(0.2)
        c.sendall(b"\x0d")  # EXCHANGE_RESULTS
        (n,) = struct.unpack(">I", exactly(c, 4))
        exactly(c, n)
        with f.lock:
            got = f.stream_bytes
        stream = {"id": 1, "bytes": got, "retransmits": -1, "jitter": 0, "errors": 0, "packets": 0,
                  "start_time": 0, "end_time": 1}
        results = {"cpu_util_total": 0, "cpu_util_user": 0, "cpu_util_system": 0, "sender_has_retransmits": -1,
                   "streams": [stream], "server_output_json": {"start": {"version": HOSTILE}}}
        body = json.dumps(results).encode()
        c.sendall(struct.pack(">I", len(body)) + body + b"\x0e")  # DISPLAY_RESULTS
        exactly(c, 1)  # IPERF_DONE

    fake = FakeIperf3(script)
    secs, cpu, code, out, err = run_netload(iperf3_args(fake, ["-l", "1"]))
    fake.stop()
    print(out.decode(errors="replace"))
    expect(code == 0, f"exit {code}, want 0")
    no_raw_control("stdout", out)
    no_raw_control("stderr", err)
    expect(b"counted by: iperf3 3.12\\x1b[2J" in out, "the table does not show the version escaped")


def native_server(answer):
    """A netserve that reads the request and sends `answer` (type, body)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def serve():
        conn, _ = listener.accept()
        try:
            (n,) = struct.unpack(">I", exactly(conn, 4))
            exactly(conn, n)
            payload = json.dumps({"v": 7, "type": answer[0], "body": answer[1]}).encode()
            conn.sendall(struct.pack(">I", len(payload)) + payload)
            time.sleep(2)
        except (OSError, ConnectionError):
            pass
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener


def case_intervals():
    """A netserve that, once the test starts, sends an interval report of an index far past the test's."""
    version = subprocess.run([netload, "--version"], capture_output=True, text=True).stdout.split()[-1]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))  # where netload's datagrams go

    def send(conn, kind, body):
        payload = json.dumps({"v": 7, "type": kind, "body": body}).encode()
        conn.sendall(struct.pack(">I", len(payload)) + payload)

    def serve():
        conn, _ = listener.accept()
        try:
            (n,) = struct.unpack(">I", exactly(conn, 4))
            exactly(conn, n)
            send(conn, "ready", {"test_id": 1, "cookie": "c", "server_version": version, "rcvbuf": 0, "sndbuf": 0,
                                 "batching": "recvmmsg", "segmentation": "", "segmentation_why": ""})
            (n,) = struct.unpack(">I", exactly(conn, 4))
            exactly(conn, n)  # start
            for k in range(3):
                send(conn, "interval", {"index": 4000000000 + k, "end_wall_ns": 0, "packets": 0, "bytes": 0})
            time.sleep(20)
        except (OSError, ConnectionError):
            pass
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    secs, cpu, code, out, err = run_netload(["-H", "127.0.0.1", "-p", str(port), "-t", "UDP_STREAM", "-l", "1",
                                             "--interval", "0.5", "--pps", "1000"])
    listener.close()
    expect(code == 1, f"exit {code}, want 1")
    expect(secs <= 2, f"netload took {secs:.1f} s, want 2 s at most")
    expect(b"interval 4000000000" in err, "the error does not name the interval")


def case_native():
    ready = {"test_id": 1, "cookie": "c", "server_version": "0.\x1b]0;owned\x07", "rcvbuf": 0, "sndbuf": 0,
             "batching": "gro", "segmentation": "", "segmentation_why": ""}
    for answer in [("error", {"reason": "busy\x1b[2J\x07\r\nFORGED: receiver ok"}), ("ready", ready)]:
        listener = native_server(answer)
        port = listener.getsockname()[1]
        secs, cpu, code, out, err = run_netload(["-H", "127.0.0.1", "-p", str(port), "-t", "TCP_STREAM", "-l", "1"])
        listener.close()
        expect(code == 1, f"{answer[0]}: exit {code}, want 1")
        no_raw_control(f"{answer[0]}: stderr", err)
        no_raw_control(f"{answer[0]}: stdout", out)


def case_port():
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.05)
    target = udp.getsockname()[1]
    named = 65536 + target
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    got = [0]

    def serve():
        conn, _ = listener.accept()
        try:
            exactly(conn, 656)  # netperf's request
            setup = bytearray(656)
            struct.pack_into(">ii", setup, 0, 98, 0)  # the setup response, no error
            struct.pack_into(">I", setup, 52, named)  # its data port (word 13)
            conn.sendall(bytes(setup))
            end = time.monotonic() + 3
            while time.monotonic() < end:
                try:
                    udp.recv(65536)
                    got[0] += 1
                except socket.timeout:
                    pass
            conn.sendall(struct.pack(">ii", 99, 0) + bytes(648))  # results: nothing counted
            time.sleep(1)
        except (OSError, ConnectionError):
            pass
        conn.close()

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    secs, cpu, code, out, err = run_netload(["--peer", "netserver", "-H", "127.0.0.1", "-p",
                                             str(listener.getsockname()[1]), "-t", "UDP_STREAM", "-l", "1",
                                             "--pps", "1000", "--", "-m", "64"])
    server.join(6)
    print(f"  datagrams that reached port {target} (data port {named} cut to 16 bits): {got[0]}")
    expect(code == 1, f"exit {code}, want 1")
    expect(got[0] == 0, f"{got[0]} datagrams reached port {target}")
    expect(f"data port {named}".encode() in err, f"the error does not name data port {named}")


cases = {"trickle": case_trickle, "flood": case_flood, "recreate": case_recreate, "during": case_during,
         "escape": case_escape, "native": case_native, "intervals": case_intervals, "port": case_port}
if case not in cases:
    sys.exit(f"unknown case {case}")
cases[case]()
sys.exit(1 if failures else 0)
