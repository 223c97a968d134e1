//! `[[port]]`: each port's driver, interface, addresses and captures,
//! and the rules between ports (no two on one subnet, no capture file
//! written twice or read and written).
use super::*;

/// Why `c` cannot be an interface address, if it cannot.
fn bad_interface_address(c: &Cidr) -> Option<&'static str> {
    if c.len == 0 {
        return Some("a /0 subnet would make every address on-link");
    }
    if c.addr.is_unspecified() {
        return Some("the unspecified address is no host's");
    }
    if c.addr.is_multicast() {
        return Some("a multicast address is no host's");
    }
    if c.addr.is_loopback() {
        return Some("loopback addresses (127/8, ::1) never leave a host");
    }
    if c.addr == IpAddr::from([255, 255, 255, 255]) {
        return Some("the limited broadcast address is no host's");
    }
    if c.is_subnet_router_anycast(c.addr) {
        return Some(
            "it is the subnet's Subnet-Router anycast address (RFC 4291 2.6.1), every router's on the link (use a host address, or /127 for a point-to-point link)",
        );
    }
    if c.is_network_or_broadcast(c.addr) {
        return Some(if c.addr == c.network() {
            "it is the subnet's network address (use a host address, or /31 for a point-to-point link)"
        } else {
            "it is the subnet's broadcast address (use a host address, or /31 for a point-to-point link)"
        });
    }
    None
}

pub(super) fn port(cx: &Ctx, p: &S<RawPort>) -> Result<Port, ConfigError> {
    let p = p.get_ref();
    let name = p.name.get_ref().clone();
    if name.is_empty() || name.len() > 32 {
        return cx.err(p.name.span(), "port: name: must be 1 to 32 characters");
    }
    let field = |f: &str| format!("port {name:?}: {f}");
    let driver = match p.driver.get_ref().as_str() {
        "pcap" => Driver::Pcap,
        "mem" => Driver::Mem,
        "afxdp" => Driver::AfXdp,
        "afpacket" => Driver::AfPacket,
        other => {
            return cx.err(
                p.driver.span(),
                format!(
                    "{}: {} is not one of pcap, mem, afxdp, afpacket",
                    field("driver"),
                    excerpt(other)
                ),
            )
        }
    };
    let live = matches!(driver, Driver::AfXdp | Driver::AfPacket);
    let only = |v: bool, span: Option<Range<usize>>, f: &str, drivers: &str| {
        if let (true, Some(span)) = (v, span) {
            return cx.err(span, format!("{}: only for driver {drivers}", field(f)));
        }
        Ok(())
    };
    only(
        live,
        p.rx_pcap.as_ref().map(|v| v.span()),
        "rx_pcap",
        "pcap or mem",
    )?;
    only(
        driver != Driver::Pcap,
        p.tx_pcap.as_ref().map(|v| v.span()),
        "tx_pcap",
        "pcap",
    )?;
    only(
        !live,
        p.iface.as_ref().map(|v| v.span()),
        "iface",
        "afxdp or afpacket",
    )?;
    only(
        driver != Driver::AfXdp,
        p.xdp_mode.as_ref().map(|v| v.span()),
        "xdp_mode",
        "afxdp",
    )?;
    only(
        driver != Driver::AfXdp,
        p.zero_copy.as_ref().map(|v| v.span()),
        "zero_copy",
        "afxdp",
    )?;
    if live && p.iface.is_none() {
        return cx.err(
            p.driver.span(),
            format!(
                "{}: driver {:?} needs iface",
                field("iface"),
                p.driver.get_ref()
            ),
        );
    }
    if let Some(i) = &p.iface {
        let s = i.get_ref();
        // IFNAMSIZ is 16 with the terminating NUL.
        if s.is_empty() || s.len() > 15 || s.contains(['/', ' ', '\0']) || s == "." || s == ".." {
            return cx.err(
                i.span(),
                format!(
                    "{}: {} is not an interface name",
                    field("iface"),
                    excerpt(s)
                ),
            );
        }
    }
    let mac = match &p.mac {
        Some(m) => {
            let mac = parse_mac(m.get_ref()).map_or_else(
                || {
                    cx.err(
                        m.span(),
                        format!(
                            "{}: {} is not a MAC address",
                            field("mac"),
                            excerpt(m.get_ref())
                        ),
                    )
                },
                Ok,
            )?;
            if !is_unicast_mac(&mac) {
                return cx.err(
                    m.span(),
                    format!(
                        "{}: {} is a multicast or all-zero MAC address, not a port's",
                        field("mac"),
                        m.get_ref()
                    ),
                );
            }
            Some(mac)
        }
        None if !live => {
            return cx.err(
                p.name.span(),
                format!(
                    "{}: driver {:?} needs a mac",
                    field("mac"),
                    p.driver.get_ref()
                ),
            )
        }
        None => None,
    };
    let mut addresses: Vec<Cidr> = Vec::new();
    for a in &p.addresses {
        let c: Cidr = a
            .get_ref()
            .parse()
            .or_else(|e| cx.err(a.span(), format!("{}: {e}", field("addresses"))))?;
        if let Some(why) = bad_interface_address(&c) {
            return cx.err(
                a.span(),
                format!(
                    "{}: {c} cannot be an interface address: {why}",
                    field("addresses")
                ),
            );
        }
        if addresses.iter().any(|b| b.addr == c.addr) {
            return cx.err(
                a.span(),
                format!("{}: {} is listed twice", field("addresses"), c.addr),
            );
        }
        addresses.push(c);
    }
    let mtu = match &p.mtu {
        None => None,
        Some(_) => Some(cx.int(&p.mtu, &field("mtu"), 68..=9702, 1500)? as u16),
    };
    if let (Some(m), Some(span)) = (mtu, p.mtu.as_ref().map(|m| m.span())) {
        if m < 1280 && addresses.iter().any(|a| a.addr.is_ipv6()) {
            return cx.err(
                span,
                format!("{}: IPv6 needs an MTU of at least 1280", field("mtu")),
            );
        }
    }
    let xdp_mode = match p
        .xdp_mode
        .as_ref()
        .map(|m| (m.get_ref().as_str(), m.span()))
    {
        None | Some(("auto", _)) => XdpMode::Auto,
        Some(("native", _)) => XdpMode::Native,
        Some(("generic", _)) => XdpMode::Generic,
        Some((other, span)) => {
            return cx.err(
                span,
                format!(
                    "{}: {} is not one of auto, native, generic",
                    field("xdp_mode"),
                    excerpt(other)
                ),
            )
        }
    };
    let ring_size = cx.int(&p.ring_size, &field("ring_size"), 64..=65536, 2048)?;
    if (ring_size as u64).count_ones() != 1 {
        return cx.err(
            p.ring_size.as_ref().unwrap().span(),
            format!("{}: {ring_size} is not a power of two", field("ring_size")),
        );
    }
    Ok(Port {
        name: p.name.get_ref().clone(),
        driver,
        rx_pcap: p.rx_pcap.as_ref().map(|v| cx.path(v.get_ref())),
        tx_pcap: p.tx_pcap.as_ref().map(|v| cx.path(v.get_ref())),
        iface: p.iface.as_ref().map(|v| v.get_ref().clone()),
        mac,
        addresses,
        mtu,
        queues: match &p.queues {
            None => None,
            Some(_) => Some(cx.int(&p.queues, &field("queues"), 1..=1024, 1)? as u16),
        },
        xdp_mode,
        zero_copy: p.zero_copy.as_ref().map(|z| *z.get_ref()),
        ring_size: ring_size as u32,
    })
}

/// Two ports on the same subnet would make the egress port of a next hop
/// ambiguous.
pub(super) fn check_overlapping_subnets(
    cx: &Ctx,
    ports: &[Port],
    raw: &[S<RawPort>],
) -> Result<(), ConfigError> {
    for (i, p) in ports.iter().enumerate() {
        for (k, a) in p.addresses.iter().enumerate() {
            for q in &ports[..i] {
                if let Some(b) = q
                    .addresses
                    .iter()
                    .find(|b| b.contains(a.addr) || a.contains(b.addr))
                {
                    return cx.err(
                        raw[i].get_ref().addresses[k].span(),
                        format!(
                            "port {:?}: addresses: {a} overlaps {b} of port {:?}",
                            p.name, q.name
                        ),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Every output capture is written by one port, and none is another's
/// input (it would be truncated before it is read).
pub(super) fn check_capture_files(
    cx: &Ctx,
    ports: &[Port],
    raw: &[S<RawPort>],
) -> Result<(), ConfigError> {
    for (i, p) in ports.iter().enumerate() {
        let Some(tx) = &p.tx_pcap else { continue };
        let span = raw[i].get_ref().tx_pcap.as_ref().unwrap().span();
        for (k, q) in ports.iter().enumerate() {
            if k < i && q.tx_pcap.as_ref() == Some(tx) {
                return cx.err(
                    span,
                    format!(
                        "port {:?}: tx_pcap: {} is also port {:?}'s tx_pcap (two ports cannot write one capture)",
                        p.name,
                        tx.display(),
                        q.name
                    ),
                );
            }
            if q.rx_pcap.as_ref() == Some(tx) {
                return cx.err(
                    span,
                    format!(
                        "port {:?}: tx_pcap: {} is port {:?}'s rx_pcap (it would be overwritten)",
                        p.name,
                        tx.display(),
                        q.name
                    ),
                );
            }
        }
    }
    Ok(())
}
