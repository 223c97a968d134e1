#!/usr/bin/env python3
"""The plainest XDP generator and drop counter this kernel runs, for the
floor measurement (bench/floor/floor.sh): no pacing, no stamps, no
sequence checks, no map, one frame.

  raw.py drop IFNAME SECONDS   attach `return XDP_DROP` to IFNAME (driver
                               mode) and print the frames it dropped each
                               second (veth's own rx_queue_*_xdp_drops)
  raw.py fwd IFNAME SECONDS OUT_IFNAME DST_MAC
                               attach to IFNAME (driver mode) the plainest
                               floor: the frame's MACs rewritten (DST_MAC,
                               OUT_IFNAME's own) and `bpf_redirect` to
                               OUT_IFNAME; for SECONDS
  raw.py gen IFNAME SECONDS DST_MAC
                               send one 64 B UDP frame again and again out of
                               IFNAME with BPF_PROG_TEST_RUN live frames
                               (`return XDP_TX`, batches of 64) for SECONDS
  drop, gen ... --touch        the drop end reads the frame's payload, the
                               generator writes a time stamp into it: a
                               tester's per-frame touch alone, no pacing,
                               sequences or maps

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


def insn(code, dst=0, src=0, off=0, imm=0):
    """One eBPF instruction (`struct bpf_insn`)."""
    return struct.pack("<BBhi", code, (src << 4) | dst, off, imm)


def load(action):
    """`r0 = action; exit`, an XDP program."""
    return load_insns(insn(0xB7, imm=action) + insn(0x95))


def load_insns(insns):
    ibuf = ctypes.create_string_buffer(insns)
    lic = ctypes.create_string_buffer(b"GPL")
    log = ctypes.create_string_buffer(65536)
    attr = struct.pack("<IIQQIIQII16sII", BPF_PROG_TYPE_XDP, len(insns) // 8,
                       ctypes.addressof(ibuf), ctypes.addressof(lic), 1, len(log),
                       ctypes.addressof(log), 0, 0, b"sr_raw", 0, BPF_XDP)
    try:
        return bpf(BPF_PROG_LOAD, attr)
    except OSError:
        sys.stderr.write(log.value.decode(errors="replace"))
        raise


def le32(b):
    """Bytes as the signed immediate a little-endian store writes them with."""
    return struct.unpack("<i", b.ljust(4, b"\0"))[0]


def attach(prog, ifname):
    bpf(BPF_LINK_CREATE, struct.pack("<IIII", prog, socket_ifindex(ifname), BPF_XDP,
                                     XDP_FLAGS_DRV_MODE))


def fwd(ifname, seconds, out_ifname, dst_mac):
    """The plainest floor: MACs rewritten, redirected out of `out_ifname`
    (what the bench's floor DUT does, without its per-pattern port
    lookup)."""
    mac = lambda s: bytes(int(x, 16) for x in s.split(":"))
    dst = mac(dst_mac)
    src = mac(open(f"/sys/class/net/{out_ifname}/address").read().strip())
    prog = load_insns(b"".join([
        insn(0x61, dst=2, src=1, off=0),      # r2 = ctx->data
        insn(0x61, dst=3, src=1, off=4),      # r3 = ctx->data_end
        insn(0xBF, dst=4, src=2),             # r4 = r2
        insn(0x07, dst=4, imm=12),            # r4 += 12
        insn(0x2D, dst=4, src=3, off=8),      # if r4 > r3 goto pass
        insn(0x62, dst=2, off=0, imm=le32(dst[0:4])),   # the destination MAC
        insn(0x6A, dst=2, off=4, imm=le32(dst[4:6])),
        insn(0x62, dst=2, off=6, imm=le32(src[0:4])),   # the source MAC
        insn(0x6A, dst=2, off=10, imm=le32(src[4:6])),
        insn(0xB7, dst=1, imm=socket_ifindex(out_ifname)),
        insn(0xB7, dst=2, imm=0),
        insn(0x85, imm=23),                   # bpf_redirect(ifindex, 0)
        insn(0x95),                           # exit
        insn(0xB7, dst=0, imm=2),             # pass: XDP_PASS
        insn(0x95),
    ]))
    attach(prog, ifname)
    print("attached", flush=True)
    time.sleep(seconds)


def touching(action, store):
    """`action`, after touching the frame's first line as a tester must
    (`store`: write a time stamp into the UDP payload, as a generator
    stamps; otherwise read the payload's first word, as a counter reads
    the stamp and sequence): the cost of the bench's per-frame work on a
    line the other CPU wrote last, without the rest of it."""
    body = [
        insn(0xBF, dst=6, src=1),             # r6 = ctx
        insn(0x85, imm=5),                    # r0 = bpf_ktime_get_ns()
        insn(0x61, dst=2, src=6, off=0),      # r2 = ctx->data
        insn(0x61, dst=3, src=6, off=4),      # r3 = ctx->data_end
        insn(0xBF, dst=4, src=2),             # r4 = r2
        insn(0x07, dst=4, imm=50),            # r4 += 50
        insn(0x2D, dst=4, src=3, off=1),      # if r4 > r3 goto out
        insn(0x7B, dst=2, src=0, off=42) if store    # *(u64 *)(r2 + 42) = r0
        else insn(0x79, dst=0, src=2, off=42),       # r0 = *(u64 *)(r2 + 42)
        insn(0xB7, dst=0, imm=action),        # out: r0 = action
        insn(0x95),
    ]
    if not store:
        body[1] = insn(0xB7, dst=0, imm=0)   # a counter reads no clock here
    return load_insns(b"".join(body))


def drop(ifname, seconds, touch=False):
    attach(touching(XDP_DROP, store=False) if touch else load(XDP_DROP), ifname)
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


def gen(ifname, seconds, dst_mac, stamp=False):
    prog = touching(XDP_TX, store=True) if stamp else load(XDP_TX)
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
    # --touch: the drop end reads the frame's payload and the generator
    # writes a time stamp into it (see `touching`).
    touch = "--touch" in sys.argv
    sys.argv = [a for a in sys.argv if a != "--touch"]
    if cmd == "drop":
        drop(sys.argv[2], float(sys.argv[3]), touch)
    elif cmd == "fwd":
        fwd(sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5])
    elif cmd == "gen":
        gen(sys.argv[2], float(sys.argv[3]), sys.argv[4], touch)
    else:
        sys.exit(f"raw.py: unknown command {cmd}")
