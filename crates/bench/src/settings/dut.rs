//! The `[dut]` table: which device is under test and its own options, all
//! typed and checked here (no launcher code runs to validate a setting).

use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::values::{named_enum, Pattern};

named_enum! {
    /// The kinds of device under test (`--dut`, `[dut] kind`).
    pub enum DutKind {
        /// softrouter, started by the benchmark in the DUT namespace.
        Softrouter = "softrouter",
        /// The Linux kernel forwarding in the DUT namespace.
        Linux = "linux",
        /// A Linux bridge in the DUT namespace (paper 001's L2 baseline).
        Bridge = "bridge",
        /// Open vSwitch (user-space datapath) in the DUT namespace.
        Ovs = "ovs",
        /// The testbed's floor: an XDP program that only redirects each
        /// frame to its egress port with the MACs rewritten.
        Floor = "floor",
        /// Any command, started in the DUT namespace.
        Command = "command",
        /// An external device on named interfaces.
        External = "external",
    }
}

named_enum! {
    /// How softrouter's workers wait for packets (`--mode`).
    pub enum SoftrouterMode {
        /// Spin on the queues.
        Poll = "poll",
        /// Sleep whenever a round found nothing (the bench's default).
        Interrupt = "interrupt",
        /// Poll while traffic flows, sleep after idle rounds.
        Adaptive = "adaptive",
    }
}

named_enum! {
    /// softrouter's XDP tier (`--fast-path`, `[router] fast_path`).
    pub enum FastPathMode {
        /// An XDP program forwards the common case in the driver (the
        /// router's default on afxdp ports).
        Xdp = "xdp",
        /// The workers forward everything.
        Off = "off",
    }
}

named_enum! {
    /// softrouter's packet I/O driver for the generated configuration
    /// (`--driver`).
    #[derive(Default)]
    pub enum PortDriver {
        /// AF_XDP sockets (default).
        #[default]
        AfXdp = "afxdp",
        /// AF_PACKET TPACKET_V3 rings.
        AfPacket = "afpacket",
    }
}

/// Receive-processing CPU placement for the linux DUT's ports (RPS masks).
///
/// Written `off`, `all`, `per-port`, one hex mask for every port, or
/// comma-separated hex masks, one per port (`0x` prefixes allowed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum RpsMode {
    /// Mask 0: processing on the sending CPU.
    Off,
    /// Every online CPU.
    All,
    /// Port i on CPU i mod #CPUs.
    PerPort,
    /// The same hex mask on every port.
    Mask(String),
    /// One hex mask per port (ports beyond the list reuse the last one).
    Masks(Vec<String>),
}

fn is_hex_mask(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit() || c == ',')
}

impl RpsMode {
    /// `off`, `all`, `per-port`, a hex mask, or comma-separated hex masks.
    pub fn parse(s: &str) -> Result<RpsMode, String> {
        let s = s.trim();
        let s = s.strip_prefix("0x").unwrap_or(s);
        Ok(match s {
            "off" | "none" | "0" => RpsMode::Off,
            "all" => RpsMode::All,
            "per-port" => RpsMode::PerPort,
            _ if s.contains(',') => {
                let v: Vec<String> = s
                    .split(',')
                    .map(|m| m.trim().trim_start_matches("0x").to_string())
                    .collect();
                if v.iter().any(|m| !is_hex_mask(m)) {
                    return Err(format!("rps {s:?}: masks must be hexadecimal"));
                }
                RpsMode::Masks(v)
            }
            _ if is_hex_mask(s) => RpsMode::Mask(s.to_string()),
            _ => {
                return Err(format!(
                    "rps {s:?}: expected off, all, per-port, a hex CPU mask or comma-separated masks (one per port)"
                ))
            }
        })
    }
}

impl FromStr for RpsMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        RpsMode::parse(s)
    }
}

impl std::fmt::Display for RpsMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RpsMode::Off => f.write_str("off"),
            RpsMode::All => f.write_str("all"),
            RpsMode::PerPort => f.write_str("per-port"),
            RpsMode::Mask(m) => f.write_str(m),
            RpsMode::Masks(v) => f.write_str(&v.join(",")),
        }
    }
}

impl TryFrom<String> for RpsMode {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<RpsMode> for String {
    fn from(m: RpsMode) -> String {
        m.to_string()
    }
}

/// An Ethernet address, written `02:00:00:00:01:00`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MacAddr(pub [u8; 6]);

impl FromStr for MacAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is not a MAC address");
        let mut m = [0u8; 6];
        let mut parts = s.trim().split(':');
        for b in &mut m {
            let p = parts.next().ok_or_else(bad)?;
            if p.is_empty() || p.len() > 2 {
                return Err(bad());
            }
            *b = u8::from_str_radix(p, 16).map_err(|_| bad())?;
        }
        match parts.next() {
            None => Ok(MacAddr(m)),
            Some(_) => Err(bad()),
        }
    }
}

impl std::fmt::Display for MacAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl TryFrom<String> for MacAddr {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<MacAddr> for String {
    fn from(m: MacAddr) -> String {
        m.to_string()
    }
}

/// Which device is under test, with its own options.
///
/// ```toml
/// [dut]
/// kind = "softrouter"     # or linux, command, external
/// driver = "afxdp"        # softrouter: afxdp (default) or afpacket
/// fast_path = "xdp"       # softrouter: xdp (router default on afxdp) or off
/// workers = 1
/// mode = "poll"
///
/// # kind = "linux"
/// # napi_budget = 300     # net.core.netdev_budget (global; restored at the end)
/// # rps = "per-port"      # off | all | per-port | hex mask | "1,2,4" (one mask per port)
/// # napi = true           # veth GRO on = per-queue NAPI on the DUT ports
/// # napi_defer_hard_irqs = 2     # software interrupt coalescing (sysfs, per DUT end) ...
/// # gro_flush_timeout_us = 50    # ... re-polled by this timer (needs both)
///
/// # kind = "command"
/// # command = "my-router --in $SR_IF_IN --out $SR_IF_OUT"
/// # settle_seconds = 1
///
/// # kind = "external"
/// # interfaces = ["enp1s0f0", "enp1s0f1"]
/// # peer_macs = ["02:00:00:00:01:00", "02:00:00:00:01:01"]
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DutSettings {
    /// softrouter, started by the benchmark in the DUT namespace.
    Softrouter {
        /// Router configuration file (default: generated for the topology).
        #[serde(default)]
        config: Option<PathBuf>,
        /// Worker threads.
        #[serde(default)]
        workers: Option<u32>,
        /// Reception mode: poll, interrupt, adaptive.
        #[serde(default)]
        mode: Option<SoftrouterMode>,
        /// Port driver of the generated configuration: `afxdp` (default)
        /// or `afpacket`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        driver: Option<PortDriver>,
        /// Packets per port per round (`[router] budget`), softrouter's
        /// analog of the NAPI budget.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<u32>,
        /// The XDP tier (`[router] fast_path`): `xdp` or `off`; unset = the
        /// router's default (`xdp` on afxdp ports) or the user's config.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fast_path: Option<FastPathMode>,
    },
    /// The Linux kernel forwarding in the DUT namespace.
    Linux {
        /// NAPI budget (`net.core.netdev_budget`); unset = unchanged.
        #[serde(default)]
        napi_budget: Option<u32>,
        /// Which CPU does each DUT port's receive processing (RPS, the veth
        /// analog of paper 000's NIC affinity modes), see [`RpsMode`].
        /// Unset = the bench's placement (the DUT's CPUs when it splits
        /// them), else unchanged.
        #[serde(default)]
        rps: Option<RpsMode>,
        /// Turn GRO on for the DUT's veth ends, which makes veth receive
        /// through per-queue NAPI instances (as a NIC driver does) instead
        /// of the per-CPU backlog. Unset = the veth default (GRO off).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        napi: Option<bool>,
        /// Software interrupt coalescing, with `gro_flush_timeout_us`: the
        /// kernel's per-device `napi_defer_hard_irqs` on the DUT's veth
        /// ends, the number of NAPI completions after which the device is
        /// not re-armed (on veth: senders do not wake the NAPI) but polled
        /// again by the `gro_flush_timeout` timer. Needs a timeout; turns
        /// the veth NAPI on (`napi`). Unset = the kernel's default (0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        napi_defer_hard_irqs: Option<u32>,
        /// The kernel's per-device `gro_flush_timeout` on the DUT's veth
        /// ends, in µs (the kernel takes ns): the timer that polls a
        /// deferring NAPI again (and flushes GRO). Turns the veth NAPI on.
        /// Unset = the kernel's default (0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gro_flush_timeout_us: Option<u32>,
    },
    /// A Linux bridge over the DUT's ports in its namespace: the tester
    /// addresses each frame to the receiving tester port (static
    /// forwarding entries, so nothing is flooded).
    Bridge {},
    /// Open vSwitch in the DUT namespace, its user-space (`netdev`)
    /// datapath (no OVS kernel module here), one flow per tester port.
    Ovs {},
    /// The floor: an XDP program on the DUT's ports that redirects each
    /// frame to its egress port with the MACs rewritten and nothing else,
    /// what the wire and the hook cost any XDP forwarder (the reference
    /// the comparison sets the other DUTs beside).
    Floor {},
    /// Any command, started in the DUT namespace with its two interface
    /// names in `$SR_IF_IN`/`$SR_IF_OUT`.
    Command {
        /// The command line (run by `sh -c`).
        command: String,
        /// A command printing the DUT's version string.
        #[serde(default)]
        version_command: Option<String>,
        /// Give the DUT interfaces the kernel addresses, routes and
        /// neighbors of the plan (forwarding stays off); default true.
        /// `false`: bare interfaces, for user-space routers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        addresses: Option<bool>,
        /// Wait this long after starting the command before traffic
        /// (default 1 s).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settle_seconds: Option<f64>,
    },
    /// An external device on interfaces the user names explicitly (R16).
    External {
        /// Tester interfaces connected to the DUT, in port order.
        interfaces: Vec<String>,
        /// Free-form description / version of the device for the report.
        #[serde(default)]
        description: Option<String>,
        /// MAC of the DUT port on each interface, in port order; unset =
        /// looked up in the kernel's neighbor table for 198.18.i.1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        peer_macs: Option<Vec<MacAddr>>,
    },
}

impl Default for DutSettings {
    fn default() -> Self {
        DutSettings::Softrouter {
            config: None,
            workers: None,
            mode: None,
            driver: None,
            budget: None,
            fast_path: None,
        }
    }
}

impl DutSettings {
    /// Which kind of DUT.
    pub fn kind(&self) -> DutKind {
        match self {
            DutSettings::Softrouter { .. } => DutKind::Softrouter,
            DutSettings::Linux { .. } => DutKind::Linux,
            DutSettings::Bridge {} => DutKind::Bridge,
            DutSettings::Ovs {} => DutKind::Ovs,
            DutSettings::Floor {} => DutKind::Floor,
            DutSettings::Command { .. } => DutKind::Command,
            DutSettings::External { .. } => DutKind::External,
        }
    }

    /// Check the options that need more than their type;
    /// `Err((dotted field, message))`.
    pub fn validate(&self, pattern: Pattern) -> Result<(), (String, String)> {
        let bad = |f: &str, m: String| Err((format!("dut.{f}"), m));
        let ports = pattern.ports();
        match self {
            DutSettings::Command { command, .. } if command.trim().is_empty() => {
                bad("command", "empty command".into())
            }
            DutSettings::Command {
                settle_seconds: Some(v),
                ..
            } if !(*v >= 0.0 && v.is_finite()) => bad(
                "settle_seconds",
                "must be zero or a positive number of seconds".into(),
            ),
            DutSettings::Softrouter {
                workers: Some(0), ..
            } => bad("workers", "must be at least 1".into()),
            DutSettings::Softrouter {
                budget: Some(0), ..
            } => bad("budget", "must be at least 1".into()),
            DutSettings::Linux {
                napi_defer_hard_irqs: Some(n),
                ..
            } if *n > i32::MAX as u32 => bad(
                "napi_defer_hard_irqs",
                format!("{n} is above the kernel's limit {}", i32::MAX),
            ),
            DutSettings::Linux {
                napi_defer_hard_irqs: Some(n),
                gro_flush_timeout_us: None | Some(0),
                ..
            } if *n > 0 => bad(
                "napi_defer_hard_irqs",
                format!(
                    "napi_defer_hard_irqs = {n} does nothing without gro_flush_timeout_us: \
                     the kernel defers re-arming a NAPI only when a timer will poll it again; \
                     set gro_flush_timeout_us > 0 too"
                ),
            ),
            DutSettings::Linux {
                napi: Some(false),
                napi_defer_hard_irqs,
                gro_flush_timeout_us,
                ..
            } if napi_defer_hard_irqs.is_some() || gro_flush_timeout_us.is_some() => bad(
                "napi",
                "napi_defer_hard_irqs and gro_flush_timeout_us act on the veth's NAPI \
                 instances; napi = false (GRO off: the per-CPU backlog) has none"
                    .into(),
            ),
            DutSettings::External { interfaces, .. } if (interfaces.len() as u32) < ports => bad(
                "interfaces",
                format!(
                    "pattern {pattern} needs {ports} interfaces, {} given",
                    interfaces.len()
                ),
            ),
            DutSettings::External {
                interfaces,
                peer_macs: Some(macs),
                ..
            } if macs.len() != interfaces.len() => bad(
                "peer_macs",
                format!("{} MACs for {} interfaces", macs.len(), interfaces.len()),
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rps_modes_read_back_as_written() {
        for s in ["off", "all", "per-port", "f", "1,2"] {
            let m: RpsMode = s.parse().unwrap();
            assert_eq!(m.to_string(), s);
        }
        assert_eq!(RpsMode::parse("0xf"), Ok(RpsMode::Mask("f".into())));
        assert!(RpsMode::parse("most").is_err());
        assert!(RpsMode::parse("1,zz").is_err());
    }

    #[test]
    fn macs_parse_and_print() {
        let m: MacAddr = "02:0a:ff:00:01:7e".parse().unwrap();
        assert_eq!(m.0, [2, 10, 255, 0, 1, 0x7e]);
        assert_eq!(m.to_string(), "02:0a:ff:00:01:7e");
        assert!("02:0a:ff:00:01".parse::<MacAddr>().is_err());
        assert!("02:0a:ff:00:01:7e:00".parse::<MacAddr>().is_err());
        assert!("zz:0a:ff:00:01:7e".parse::<MacAddr>().is_err());
    }
}
