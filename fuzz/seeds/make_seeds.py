#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/seeds/<target>/ (committed; re-run after
changing a harness's input format). Run from anywhere: python3 make_seeds.py

Usage with cargo fuzz: the first directory collects new inputs, the seed
directory is read only, e.g.
  cargo fuzz run pipeline -s none corpus/pipeline seeds/pipeline -- -max_total_time=60
"""
import os, re, struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

P0 = bytes([2, 0, 0, 0, 0, 0x10])
HOST = bytes([2, 0, 0, 0, 0, 2])


def v4(s):
    return bytes(int(x) for x in s.split("."))


def v6(s):
    import ipaddress
    return ipaddress.IPv6Address(s).packed


def eth(dst, src, et, payload):
    return dst + src + struct.pack("!H", et) + payload


def ipv4(src, dst, proto, l4, ttl=64, flags=0):
    # Checksums are left zero: the pipeline harness fixes them (ctl bit 2).
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, flags, ttl,
                       proto, 0, v4(src), v4(dst)) + l4


def ipv6(src, dst, nh, l4, hlim=64):
    return struct.pack("!IHBB16s16s", 0x60000000, len(l4), nh, hlim,
                       v6(src), v6(dst)) + l4


def udp(sp, dp, data):
    return struct.pack("!HHHH", sp, dp, 8 + len(data), 0) + data


def tcp(sp, dp):
    return struct.pack("!HHIIBBHHH", sp, dp, 3, 4, 0x50, 0x02, 1024, 0, 0)


def icmp_echo(t, data):
    return struct.pack("!BBHHH", t, 0, 0, 1, 1) + data


def ns(target, src):
    body = struct.pack("!BBHI16s", 135, 0, 0, 0, v6(target))
    body += bytes([1, 1]) + HOST  # source link-layer address option
    snm = v6(target)[13:]
    dst = "ff02::1:ff%02x:%02x%02x" % tuple(snm)
    return eth(bytes([0x33, 0x33, 0xff]) + snm, HOST, 0x86DD, ipv6(src, dst, 58, body, 255))


def arp_request(sender, target):
    return eth(b"\xff" * 6, HOST, 0x0806,
               struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, HOST, v4(sender),
                           b"\0" * 6, v4(target)))


FRAMES = {
    "udp4_routed": eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.18.200.1", 17, udp(1, 2, bytes(64)))),
    "udp4_big_df": eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.18.200.1", 17, udp(1, 2, bytes(1400)), flags=0x4000)),
    "udp4_big_frag": eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.18.200.1", 17, udp(1, 2, bytes(1400)))),
    "udp4_ttl1": eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.18.200.1", 17, udp(1, 2, bytes(8)), ttl=1)),
    "udp4_noroute": eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "10.0.0.1", 17, udp(1, 2, bytes(8)))),
    "udp4_connected": eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.19.0.77", 17, udp(1, 2, bytes(10)))),
    "icmp4_echo": eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.18.0.1", 1, icmp_echo(8, b"ping"))),
    "tcp6_routed": eth(P0, HOST, 0x86DD, ipv6("2001:2:0:1::2", "2001:2:0:8000::1", 6, tcp(1, 2) + bytes(20))),
    "udp6_big": eth(P0, HOST, 0x86DD, ipv6("2001:2:0:1::2", "2001:2:0:8000::1", 17, udp(1, 2, bytes(1300)))),
    "icmp6_echo": eth(P0, HOST, 0x86DD, ipv6("2001:2:0:1::2", "2001:2:0:1::1", 58, icmp_echo(128, bytes(8)), 255)),
    "arp_request": arp_request("198.18.0.7", "198.18.0.1"),
    "ns": ns("2001:2:0:1::1", "2001:2:0:1::2"),
    "vlan_udp4": P0 + HOST + b"\x81\x00\x00\x05" + b"\x08\x00" + ipv4("198.18.0.2", "198.18.200.1", 17, udp(1, 2, bytes(8))),
}


def record(frame, ctl=4):
    # ctl bit 2: fix checksums; the MAC is already right.
    return bytes([ctl]) + struct.pack("!H", len(frame)) + frame


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def pcap(frames, big=False, nsec=False):
    e = ">" if big else "<"
    out = struct.pack(e + "IHHiIII", 0xa1b23c4d if nsec else 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    for i, f in enumerate(frames):
        out += struct.pack(e + "IIII", i, 0, len(f), len(f)) + f
    return out


def main():
    for name, f in FRAMES.items():
        write("pipeline", name, record(f))
    write("pipeline", "all", b"".join(record(f) for f in FRAMES.values()))
    # packet_parsers takes a raw frame (its stable test runs these too).
    for name, f in FRAMES.items():
        write("packet_parsers", name, f)
    # Unresolved next hop: several frames held, then an ARP reply from .3.
    held = FRAMES["udp4_connected"]
    write("pipeline", "held_x9", bytes([4 | 8, 7, len(held)]) + held)

    src = open(os.path.join(ROOT, "crates/dataplane/src/fuzzing.rs")).read()
    cfg = re.search(r'FUZZ_CONFIG: &str = r#"(.*?)"#;', src, re.S).group(1)
    write("config", "fuzz_config.toml", cfg.encode())
    write("config", "full.toml", (cfg + '''
[[queue]]
port = "p0"
queue = 0
core = 1

[routes_file]
path = "routes.txt"
''').replace("workers = 1", 'workers = 2\ncores = [0, 1]\nmode = "adaptive"\nbudget = 64\nneighbor_timeout = 30\nframe_size = 2048').encode())

    fr = list(FRAMES.values())
    write("pcap", "le_usec.pcap", pcap(fr[:3]))
    write("pcap", "be_nsec.pcap", pcap(fr[3:5], big=True, nsec=True))
    write("pcap", "empty.pcap", pcap([]))

    write("routes_file", "routes.txt",
          b"# routes\n\n198.18.0.0/15 198.19.0.1\n2001:2::/48 2001:2::1 # v6\n0.0.0.0/0 10.0.0.1\n::/0 fe80::1\n")
    # Valid for FUZZ_CONFIG as well, so the configuration's routes-file
    # check gets past the first line.
    write("routes_file", "routes_ok.txt",
          b"# for FUZZ_CONFIG\n203.0.113.0/24 198.19.0.2\n198.51.100.0/24 198.19.0.3 # x\n"
          b"2001:db8::/32 2001:2:0:2::2\n0.0.0.0/0 198.19.0.9\n203.0.113.0/24 198.19.0.2\n")

    # A long-form IPv4 test frame (signature, stream 1, seq 5) and a
    # short-form 64-byte one, as raw receive buffers.
    hdr = b"SRBENCH1" + struct.pack("!IIQQ", 1, 0, 5, 1000)
    payload = hdr + bytes(k % 256 for k in range(len(hdr), 64))
    write("bench_frame", "long_v4", eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.19.0.2", 17, udp(0xC020, 7, payload), ttl=10)))
    short = b"SR" + struct.pack("!HII", 1, 5, 1000) + bytes([12, 13, 14, 15, 16, 17])
    write("bench_frame", "short_v4", eth(P0, HOST, 0x0800, ipv4("198.18.0.2", "198.19.0.2", 17, udp(0xC020, 7, short), ttl=10)))


main()
