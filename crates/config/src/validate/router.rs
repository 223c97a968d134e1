//! `[router]` and `[[queue]]`: the workers, their cores and queues, and
//! every knob of the router, each an integer or a name in its range.
use super::*;

pub(super) fn router(
    cx: &Ctx,
    r: Option<&RawRouter>,
    queues: &[S<RawQueue>],
    port_of: &PortLookup,
) -> Result<Router, ConfigError> {
    let default = RawRouter::default();
    let r = r.unwrap_or(&default);
    let mode = match &r.mode {
        None => Mode::Adaptive,
        Some(m) => match m.get_ref().as_str() {
            "poll" => Mode::Poll,
            "interrupt" => Mode::Interrupt,
            "adaptive" => Mode::Adaptive,
            other => {
                return cx.err(
                    m.span(),
                    format!(
                        "router: mode: {} is not one of poll, interrupt, adaptive",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let forwarding = match &r.forwarding {
        None => Forwarding::Ip,
        Some(f) => match f.get_ref().as_str() {
            "ip" => Forwarding::Ip,
            "cross-connect" => Forwarding::CrossConnect,
            other => {
                return cx.err(
                    f.span(),
                    format!(
                        "router: forwarding: {} is not one of ip, cross-connect",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let tx_queues = match &r.tx_queues {
        None => TxQueues::PerWorker,
        Some(t) => match t.get_ref().as_str() {
            "per-worker" => TxQueues::PerWorker,
            "shared" => TxQueues::Shared,
            other => {
                return cx.err(
                    t.span(),
                    format!(
                        "router: tx_queues: {} is not one of per-worker, shared",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let fast_path = match &r.fast_path {
        // The XDP tier routes: a cross-connect has nothing for it to do.
        None if forwarding == Forwarding::CrossConnect => FastPath::Off,
        Some(m) if forwarding == Forwarding::CrossConnect && m.get_ref() == "xdp" => {
            return cx.err(
                m.span(),
                "router: fast_path: \"xdp\" routes in the driver; forwarding = \"cross-connect\" needs \"off\"",
            )
        }
        None => FastPath::Xdp,
        Some(m) => match m.get_ref().as_str() {
            "xdp" => FastPath::Xdp,
            "off" => FastPath::Off,
            other => {
                return cx.err(
                    m.span(),
                    format!(
                        "router: fast_path: {} is not one of xdp, off",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let hugepages = match &r.hugepages {
        None => HugePages::Auto,
        Some(h) => match h.get_ref().as_str() {
            "auto" => HugePages::Auto,
            "require" => HugePages::Require,
            "off" => HugePages::Off,
            other => {
                return cx.err(
                    h.span(),
                    format!(
                        "router: hugepages: {} is not one of auto, require, off",
                        excerpt(other)
                    ),
                )
            }
        },
    };
    let mut cores: Vec<usize> = Vec::new();
    if let Some(c) = &r.cores {
        for &core in c.get_ref() {
            if !(0..=1023).contains(&core) {
                return cx.err(
                    c.span(),
                    format!("router: cores: {core} is not a CPU number"),
                );
            }
            if cores.contains(&(core as usize)) {
                return cx.err(
                    c.span(),
                    format!(
                        "router: cores: core {core} is listed twice (two pinned workers on one core halve each other)"
                    ),
                );
            }
            cores.push(core as usize);
        }
    }
    // An explicit queue map defines the workers: one per distinct core.
    let mut queue_map = Vec::new();
    if !queues.is_empty() {
        if let Some(c) = &r.cores {
            return cx.err(
                c.span(),
                "router: cores: give either router.cores or [[queue]] entries, not both",
            );
        }
        let mut seen = HashSet::new();
        for q in queues {
            let q = q.get_ref();
            let port = port_of(&q.port, "queue: port")?;
            let queue = cx.int(&Some(q.queue.clone()), "queue: queue", 0..=1023, 0)? as u16;
            let core = cx.int(&Some(q.core.clone()), "queue: core", 0..=1023, 0)? as usize;
            if !seen.insert((port, queue)) {
                return cx.err(
                    q.queue.span(),
                    format!(
                        "queue: queue {queue} of port {:?} is assigned twice",
                        q.port.get_ref()
                    ),
                );
            }
            let worker = match cores.iter().position(|&c| c == core) {
                Some(w) => w,
                None => {
                    cores.push(core);
                    cores.len() - 1
                }
            };
            queue_map.push(QueueMap {
                port,
                queue,
                worker,
            });
        }
    }
    let workers_default = if cores.is_empty() {
        1
    } else {
        cores.len() as i64
    };
    let workers = cx.int(&r.workers, "router: workers", 1..=64, workers_default)? as usize;
    if !cores.is_empty() && workers != cores.len() {
        let span = r.workers.as_ref().map(|w| w.span()).unwrap_or(0..0);
        return cx.err(
            span,
            format!(
                "router: workers: {workers} workers but {} cores are given",
                cores.len()
            ),
        );
    }
    let frame_size = cx.int(&r.frame_size, "router: frame_size", 2048..=65536, 2048)?;
    if (frame_size as u64).count_ones() != 1 {
        return cx.err(
            r.frame_size.as_ref().unwrap().span(),
            format!("router: frame_size: {frame_size} is not a power of two"),
        );
    }
    Ok(Router {
        workers,
        cores,
        queue_map,
        mode,
        forwarding,
        tx_queues,
        fast_path,
        budget: cx.int(&r.budget, "router: budget", 1..=65536, 64)? as u32,
        icmp_rate: cx.int(&r.icmp_rate, "router: icmp_rate", 0..=1_000_000, 1000)? as u32,
        hold_packets: cx.int(&r.hold_packets, "router: hold_packets", 0..=4096, 16)? as u32,
        neighbor_timeout_s: cx.int(
            &r.neighbor_timeout,
            "router: neighbor_timeout",
            1..=86400,
            300,
        )? as u32,
        pool_frames: cx.int(&r.pool_frames, "router: pool_frames", 1024..=1 << 22, 16384)? as u32,
        frame_size: frame_size as u32,
        ipv4_tbl8_groups: opt_int(
            cx,
            &r.ipv4_tbl8_groups,
            "router: ipv4_tbl8_groups",
            256..=1 << 24,
        )?,
        ipv6_tbl8_groups: opt_int(
            cx,
            &r.ipv6_tbl8_groups,
            "router: ipv6_tbl8_groups",
            256..=1 << 22,
        )?,
        hugepages,
    })
}

/// An optional integer key: `None` if absent, else checked as
/// [`Ctx::int`] does.
fn opt_int(
    cx: &Ctx,
    v: &Option<S<i64>>,
    what: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<Option<u32>, ConfigError> {
    match v {
        None => Ok(None),
        Some(_) => Ok(Some(cx.int(v, what, range, 0)? as u32)),
    }
}
