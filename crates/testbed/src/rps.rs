//! Receive processing of a veth end on the CPUs that own it (RPS).
//!
//! Why: a veth has no interrupt. A frame a veth sends is received in the
//! *sender's* context: without NAPI it goes to the sending CPU's backlog;
//! with NAPI (native XDP attached, or GRO on) the peer's poll runs on the
//! sending CPU, or in a NAPI thread behind a 256-entry ring. Either way the
//! receiving side's work (IP input, an XDP program, an AF_XDP copy) is
//! charged to whoever transmitted: the DUT's receive work runs on the
//! tester's CPU and the tester's on the DUT's. On two boxes cabled together
//! each side pays for its own reception.
//!
//! RPS restores that: with `rps_cpus` set on an end, every frame it
//! receives is queued to the backlog of one of those CPUs (`netdev_max_backlog`
//! deep, 1000 by default) and processed there, generic-mode XDP included
//! (it runs in `__netif_receive_skb_core`, after the steering). The sender
//! pays only for the enqueue and, when the target CPU sleeps, an IPI, as a
//! NIC's DMA would cost it nothing. Threaded NAPI pinned to the owner was
//! tried and measured worse here: its 256-entry ring overflows whenever
//! the hypervisor delays the NAPI thread for a few ms, and every batch
//! costs a thread wake-up (kernel DUT: 0.04 vs 0.31 Mpps zero-loss).

use anyhow::{bail, Context, Result};

use crate::Netns;

/// The hexadecimal CPU mask of `cpus` (as `rps_cpus` takes it).
pub fn cpu_mask_hex(cpus: &[usize]) -> String {
    let mut words = vec![0u32; cpus.iter().max().map_or(1, |&c| c / 32 + 1)];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    words
        .iter()
        .rev()
        .map(|w| format!("{w:08x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Steer `ifname`'s receive processing (every RX queue) to `cpus` with
/// RPS: frames its peer transmits are processed on those CPUs.
pub fn steer_rps(ns: &Netns, ifname: &str, cpus: &[usize]) -> Result<()> {
    if cpus.is_empty() {
        bail!("steering the receive processing of {ifname}: no CPUs given");
    }
    let mask = cpu_mask_hex(cpus);
    let dir = format!("/sys/class/net/{ifname}/queues");
    let script = format!("for q in {dir}/rx-*; do echo {mask} > $q/rps_cpus || exit 1; done");
    ns.run(&["sh", "-c", &script])
        .with_context(|| format!("writing RPS mask {mask} under {dir} in {}", ns.name()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{require_root, VethPair};

    #[test]
    fn masks_are_hex_words_high_first() {
        assert_eq!(cpu_mask_hex(&[0]), "00000001");
        assert_eq!(cpu_mask_hex(&[1, 3]), "0000000a");
        assert_eq!(cpu_mask_hex(&[33]), "00000002,00000000");
    }

    #[test]
    fn every_rx_queue_gets_the_mask() {
        if !require_root("every_rx_queue_gets_the_mask") {
            return;
        }
        let a = Netns::new("ra").unwrap();
        let b = Netns::new("rb").unwrap();
        let v = VethPair::new(&a, &b, 2).unwrap();
        steer_rps(&b, &v.b, &[0]).unwrap();
        for q in 0..2 {
            let got = b
                .run(&[
                    "cat",
                    &format!("/sys/class/net/{}/queues/rx-{q}/rps_cpus", v.b),
                ])
                .unwrap();
            assert_eq!(got.trim().trim_start_matches('0'), "1", "rx-{q}: {got}");
        }
        // The other end is untouched.
        let other = a
            .run(&[
                "cat",
                &format!("/sys/class/net/{}/queues/rx-0/rps_cpus", v.a),
            ])
            .unwrap();
        assert!(
            other.trim().chars().all(|c| c == '0' || c == ','),
            "{other}"
        );
        assert!(steer_rps(&b, "nonexistent0", &[0]).is_err());
    }
}
