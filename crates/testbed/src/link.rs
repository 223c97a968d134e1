//! An interface's MAC address: read from the kernel (in a namespace or the
//! current one), parsed from and formatted as `02:00:00:00:00:0a`.
//!
//! Why here: veth ends get random MACs when [`VethPair`](crate::VethPair)
//! creates them. Whoever builds frames for them (the benchmark's testbed
//! plan and traffic engine, the integration tests) must use the MACs the
//! kernel actually assigned, so the crate that creates the interfaces also
//! reads their addresses back. The benchmark's traffic engine gets them
//! from here rather than from the benchmark's DUT launchers, which would
//! make the engine depend on the launchers that depend on it.

use anyhow::{Context, Result};
use serde_json::Value;

use crate::netns::ip;

/// `02:00:00:00:00:0a` -> bytes.
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut m = [0u8; 6];
    let mut parts = s.trim().split(':');
    for b in &mut m {
        let p = parts.next()?;
        if p.is_empty() || p.len() > 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(m)
}

/// Bytes -> `02:00:00:00:00:0a`.
pub fn format_mac(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The MAC of `iface` in namespace `ns` (`None`: the current one), from
/// `ip -j link show`.
pub fn read_mac(ns: Option<&str>, iface: &str) -> Result<[u8; 6]> {
    let mut args = Vec::new();
    if let Some(ns) = ns {
        args.extend(["-n", ns]);
    }
    args.extend(["-j", "link", "show", "dev", iface]);
    let out = ip(&args)?;
    let v: Value = serde_json::from_str(&out).context("parsing `ip -j link` output")?;
    let addr = v
        .get(0)
        .and_then(|l| l.get("address"))
        .and_then(Value::as_str)
        .with_context(|| format!("no MAC address for {iface} in `ip -j link`: {out}"))?;
    parse_mac(addr).with_context(|| format!("{iface}: bad MAC {addr:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_round_trip() {
        let m = parse_mac("02:0a:ff:00:01:7e").unwrap();
        assert_eq!(m, [2, 10, 255, 0, 1, 0x7e]);
        assert_eq!(format_mac(&m), "02:0a:ff:00:01:7e");
        assert!(parse_mac("02:0a:ff:00:01").is_none());
        assert!(parse_mac("02:0a:ff:00:01:7e:00").is_none());
        assert!(parse_mac("zz:0a:ff:00:01:7e").is_none());
    }
}
