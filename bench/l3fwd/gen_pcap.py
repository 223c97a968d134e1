#!/usr/bin/env python3
"""Write a pcap of 64-byte-on-the-wire IPv4/UDP frames (60 bytes captured,
the 4-byte FCS is not stored in pcap files) for the l3fwd comparison.

Destinations are 198.18.<net>.<host> with <net> taken from --dst-net (default
0), i.e. they hit l3fwd's default LPM route 198.18.<net>.0/24 -> port <net>
(examples/l3fwd/main.c, ipv4_l3fwd_route_array).  Many flows: source host,
destination host and both UDP ports vary per frame.  Valid IPv4 header
checksum, TTL 64, UDP checksum 0 (allowed for IPv4).  Standard library only.

With --dst-file the destinations are the file's addresses (one per line,
cycled over the frames) instead: compare.sh's full-table variant, spread
over the routing table (full_table.py).
"""
import argparse
import socket
import struct


def csum16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def frame(i: int, dst_net: int, dst_mac: bytes, src_mac: bytes, dsts=None) -> bytes:
    # Sources in 198.51.0.0/16: irrelevant for forwarding, never match a route.
    src_ip = bytes([198, 51, (i >> 8) & 0xFF, 1 + (i % 253)])
    if dsts:
        dst_ip = dsts[i % len(dsts)]
    else:
        dst_ip = bytes([198, 18, dst_net, 1 + ((i * 7) % 253)])
    sport = 1024 + (i * 13) % 60000
    dport = 1024 + (i * 31) % 60000
    payload_len = 60 - 14 - 20 - 8  # 18 bytes
    udp_len = 8 + payload_len
    total_len = 20 + udp_len
    ip_hdr = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, total_len, i & 0xFFFF, 0x4000, 64, 17, 0,
        src_ip, dst_ip)
    ip_hdr = ip_hdr[:10] + struct.pack("!H", csum16(ip_hdr)) + ip_hdr[12:]
    udp = struct.pack("!HHHH", sport, dport, udp_len, 0) + bytes(payload_len)
    eth = dst_mac + src_mac + struct.pack("!H", 0x0800)
    f = eth + ip_hdr + udp
    assert len(f) == 60, len(f)
    return f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=4096,
                    help="frames (= flows) in the file (default 4096)")
    ap.add_argument("--dst-net", type=int, default=0,
                    help="third octet of the 198.18.N.0/24 destination net")
    ap.add_argument("--dst-file", help="destination addresses, one per line")
    ap.add_argument("--dst-mac", default="02:00:00:00:00:10")
    ap.add_argument("--src-mac", default="02:00:00:00:00:01")
    a = ap.parse_args()
    dmac = bytes.fromhex(a.dst_mac.replace(":", ""))
    smac = bytes.fromhex(a.src_mac.replace(":", ""))
    dsts = None
    if a.dst_file:
        with open(a.dst_file) as f:
            dsts = [socket.inet_aton(l.strip()) for l in f if l.strip()]
    with open(a.out, "wb") as fh:
        # pcap global header: magic, v2.4, tz 0, sigfigs 0, snaplen, LINKTYPE_ETHERNET
        fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(a.count):
            f = frame(i, a.dst_net, dmac, smac, dsts)
            fh.write(struct.pack("<IIII", i // 1000000, i % 1000000, len(f), len(f)))
            fh.write(f)


if __name__ == "__main__":
    main()
