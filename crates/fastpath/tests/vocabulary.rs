//! `sr_layout.h`, the C vocabulary every BPF program is compiled with
//! (`crates/bpf-build/include/`, on clang's include path), is generated
//! here from the Rust constants it names, and must be current:
//!
//! * packet offsets, sizes and values (`packet`, its names word for word);
//! * the FIB's entry and next-hop descriptor words (`fib`);
//! * the neighbour entry (`dataplane::neighbor::layout`);
//! * the fast path's map values (`fastpath::layout`: sizes, field
//!   offsets, flags, the counter indices);
//! * the floor DUT's map value (`dut::floor::Hop`) and the bench
//!   generator's shared memory (`tester::gen::layout`): sizes, field
//!   offsets, table sizes.
//!
//! The C headers that define the mirrored structs assert them against it
//! (`_Static_assert` on `sizeof` and `offsetof`), so a Rust change the C
//! lacks fails this test, and once the header is regenerated, the BPF
//! build.
//!
//! Why a checked-in file and a test rather than a build script: a build
//! script sees only its build dependencies, and these constants live in
//! `dataplane` (with `netio`, `config`, serde...) and in `fastpath`
//! itself, which would have to be compiled a second time for the host
//! before any BPF program, or could not be at all. Checked in, the header
//! is also there to read beside the programs, without a build.
//!
//! A change of a shared layout goes Rust first: change the Rust side, run
//! `SR_BLESS=1 cargo test -p softrouter-fastpath --test vocabulary`
//! (the programs still build: the C and the old header agree), which
//! rewrites the header; the next build then fails in the C until its side
//! follows. (A C change made first fails its own build, this test's
//! included, until the header says the same.)

use std::fmt::Write as _;
use std::mem::{offset_of, size_of};
use std::path::PathBuf;

/// How a Rust integer type is written as a C literal: the suffix that
/// gives it the same C type the programs used before (int for lengths,
/// offsets and narrow values; unsigned for `u32` bit masks; unsigned long
/// long for `u64` words).
trait CType: Copy + Into<u64> {
    const SUFFIX: &'static str;
}
impl CType for u8 {
    const SUFFIX: &'static str = "";
}
impl CType for u16 {
    const SUFFIX: &'static str = "";
}
impl CType for u32 {
    const SUFFIX: &'static str = "u";
}
impl CType for u64 {
    const SUFFIX: &'static str = "ull";
}

/// The header being written.
struct Header(String);

impl Header {
    fn section(&mut self, comment: &str) {
        writeln!(self.0, "\n/* {comment} */").unwrap();
    }

    /// A length, offset or small value: decimal.
    fn dec<T: CType>(&mut self, name: &str, v: T) {
        writeln!(self.0, "#define {name} {}{}", v.into(), T::SUFFIX).unwrap();
    }

    /// A length or offset (`usize` on the Rust side): decimal int.
    fn len(&mut self, name: &str, v: usize) {
        assert!(v <= i32::MAX as usize, "{name}");
        writeln!(self.0, "#define {name} {v}").unwrap();
    }

    /// Bits, a type code or a mask: hexadecimal, whole bytes.
    fn hex<T: CType>(&mut self, name: &str, v: T) {
        let v: u64 = v.into();
        let digits = (v.max(1).ilog2() as usize / 8 + 1) * 2;
        writeln!(self.0, "#define {name} 0x{v:0digits$x}{}", T::SUFFIX).unwrap();
    }

    /// A struct's size and its fields' offsets: `<prefix>_SIZE` and
    /// `<prefix>_OFF_<FIELD>`.
    fn layout(&mut self, prefix: &str, size: usize, fields: &[(&str, usize)]) {
        self.len(&format!("{prefix}_SIZE"), size);
        for (field, off) in fields {
            self.len(&format!("{prefix}_OFF_{}", field.to_uppercase()), *off);
        }
    }
}

/// `#define` each Rust constant under its own name (after `prefix`), in
/// the form `how` (a [`Header`] method): the C says what the Rust says.
macro_rules! define {
    ($h:ident, $how:ident, $prefix:literal, $($name:ident),+ $(,)?) => {
        $($h.$how(concat!($prefix, stringify!($name)), $name);)+
    };
    ($h:ident, $how:ident, $($name:ident),+ $(,)?) => {
        define!($h, $how, "", $($name),+)
    };
}

/// `PuntNoRoute` -> `PUNT_NO_ROUTE`.
fn screaming(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn headers(h: &mut Header) {
    use packet::ethernet::*;
    use packet::icmpv4::*;
    use packet::icmpv6::*;
    use packet::ip::*;
    use packet::ipv4::*;
    use packet::ipv6::*;
    use packet::udp::*;

    h.section("packet::ethernet");
    define!(h, len, ETH_LEN, ETH_ALEN, ETH_ZLEN, ETH_DST, ETH_SRC, ETH_TYPE);
    define!(h, hex, ETH_IPV4, ETH_ARP, ETH_IPV6);
    h.section("packet::ipv4 (offsets after struct iphdr)");
    define!(h, len, IPV4_LEN, IPV4_VER_IHL);
    define!(h, hex, IPV4_VER_IHL_PLAIN);
    define!(h, len, IPV4_TOT_LEN, IPV4_FRAG_OFF, IPV4_TTL, IPV4_PROTOCOL);
    define!(h, len, IPV4_CHECK, IPV4_SADDR, IPV4_DADDR);
    define!(h, hex, IP_DF, IP_MF, IP_OFFSET);
    h.section("packet::ipv6 (offsets after struct ipv6hdr)");
    define!(h, len, IPV6_LEN, IPV6_PAYLOAD_LEN, IPV6_NEXTHDR);
    define!(h, len, IPV6_HOP_LIMIT, IPV6_SADDR, IPV6_DADDR);
    h.section("packet::ip: protocol numbers, transport ports");
    define!(h, dec, IPV6_NH_HOP_BY_HOP, PROTO_ICMP);
    define!(h, dec, PROTO_TCP, PROTO_UDP, PROTO_ICMPV6);
    define!(h, len, L4_SPORT, L4_DPORT);
    h.section("packet::udp");
    define!(h, len, UDP_LEN, UDP_SOURCE, UDP_DEST, UDP_LENGTH, UDP_CHECK);
    h.section("packet::icmpv4, packet::icmpv6");
    define!(h, len, ICMP_LEN, ICMP_TYPE);
    define!(h, dec, ICMP_ECHO);
    define!(h, len, ICMPV6_LEN, ICMPV6_TYPE);
    define!(h, dec, ICMPV6_ECHO_REQUEST);
}

fn test_frame(h: &mut Header) {
    use packet::test_frame::*;
    h.section("packet::test_frame (RFC 2544 Appendix C test frames; offsets from the UDP payload)");
    define!(h, dec, UDP_DST_PORT, FLAG_LEARNING);
    define!(h, len, LONG_HEADER_LEN, SHORT_HEADER_LEN);
    define!(h, len, LONG_STREAM, LONG_FLAGS, LONG_SEQ, LONG_TS);
    define!(h, len, SHORT_STREAM, SHORT_SEQ, SHORT_TS);
    h.section("SIGNATURE and SHORT_SIGNATURE as loaded little-endian from the wire");
    h.hex("SIGNATURE_LE", u64::from_le_bytes(SIGNATURE));
    h.hex("SHORT_SIGNATURE_LE", u16::from_le_bytes(SHORT_SIGNATURE));
}

fn fib_words(h: &mut Header) {
    use fib::entry::{EXT, GROUP_SIZE, PAYLOAD, VALID};
    use fib::nexthop::*;
    use fib::Target;

    h.section("fib::entry: an LPM entry is valid | ext | 30-bit payload");
    define!(h, hex, "ENTRY_", VALID, EXT, PAYLOAD);
    h.len("TBL8_GROUP_SIZE", GROUP_SIZE);
    h.section("fib::Target: bit 29 marks an ECMP group");
    h.hex("TARGET_GROUP", Target::GROUP_BIT);
    h.hex("TARGET_INDEX", Target::MAX_INDEX);
    h.section("fib::lpm6: tbl24, then tbl8 levels of one byte each down to bit 128");
    let levels = (128 - 24) / GROUP_SIZE.trailing_zeros() as usize;
    h.len("LPM6_LEVELS", levels);

    h.section(
        "fib::nexthop descriptor words: valid | kind << 32 | port (a next hop),\n   \
         valid | count << 32 | first member (a group)",
    );
    define!(h, hex, NH_VALID);
    define!(h, dec, "NH_", KIND_SHIFT);
    define!(h, hex, "NH_", KIND_MASK, COUNT_MASK);
    // fib::NextHop::port is a u16, stored in the low bits.
    h.hex("NH_PORT_MASK", u16::MAX);
    define!(h, dec, "NH_", KIND_GW4, KIND_GW6, KIND_CONNECTED);
    define!(h, dec, "NH_", KIND_LOCAL, KIND_BLACKHOLE);
}

fn neighbour(h: &mut Header) {
    use dataplane::neighbor::layout::*;
    h.section(
        "dataplane::neighbor::NeighEntry (#[repr(C, align(64))]):\n   \
         word = MAC | state << NEIGH_STATE_SHIFT | generation",
    );
    let fields = [
        ("word", WORD),
        ("confirmed_ms", CONFIRMED_MS),
        ("used_ms", USED_MS),
    ];
    h.layout("NEIGH", SIZE, &fields);
    define!(h, hex, "NEIGH_", MAC_MASK);
    define!(h, dec, "NEIGH_", STATE_SHIFT);
    define!(h, hex, "NEIGH_", STATE_MASK);
    define!(h, dec, "NEIGH_", STATE_REACHABLE, STATE_STATIC);
    h.section("dataplane::neighbor: `used_ms` is written at most this often");
    define!(h, dec, "NEIGH_", TOUCH_MS);
}

/// A `#[repr(C)]` type's size and its fields' offsets (see
/// [`Header::layout`]).
macro_rules! layout {
    ($h:ident, $prefix:literal, $ty:ty: $($field:ident),*) => {
        $h.layout(
            $prefix,
            size_of::<$ty>(),
            &[$((stringify!($field), offset_of!($ty, $field))),*],
        )
    };
}

fn fast_path(h: &mut Header) {
    use fastpath::layout::*;
    h.section("fastpath::layout: map sizes and values");
    define!(h, len, "FP_", MAX_PORTS, MAX_QUEUES, TABLE_VALUE, IN_SLOTS);
    define!(h, dec, "FP_", PORT_XDP_TX, PORT_KERNEL_LOCAL);
    layout!(h, "FP_PORT", PortSlot: mac, mtu, flags);
    layout!(h, "FP_CLOCK", Clock: epoch_ns, offset_ms, reachable_ms);
    layout!(h, "FP_IDENTITY", Identity: prog_id, tx_map_id, netns_cookie);
    layout!(h, "FP_IN_SLOT", InSlot: ifindex, port);
    layout!(h, "FP_COUNTERS", Counters:);

    h.section("fastpath::layout::Counter: the counters' indices (see its documentation)");
    h.0.push_str("enum fp_counter {\n");
    for c in Counter::ALL {
        let name = screaming(&format!("{c:?}"));
        writeln!(h.0, "\tFP_{name} = {},", c as usize).unwrap();
    }
    writeln!(h.0, "\tFP_NCOUNTERS = {NCOUNTERS},\n}};").unwrap();
}

fn floor_dut(h: &mut Header) {
    use dut::floor::{Hop, MAX_PORTS};
    h.section("dut::floor: the floor DUT's maps (crates/dut/bpf/floor.h)");
    h.len("FLOOR_MAX_PORTS", MAX_PORTS);
    layout!(h, "FLOOR_HOP", Hop: dst, src, valid);
}

fn generator(h: &mut Header) {
    use tester::gen::layout::*;
    use tester::gen::{MAX_PHASES, MAX_PORTS, MAX_SCHED, TMPL_CAP};
    h.section("tester::gen: the generator's shared memory (crates/tester/bpf/gen.h)");
    define!(h, len, "GEN_", MAX_PORTS, MAX_PHASES, MAX_SCHED, TMPL_CAP);
    layout!(h, "GEN_PHASE", CPhase: frames, interval_ns, t0_ns, interval_frac_ps, paced);
    layout!(h, "GEN_PORT", CPort: ifindex, nstreams, stream_off, cur_stream, cur_sched, _pad, sent);
    layout!(h, "GEN_CTL", CCtl:
        nports, nsizes, sched_len, nphases, sample_mask, catchup_frames,
        phase, port, schedule,
        cur_phase, cur_port, phase_sent, due_ns, due_rem_ps, clock_ns,
        sent, early, idle, errors, max_lag_ns, first_ns, last_ns, shift_ns,
        clock_reads, stall_ns, stalls, max_stall_ns,
        long_stall_ns, long_stall_sum_ns, long_stalls, error, _pad2);
    layout!(h, "GEN_TMPL", CTmpl: len, csum_off, seq_off, long_form, ipv6, data);
}

fn counters(h: &mut Header) {
    use tester::count::*;
    h.section(
        "tester::count: the counter's words per stream and in all (crates/tester/bpf/count.h)",
    );
    define!(
        h,
        len,
        "COUNT_",
        ST_RECEIVED,
        ST_DUPLICATES,
        ST_REORDERED,
        ST_BEYOND,
        ST_HIGH1,
        ST_LAST_LAT1,
        ST_IPDV_SUM,
        ST_IPDV_COUNT,
        ST_IPDV_MAX,
        ST_WORDS,
        G_NON_TEST,
        G_LEARNING,
        G_UNKNOWN,
        G_CLOCK_ERR,
        G_LAT_COUNT,
        G_LAT_SUM,
        G_LAT_MIN,
        G_LAT_MAX,
        G_SAMPLE_MASK,
        G_BUCKETS,
        NBUCKETS,
        G_WORDS
    );
    define!(h, dec, "COUNT_", SUB_BITS, LAT_CAP);
    use tester::gap::*;
    h.section("tester::gap: the gap meter's words and device flags (crates/tester/bpf/gap.h)");
    define!(
        h, len, "GAP_", GC_EPOCH, GC_UNTIL, GC_PEND, MAX_SLOTS, GC_ARMED, GC_WORDS, GN_EPOCH,
        GN_LAST, GN_MAX_GAP, GN_POLLS, GN_MAX_AT, GN_WORDS
    );
    define!(h, hex, "GAP_", DEV_SENDER, DEV_TRACKED, DEV_RECEIVER);
}

/// The header, from the constants.
fn generate() -> String {
    let mut h = Header(String::new());
    h.0.push_str(
        "/* SPDX-License-Identifier: Apache-2.0 OR MIT */\n\
         /*\n \
         * GENERATED by crates/fastpath/tests/vocabulary.rs from the Rust\n \
         * constants named in each comment: do not edit. After a change there:\n \
         * SR_BLESS=1 cargo test -p softrouter-fastpath --test vocabulary\n \
         *\n \
         * The C vocabulary of every BPF program: what the programs share with\n \
         * the Rust side, under the Rust names. Structs that mirror Rust types\n \
         * assert their size and offsets against the *_SIZE and *_OFF_* here.\n \
         */\n\
         #ifndef SR_LAYOUT_H\n\
         #define SR_LAYOUT_H\n",
    );
    headers(&mut h);
    test_frame(&mut h);
    fib_words(&mut h);
    neighbour(&mut h);
    fast_path(&mut h);
    floor_dut(&mut h);
    generator(&mut h);
    counters(&mut h);
    h.0.push_str("\n#endif\n");
    h.0
}

fn checked_in() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bpf-build/include/sr_layout.h")
}

#[test]
fn sr_layout_h_is_current() {
    let want = generate();
    let path = checked_in();
    if std::env::var_os("SR_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if have != want {
        let (n, (h, w)) = have
            .lines()
            .chain(std::iter::repeat(""))
            .zip(want.lines())
            .enumerate()
            .find(|(_, (h, w))| h != w)
            .unwrap_or((have.lines().count(), ("", "(end)")));
        panic!(
            "{} is not what the Rust constants say (line {}: has `{h}`, should be `{w}`);\n\
             regenerate it: SR_BLESS=1 cargo test -p softrouter-fastpath --test vocabulary",
            path.display(),
            n + 1
        );
    }
}

#[test]
fn counter_names_are_c_names() {
    assert_eq!(screaming("PuntNoRoute"), "PUNT_NO_ROUTE");
    assert_eq!(screaming("PuntL2"), "PUNT_L2");
    assert_eq!(screaming("Tx"), "TX");
}
