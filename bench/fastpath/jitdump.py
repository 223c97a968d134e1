#!/usr/bin/env python3
"""The machine code the kernel's JIT made of a loaded BPF program, by id:
BPF_PROG_GET_FD_BY_ID, then BPF_OBJ_GET_INFO_BY_FD with jited_prog_insns.
Why: Debian 12's bpftool is built without libbfd ("No libbfd support"
for `bpftool prog dump jited`), and perf cannot annotate BPF code without
libopcodes; objdump disassembles the raw bytes this writes.

usage: jitdump.py PROG_ID OUT.bin   (root; prints the byte count)
"""
import ctypes
import struct
import sys

SYS_BPF = 321  # x86_64
BPF_PROG_GET_FD_BY_ID = 13
BPF_OBJ_GET_INFO_BY_FD = 15
INFO_LEN = 256  # enough of struct bpf_prog_info for its first fields

libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_BPF, cmd, buf, 128)
    if r < 0:
        raise OSError(ctypes.get_errno(), f"bpf({cmd})")
    return r


def info(fd, jited_len=0, jited_buf=None):
    """struct bpf_prog_info: jited_prog_len at 16, jited_prog_insns at 24."""
    out = ctypes.create_string_buffer(INFO_LEN)
    if jited_buf is not None:
        struct.pack_into("<I", out, 16, jited_len)
        struct.pack_into("<Q", out, 24, ctypes.addressof(jited_buf))
    bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("<IIQ", fd, INFO_LEN, ctypes.addressof(out)))
    return out.raw


def main():
    prog_id, path = int(sys.argv[1]), sys.argv[2]
    fd = bpf(BPF_PROG_GET_FD_BY_ID, struct.pack("<I", prog_id))
    (n,) = struct.unpack_from("<I", info(fd), 16)
    code = ctypes.create_string_buffer(n)
    info(fd, n, code)
    open(path, "wb").write(code.raw)
    print(n)


if __name__ == "__main__":
    main()
