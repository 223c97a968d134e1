#!/usr/bin/env python3
"""Minimal DPDK telemetry v2 client: print the JSON answer to one command.

usage: telemetry.py SOCKET_PATH COMMAND      e.g. /ethdev/stats,0
Retries the connect for a few seconds (the socket appears after EAL init).
"""
import json
import socket
import sys
import time


def query(path: str, cmd: str, wait_s: float = 10.0) -> dict:
    deadline = time.time() + wait_s
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            break
        except OSError:
            s.close()
            if time.time() > deadline:
                raise
            time.sleep(0.1)
    with s:
        info = json.loads(s.recv(16384).decode())
        s.send(cmd.encode())
        data = s.recv(info.get("max_output_len", 16384) + 1024)
        return json.loads(data.decode())


if __name__ == "__main__":
    print(json.dumps(query(sys.argv[1], sys.argv[2])))
