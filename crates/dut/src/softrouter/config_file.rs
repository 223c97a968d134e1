//! The router's configuration for a run: generated for the testbed, or a
//! user's file adapted to it, as `schema::config_file::ConfigFile` (see the
//! parent module for why), and its text.

use super::*;

/// What a generated configuration sets beyond the bed's ports and routes.
#[derive(Debug)]
pub struct Knobs<'a> {
    pub driver: Driver,
    /// Worker CPUs, dealt in turn (`cores`).
    pub cores: Option<&'a [usize]>,
    pub workers: Option<usize>,
    pub mode: Option<Mode>,
    pub budget: Option<u32>,
    /// Per-port `xdp_mode` (afxdp).
    pub xdp_mode: Option<XdpMode>,
    /// `[router] fast_path`; `None`: the router's default.
    pub fast_path: Option<schema::config_file::FastPath>,
}

/// The bench's name for the router's driver.
pub(super) fn driver_of(d: PortDriver) -> Driver {
    match d {
        PortDriver::AfXdp => Driver::AfXdp,
        PortDriver::AfPacket => Driver::AfPacket,
    }
}

/// The bench's name for the router's XDP tier.
pub(super) fn fast_path_of(f: FastPathMode) -> schema::config_file::FastPath {
    match f {
        FastPathMode::Xdp => schema::config_file::FastPath::Xdp,
        FastPathMode::Off => schema::config_file::FastPath::Off,
    }
}

/// The bench's name for the router's reception mode.
pub(super) fn mode_of(m: SoftrouterMode) -> Mode {
    match m {
        SoftrouterMode::Poll => Mode::Poll,
        SoftrouterMode::Interrupt => Mode::Interrupt,
        SoftrouterMode::Adaptive => Mode::Adaptive,
    }
}

/// The router's name for bed port `p`.
pub(super) fn port_name(p: &BedPort) -> String {
    format!("p{}", p.index)
}

/// The DUT's control socket: in its private run folder (relative to the
/// configuration written there), never the default path, which a router
/// the operator runs may hold.
pub(super) fn dut_control() -> ControlTable {
    ControlTable {
        socket: Some(PathBuf::from("ctl.sock")),
        group: None,
    }
}

/// The DUT's metrics endpoint: the loopback of the DUT's own namespace
/// (so never a port the operator's router holds), scraped by the
/// control-latency sampler during trials.
pub(super) const DUT_METRICS: &str = "127.0.0.1:9469";

pub(super) fn dut_metrics() -> MetricsTable {
    MetricsTable {
        listen: DUT_METRICS.parse().expect("a socket address"),
    }
}

/// The generated configuration for `bed` (the addressing plan's prefix
/// lengths: /24 and /64, as `BedPort::dest_v4_net`).
pub fn generate_config(bed: &Bed, k: &Knobs) -> ConfigFile {
    let cidr = |addr: IpAddr, len: u8| Cidr { addr, len };
    ConfigFile {
        router: Some(RouterTable {
            // One DUT CPU per worker; more workers than DUT CPUs (2 on a
            // 2-CPU machine whose other CPU is the tester's) are left to
            // the router's default, worker i on the i-th CPU it may use
            // modulo their count: they share the DUT's CPUs.
            cores: k
                .cores
                .filter(|c| k.workers.is_none_or(|w| w <= c.len()))
                .map(|c| c[..k.workers.unwrap_or(c.len()).min(c.len())].to_vec()),
            workers: k.workers,
            mode: k.mode,
            budget: k.budget,
            fast_path: k.fast_path,
            ..RouterTable::default()
        }),
        port: bed
            .ports
            .iter()
            .map(|p| PortTable {
                iface: Some(p.dut_if.clone()),
                addresses: vec![cidr(p.dut_v4.into(), 24), cidr(p.dut_v6.into(), 64)],
                xdp_mode: k.xdp_mode,
                ..PortTable::new(port_name(p), k.driver)
            })
            .collect(),
        route: bed
            .ports
            .iter()
            .flat_map(|p| {
                [
                    RouteTable {
                        prefix: cidr(p.dest_v4.into(), 24),
                        via: vec![p.tester_v4.into()],
                    },
                    RouteTable {
                        prefix: cidr(p.dest_v6.into(), 64),
                        via: vec![p.tester_v6.into()],
                    },
                ]
            })
            .collect(),
        neighbor: bed
            .ports
            .iter()
            .flat_map(|p| {
                [IpAddr::from(p.tester_v4), p.tester_v6.into()].map(|address| NeighborTable {
                    address,
                    mac: format_mac(&p.tester_mac),
                    port: port_name(p),
                })
            })
            .collect(),
        control: Some(dut_control()),
        metrics: Some(dut_metrics()),
        ..ConfigFile::default()
    }
}

/// A user's configuration adapted to `bed`: every `iface` that is
/// `{ifN}` becomes port N's DUT interface, every `mac` (of a port or a
/// neighbor) that is `{tester_macN}` the MAC of port N's tester end, and
/// relative paths are made relative to `folder`, the user's file's (the
/// router reads the adapted copy elsewhere, and resolves relative paths
/// against the copy's folder). Anything else is kept as the user wrote it.
pub fn adapt_config(
    mut file: ConfigFile,
    bed: &Bed,
    folder: &Path,
    fast_path: Option<schema::config_file::FastPath>,
) -> Result<ConfigFile> {
    file.control = Some(dut_control());
    file.metrics = Some(dut_metrics());
    if fast_path.is_some() {
        file.router.get_or_insert_with(Default::default).fast_path = fast_path;
    }
    let anchor = |path: &mut PathBuf| {
        if path.is_relative() {
            *path = folder.join(&*path);
        }
    };
    let dut_if = |p: &BedPort| p.dut_if.clone();
    let tester_mac = |p: &BedPort| format_mac(&p.tester_mac);
    for p in &mut file.port {
        if let Some(iface) = &mut p.iface {
            fill(iface, "if", bed, dut_if).with_context(|| format!("port {:?}: iface", p.name))?;
        }
        if let Some(mac) = &mut p.mac {
            fill(mac, "tester_mac", bed, tester_mac)
                .with_context(|| format!("port {:?}: mac", p.name))?;
        }
        for path in [&mut p.rx_pcap, &mut p.tx_pcap].into_iter().flatten() {
            anchor(path);
        }
    }
    if let Some(r) = &mut file.routes_file {
        anchor(&mut r.path);
    }
    for n in &mut file.neighbor {
        fill(&mut n.mac, "tester_mac", bed, tester_mac)
            .with_context(|| format!("neighbor {}: mac", n.address))?;
    }
    Ok(file)
}

/// Replaces `value` with `of(port N)` if it is the placeholder
/// `{<name>N}`; a port the bed does not have is an error.
pub(super) fn fill(
    value: &mut String,
    name: &str,
    bed: &Bed,
    of: impl Fn(&BedPort) -> String,
) -> Result<()> {
    let index = value
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .and_then(|v| v.strip_prefix(name))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let Some(index) = index else {
        return Ok(());
    };
    let port = index
        .parse::<usize>()
        .ok()
        .and_then(|i| bed.ports.iter().find(|p| p.index == i))
        .with_context(|| {
            format!(
                "{value}: the testbed has no port {index} (it has {})",
                bed.ports.len()
            )
        })?;
    *value = of(port);
    Ok(())
}

/// The text of `file` as the router reads it, after `header` (comment
/// lines saying where it came from).
pub(super) fn config_text(file: &ConfigFile, header: &str) -> Result<String> {
    let body = toml::to_string(file).context("writing softrouter's configuration")?;
    Ok(format!("{header}\n{body}"))
}
