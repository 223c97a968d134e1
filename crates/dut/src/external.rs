//! An external device as the DUT, cabled to interfaces the user names.
//!
//! No namespaces: the tester ports are the named interfaces in the current
//! namespace (`netns = None` in the plan). Addresses follow the standard
//! plan (port i: tester 198.18.i.2, DUT 198.18.i.1, destination
//! 198.19.i.0/24; IPv6 likewise), so the device must be configured for it;
//! nothing on the host is changed. The DUT's MAC per port comes from the
//! settings (`peer_macs`) or from the kernel's neighbor table entry for
//! 198.18.i.1 on that interface.
//!
//! R16 / RFC 6815: only the user can know the wire is isolated; the
//! launcher prints a warning saying so. There are no internal measurements
//! of an external device: its probe reports the tester's interface
//! counters and no CPU figures (the host's CPUs are not the DUT's).

use anyhow::{bail, Context, Result};
use schema::dut_description::{self as description, DutDescription, FinalStats};
use schema::dut_sample::DutStats;
use serde_json::Value;
use testbed::link::{format_mac, parse_mac, read_mac};

use super::bed::{if_counters, ip_in, Bed, BedPort, IfCounters};
use super::{counters_since, named_counters, Dut, DutOptions};
use bench::plan::{DutProbe, DutSample, TesterBackend, TrafficPlan};
use bench::settings::{DutSettings, Pattern};

/// A device on real wires.
pub struct ExternalDut {
    bed: Bed,
    backend: TesterBackend,
    description: Option<String>,
    mac_source: &'static str,
}

/// The MAC the kernel's neighbor table holds for `addr` on `iface`.
fn neighbor_mac(iface: &str, addr: &str) -> Option<[u8; 6]> {
    let out = ip_in(None, &["-j", "neigh", "show", "to", addr, "dev", iface]).ok()?;
    let v: Value = serde_json::from_str(&out).ok()?;
    v.as_array()?
        .iter()
        .filter_map(|n| n.get("lladdr").and_then(Value::as_str))
        .find_map(parse_mac)
}

impl ExternalDut {
    pub fn start(settings: &DutSettings, pattern: Pattern, opts: &DutOptions) -> Result<Self> {
        let DutSettings::External {
            interfaces,
            description,
            peer_macs,
        } = settings
        else {
            bail!("not external settings: {settings:?}");
        };
        let n = pattern.ports() as usize;
        if interfaces.len() < n {
            bail!(
                "pattern {} needs {n} interfaces, {} given",
                String::from(pattern),
                interfaces.len()
            );
        }
        eprintln!(
            "WARNING: external DUT on {}: test traffic (198.18.0.0/15, 2001:2::/48) will be sent on these interfaces; \
             you assert they are cabled only to the device under test, on an isolated network (RFC 6815)",
            interfaces[..n].join(", ")
        );
        let mut ports = Vec::with_capacity(n);
        let mut mac_source = "settings";
        for (i, iface) in interfaces.iter().take(n).enumerate() {
            let mut p = BedPort::addresses(i)?;
            p.tester_if = iface.clone();
            p.tester_mac = read_mac(None, iface)
                .with_context(|| format!("external DUT: interface {iface}"))?;
            p.dut_mac = match peer_macs.as_ref().and_then(|m| m.get(i)) {
                Some(m) => m.0,
                None => {
                    mac_source = "neighbor table";
                    let addr = p.dut_v4.to_string();
                    neighbor_mac(iface, &addr).with_context(|| {
                        format!(
                            "external DUT: no neighbor entry for {addr} on {iface}; set `peer_macs` in [dut] \
                             (or give {iface} an address in 198.18.{i}.0/24 and ping {addr} once)"
                        )
                    })?
                }
            };
            ports.push(p);
        }
        Ok(ExternalDut {
            bed: Bed {
                star: None,
                ports,
                pattern,
                queues: opts.queues.max(1),
                rx_placement: None,
                napi_threads: Vec::new(),
            },
            backend: opts.backend,
            description: description.clone(),
            mac_source,
        })
    }
}

impl Dut for ExternalDut {
    fn kind(&self) -> &'static str {
        "external"
    }

    fn plan(&self, ipv6: bool, flows_per_pair: u32) -> TrafficPlan {
        self.bed.plan(ipv6, flows_per_pair, self.backend)
    }

    fn probe(&self) -> Box<dyn DutProbe> {
        Box::new(ExternalProbe {
            ifaces: self.bed.ports.iter().map(|p| p.tester_if.clone()).collect(),
            start: None,
        })
    }

    fn describe(&self) -> DutDescription {
        DutDescription::External(description::External {
            version: self
                .description
                .clone()
                .unwrap_or_else(|| "unknown (no description)".into()),
            interfaces: self.bed.ports.iter().map(|p| p.tester_if.clone()).collect(),
            peer_macs: self
                .bed
                .ports
                .iter()
                .map(|p| format_mac(&p.dut_mac))
                .collect(),
            peer_mac_source: self.mac_source.into(),
            isolation: "asserted by the user (RFC 6815)".into(),
            pattern: String::from(self.bed.pattern),
            ports: self.bed.describe_ports(),
            final_stats: None,
        })
    }

    fn bed(&self) -> &Bed {
        &self.bed
    }

    fn stop(self: Box<Self>) -> Result<FinalStats> {
        Ok(FinalStats::External {})
    }
}

struct ExternalProbe {
    ifaces: Vec<String>,
    start: Option<Vec<IfCounters>>,
}

impl DutProbe for ExternalProbe {
    fn begin(&mut self) -> Result<()> {
        self.start = Some(if_counters(None, &self.ifaces)?);
        Ok(())
    }

    fn end(&mut self) -> Result<DutSample> {
        let c0 = self
            .start
            .take()
            .context("external probe: end() without begin()")?;
        let c1 = if_counters(None, &self.ifaces)?;
        let ifs = named_counters(&self.ifaces, &counters_since(&c1, &c0));
        Ok(DutSample {
            sys: None,
            dut_stats: Some(DutStats {
                kind: "external".into(),
                note: Some(
                    "no internal measurements of an external device; counters are the tester's interfaces"
                        .into(),
                ),
                tester_interfaces: Some(ifs),
                ..DutStats::default()
            }),
        })
    }
}
