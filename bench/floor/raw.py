#!/usr/bin/env python3
"""The plainest XDP generator and drop counter this kernel runs, for the
floor measurement (bench/floor/floor.sh): no pacing, no stamps, no
sequence checks, no map, one frame.

  raw.py drop IFNAME SECONDS   attach `return XDP_DROP` to IFNAME (driver
                               mode) and print the frames it dropped each
                               second (veth's own rx_queue_*_xdp_drops)
  raw.py gen IFNAME SECONDS DST_MAC
                               send one 64 B UDP frame again and again out of
                               IFNAME with BPF_PROG_TEST_RUN live frames
                               (`return XDP_TX`, batches of 64) for SECONDS

Why not xdp-tools: Debian 12's xdp-tools 1.3.1 fails to load on this kernel
(its programs attach to the tracepoint xdp_redirect_map_err, which 6.x no
longer has). Why Python: two-instruction programs need no compiler; the
bpf(2) calls are a few structs (ctypes)."""
import ctypes
import os
import signal
import struct
import subprocess
import sys
import time

SYS_BPF = 321  # x86_64
BPF_PROG_LOAD, BPF_PROG_TEST_RUN, BPF_LINK_CREATE = 5, 10, 28
BPF_PROG_TYPE_XDP, BPF_XDP = 6, 37
BPF_F_TEST_XDP_LIVE_FRAMES = 1 << 1
XDP_FLAGS_DRV_MODE = 1 << 2
XDP_DROP, XDP_TX = 1, 3

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), 128)
    r = libc.syscall(SYS_BPF, cmd, buf, 128)
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def load(action):
    """`r0 = action; exit`, an XDP program."""
    insns = struct.pack("<BBhi", 0xB7, 0, 0, action) + struct.pack("<BBhi", 0x95, 0, 0, 0)
    ibuf = ctypes.create_string_buffer(insns)
    lic = ctypes.create_string_buffer(b"GPL")
    attr = struct.pack("<IIQQIIQII16sII", BPF_PROG_TYPE_XDP, 2, ctypes.addressof(ibuf),
                       ctypes.addressof(lic), 0, 0, 0, 0, 0, b"sr_raw", 0, BPF_XDP)
    return bpf(BPF_PROG_LOAD, attr)


def drop(ifname, seconds):
    prog = load(XDP_DROP)
    ifindex = socket_ifindex(ifname)
    bpf(BPF_LINK_CREATE, struct.pack("<IIII", prog, ifindex, BPF_XDP, XDP_FLAGS_DRV_MODE))
    print("attached", flush=True)

    def drops():
        out = subprocess.run(["ethtool", "-S", ifname], capture_output=True, text=True).stdout
        return sum(int(l.split(":")[1]) for l in out.splitlines()
                   if l.strip().startswith("rx_queue_") and l.strip().split(":")[0].endswith("_xdp_drops"))

    last, t_last = drops(), time.monotonic()
    end = t_last + seconds
    while time.monotonic() < end:
        time.sleep(1)
        n, t = drops(), time.monotonic()
        print(f"rx_per_s {(n - last) / (t - t_last):.0f}", flush=True)
        last, t_last = n, t


def socket_ifindex(ifname):
    import socket
    return socket.if_nametoindex(ifname)


def gen(ifname, seconds, dst_mac):
    prog = load(XDP_TX)
    ifindex = socket_ifindex(ifname)
    src = open(f"/sys/class/net/{ifname}/address").read().strip()
    mac = lambda s: bytes(int(x, 16) for x in s.split(":"))
    # 64 B with FCS: 60 B frame, IPv4/UDP 198.18.0.2 -> 198.19.1.2, port 7.
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, 0, 0, 64, 17, 0,
                     bytes([198, 18, 0, 2]), bytes([198, 19, 1, 2]))
    s = sum(struct.unpack("!10H", ip))
    s = (s & 0xFFFF) + (s >> 16)
    ip = ip[:10] + struct.pack("!H", ~s & 0xFFFF) + ip[12:]
    udp = struct.pack("!HHHH", 1024, 7, 26, 0) + bytes(18)
    frame = mac(dst_mac) + mac(src) + b"\x08\x00" + ip + udp
    assert len(frame) == 60
    data = ctypes.create_string_buffer(frame, len(frame))
    ctx = ctypes.create_string_buffer(struct.pack("<6I", 0, len(frame), 0, ifindex, 0, 0), 24)
    repeat = 1 << 20
    sent, calls = 0, 0
    signal.signal(signal.SIGALRM, lambda *_: None)
    t0 = time.monotonic()
    end = t0 + seconds
    while time.monotonic() < end:
        attr = struct.pack("<IIIIQQIIIIQQIII", prog, 0, len(frame), 0, ctypes.addressof(data), 0,
                           repeat, 0, 24, 0, ctypes.addressof(ctx), 0,
                           BPF_F_TEST_XDP_LIVE_FRAMES, 0, 64)
        bpf(BPF_PROG_TEST_RUN, attr)
        sent += repeat
        calls += 1
    el = time.monotonic() - t0
    print(f"sent {sent} in {el:.3f} s: {sent / el:.0f} fps ({calls} calls)", flush=True)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "drop":
        drop(sys.argv[2], float(sys.argv[3]))
    elif cmd == "gen":
        gen(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(f"raw.py: unknown command {cmd}")
