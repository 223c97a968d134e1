//! Arbitrary and mutated frames never panic and keep the accounting
//! identities (through `dataplane::fuzzing::fuzz_one`).

use proptest::prelude::*;

fn seeds() -> Vec<Vec<u8>> {
    let mac = [2, 0, 0, 0, 0, 0x10];
    let h = [2, 0, 0, 0, 0, 2];
    let mut out = Vec::new();
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(h, mac)
        .ipv4([198, 18, 0, 2], [198, 18, 200, 1], 64)
        .udp(1, 2)
        .write(&mut v, &[0; 1400])
        .unwrap();
    out.push(v);
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(h, mac)
        .ipv4([198, 18, 0, 2], [198, 18, 0, 1], 64)
        .icmpv4_echo_request(1, 1)
        .write(&mut v, b"ping")
        .unwrap();
    out.push(v);
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(h, mac)
        .ipv6(
            [0x20, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2],
            [0x20, 1, 0, 2, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            64,
        )
        .tcp(1, 2, 3, 4)
        .write(&mut v, &[0; 20])
        .unwrap();
    out.push(v);
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(h, mac)
        .ipv6(
            [0x20, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2],
            [0x20, 1, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1],
            255,
        )
        .icmpv6_echo_request(1, 1)
        .write(&mut v, &[0; 8])
        .unwrap();
    out.push(v);
    let mut v = vec![0xff; 6];
    v.extend_from_slice(&h);
    v.extend_from_slice(&[8, 6, 0, 1, 8, 0, 6, 4, 0, 1]);
    v.extend_from_slice(&h);
    v.extend_from_slice(&[198, 18, 0, 7, 0, 0, 0, 0, 0, 0, 198, 18, 0, 1]);
    out.push(v);
    // To a connected host (creates an entry, holds, gives up).
    let mut v = Vec::new();
    etherparse::PacketBuilder::ethernet2(h, mac)
        .ipv4([198, 18, 0, 2], [198, 19, 0, 77], 64)
        .udp(1, 2)
        .write(&mut v, &[0; 10])
        .unwrap();
    out.push(v);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_frames(frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..40)) {
        let refs: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
        dataplane::fuzzing::fuzz_one(&refs).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn mutated_valid_frames(muts in proptest::collection::vec((0usize..6, 0usize..1500, any::<u8>(), 0usize..1500), 1..60)) {
        let seeds = seeds();
        let frames: Vec<Vec<u8>> = muts
            .iter()
            .map(|&(s, at, val, cut)| {
                let mut f = seeds[s].clone();
                let n = f.len();
                f[at % n] = val;
                if cut % 3 == 0 {
                    f.truncate(cut % n);
                }
                f
            })
            .collect();
        let refs: Vec<&[u8]> = frames.iter().map(|f| &f[..]).collect();
        dataplane::fuzzing::fuzz_one(&refs).map_err(TestCaseError::fail)?;
    }
}
