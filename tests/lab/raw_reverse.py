#!/usr/bin/env python3
"""A raw control client (not netload, which refuses what does not fit its path MTU): asks an unkeyed
netserve for a reverse UDP_STREAM of SIZE-byte messages to a UDP socket of its own, and if the test is
granted, starts it and counts what arrives. Prints 'refused: REASON' or 'ran: N datagrams'.
    raw_reverse.py HOST PORT SIZE"""
import json
import socket
import struct
import sys
import time

host, port, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def send(sock, kind, body):
    payload = json.dumps({"v": 7, "type": kind, "body": body}).encode()
    sock.sendall(struct.pack(">I", len(payload)) + payload)


def read(sock):
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise SystemExit("ran: the server closed the connection")
            data += chunk
        return data
    (n,) = struct.unpack(">I", exactly(4))
    return json.loads(exactly(n))


control = socket.create_connection((host, port), timeout=10)
data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
data.bind((control.getsockname()[0], 0))
data.settimeout(0.2)
send(control, "test_request", {
    "kind": "UDP_STREAM", "message_size": size, "duration_s": 0.5, "streams": 1, "reverse": True, "pps": 20.0,
    "data_ports": [data.getsockname()[1]], "rcvbuf": 0, "sndbuf": 0, "cpu": -1, "dscp": -1, "mss": 0, "segmentation": "auto",
    "interval_s": 0.0, "recv_size": 0, "congestion": "", "zerocopy": False, "send_copy": False, "recv_copy": False,
    "client_version": "raw", "response_size": 0, "burst": 0})
reply = read(control)
if reply["type"] == "error":
    print("refused: " + reply["body"]["reason"])
    sys.exit(0)
send(control, "start", {"start_wall_ns": time.time_ns() + 200_000_000})
got, until = 0, time.monotonic() + 1.5
while time.monotonic() < until:
    try:
        data.recv(65536)
        got += 1
    except socket.timeout:
        pass
print(f"ran: {got} datagrams")
