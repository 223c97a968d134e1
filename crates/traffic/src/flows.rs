//! What the engine sends: the plan's flows (one stream id per flow), which
//! sending port sends which streams, and the frame templates built from
//! them.
//!
//! Why apart from the threads and the trial: this is the only place that
//! turns the plan's addressing into frames; both backends (the shared
//! generator and `xdp`) and the learning phase take their templates from
//! here, so every frame of a flow carries the same headers.

use std::net::IpAddr;

use anyhow::{anyhow, bail, Result};

use super::gen::Template;
use super::ports::MAX_TESTER_FRAME;
use super::NetTrial;
use bench::plan::TrafficPlan;
use packet::test_frame::{build, Flow, FlowSet, UDP_DST_PORT, UDP_SRC_PORT};

/// Per sending port (a plan port index): its streams in sending order.
pub(super) type SendPorts = Vec<(usize, Vec<u32>)>;

/// The plan's flows (index = stream id) and, per sending plan port, its
/// streams in sending order. Fails on a plan without ports or pairs, a
/// pair naming a missing port, or more streams than 16-bit ids allow.
pub(super) fn plan_flows(plan: &TrafficPlan) -> Result<(Vec<Flow>, SendPorts)> {
    if plan.ports.is_empty() || plan.pairs.is_empty() {
        bail!("traffic plan without ports or pairs");
    }
    for &(s, r) in &plan.pairs {
        if s >= plan.ports.len() || r >= plan.ports.len() {
            bail!("traffic plan pair ({s}, {r}) names a port that does not exist");
        }
    }
    let fpp = plan.flows_per_pair.max(1) as usize;
    let n_streams = plan.pairs.len() * fpp;
    if n_streams > usize::from(u16::MAX) {
        bail!("{n_streams} flows: at most 65535 (16-bit stream ids in 64-byte frames)");
    }
    // Flows: per pair, `fpp` flows from the sending port's address to
    // hosts .2.. of the receiving port's destination network, UDP
    // source ports varied (RSS / RPS spread them over queues).
    let mut flows = Vec::with_capacity(n_streams);
    let mut by_sender: Vec<Vec<u32>> = vec![Vec::new(); plan.ports.len()];
    for (pi, &(s, r)) in plan.pairs.iter().enumerate() {
        let (sp, rp) = (&plan.ports[s], &plan.ports[r]);
        let (src, dst): (IpAddr, IpAddr) = if plan.ipv6 {
            let mut d = rp.dest_v6.segments();
            d[7] = 2;
            (sp.v6.into(), std::net::Ipv6Addr::from(d).into())
        } else {
            let mut d = rp.dest_v4.octets();
            d[3] = 2;
            (sp.v4.into(), std::net::Ipv4Addr::from(d).into())
        };
        let base = Flow {
            dst_mac: if plan.l2 { rp.mac } else { sp.peer_mac },
            src_mac: sp.mac,
            src_ip: src,
            dst_ip: dst,
            src_port: UDP_SRC_PORT,
            dst_port: UDP_DST_PORT,
            stream: (pi * fpp) as u32,
        };
        let hosts = fpp.min(if plan.ipv6 { 4000 } else { 253 }) as u16;
        for f in FlowSet::new(base, fpp, hosts).flows {
            by_sender[s].push(f.stream);
            flows.push(f);
        }
    }
    // Interleave a port's pairs so that consecutive frames go to
    // different pairs (mesh, many-to-one) rather than pair by pair.
    let send_ports: SendPorts = by_sender
        .into_iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(p, mut v)| {
            v.sort_by_key(|&s| (s as usize % fpp, s));
            (p, v)
        })
        .collect();
    Ok((flows, send_ports))
}

impl NetTrial {
    /// Templates for every stream and each of `sizes`.
    pub(super) fn templates(&self, sizes: &[usize], flags: u32) -> Result<Vec<Template>> {
        let mut out = Vec::with_capacity(self.flows.len() * sizes.len());
        let mut buf = vec![0u8; MAX_TESTER_FRAME];
        for f in &self.flows {
            for &s in sizes {
                if s > MAX_TESTER_FRAME {
                    bail!("frame size {s} above the tester's maximum {MAX_TESTER_FRAME}");
                }
                let layout = build(f, s, flags, &mut buf).map_err(|e| anyhow!("{e}"))?;
                out.push(Template {
                    bytes: buf[..layout.buf_len].to_vec(),
                    layout,
                });
            }
        }
        Ok(out)
    }
}
