//! Stable-Rust stand-in for the cargo-fuzz target: runs the same
//! exhaustive parse walk (`tests/support/walk.rs`) over 200k seeded
//! random and mutated inputs, so CI without nightly still exercises
//! "no parser panics on arbitrary input".

#[path = "support/walk.rs"]
mod walk;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Valid-looking seeds so mutations land deep inside the parsers.
fn seeds() -> Vec<Vec<u8>> {
    let mut s = Vec::new();
    let eth = |et: [u8; 2], vlan: bool, l3: &[u8]| {
        let mut f = vec![0x33, 0x33, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2];
        if vlan {
            f.extend_from_slice(&[0x81, 0x00, 0x20, 0x0a]);
        }
        f.extend_from_slice(&et);
        f.extend_from_slice(l3);
        f
    };
    let mut v4 = vec![
        0x45, 0, 0, 28, 0, 1, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 2,
    ];
    v4.extend_from_slice(&[0x04, 0xd2, 0, 7, 0, 8, 0, 0]);
    let mut p = packet::ipv4::Packet::new_unchecked(&mut v4[..]);
    p.fill_checksum();
    s.push(eth([0x08, 0x00], false, &v4));
    s.push(eth([0x08, 0x00], true, &v4));
    let mut icmp = v4.clone();
    icmp[9] = 1;
    icmp[20..28].copy_from_slice(&[8, 0, 0, 0, 0, 1, 0, 1]);
    s.push(eth([0x08, 0x00], false, &icmp));
    let mut tcp = v4.clone();
    tcp[3] = 40;
    tcp[9] = 6;
    tcp.extend_from_slice(&[0u8; 12]);
    tcp[32] = 0x50;
    s.push(eth([0x08, 0x00], false, &tcp));
    let mut v6 = vec![0x60, 0, 0, 0, 0, 32, 58, 255];
    v6.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    v6.extend_from_slice(&[0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 2]);
    v6.extend_from_slice(&[135, 0, 0, 0, 0, 0, 0, 0]);
    v6.extend_from_slice(&[0x20, 0x01, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    v6.extend_from_slice(&[1, 1, 2, 0, 0, 0, 0, 1]);
    s.push(eth([0x86, 0xdd], false, &v6));
    s.push(eth(
        [0x08, 0x06],
        false,
        &[
            0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 198, 18, 0, 1, 0, 0, 0, 0, 0, 0, 198, 18, 0,
            2,
        ],
    ));
    s
}

fn mutate(rng: &mut SmallRng, input: &mut Vec<u8>) {
    for _ in 0..rng.gen_range(1..=4) {
        match rng.gen_range(0..5) {
            0 if !input.is_empty() => {
                let i = rng.gen_range(0..input.len());
                input[i] = rng.gen();
            }
            1 if !input.is_empty() => {
                let i = rng.gen_range(0..input.len());
                input[i] ^= 1 << rng.gen_range(0..8);
            }
            2 => input.truncate(rng.gen_range(0..=input.len())),
            3 => {
                let n = rng.gen_range(0..16);
                input.extend((0..n).map(|_| rng.gen::<u8>()));
            }
            _ if !input.is_empty() => {
                // Interesting values into length-ish positions.
                let i = rng.gen_range(0..input.len());
                input[i] = [0, 1, 0x7f, 0x80, 0xff, 0x45, 0x60, 0x40][rng.gen_range(0..8)];
            }
            _ => {}
        }
    }
}

#[test]
fn replay_200k_inputs() {
    let mut rng = SmallRng::seed_from_u64(0x5eed_cafe);
    let seeds = seeds();
    for s in &seeds {
        walk::walk(s);
    }
    for i in 0..200_000u32 {
        let input = if i % 4 == 0 {
            let n = rng.gen_range(0..128);
            (0..n).map(|_| rng.gen()).collect()
        } else {
            let mut v = seeds[rng.gen_range(0..seeds.len())].clone();
            mutate(&mut rng, &mut v);
            v
        };
        walk::walk(&input);
    }
}

#[test]
fn all_prefixes_of_seeds() {
    for s in seeds() {
        for n in 0..=s.len() {
            walk::walk(&s[..n]);
        }
    }
}
