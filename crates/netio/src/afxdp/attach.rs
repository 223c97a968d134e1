//! Which XDP program an `afxdp` port attaches, and attaching it: the
//! port's own redirect program ([`super::xdp_prog`]) with an XSKMAP of its
//! own, or a caller's ([`SharedProgram`]: softrouter's XDP fast path), in
//! the mode asked for (`Auto`: native, else generic).

use super::*;

/// What [`attach`] set up; the link detaches when dropped.
pub(super) struct Attached {
    pub prog: Arc<OwnedFd>,
    pub xskmap: Arc<OwnedFd>,
    /// Key of RX queue 0 in `xskmap`.
    pub key_base: u32,
    /// `Native` or `Generic`.
    pub mode: XdpMode,
    pub link: OwnedFd,
}

/// Attach `cfg`'s program (or the port's own) to `ifindex`, which has
/// `real` RX queues.
pub(super) fn attach(cfg: &AfXdpConfig, ifindex: u32, real: u16) -> Result<Attached, NetioError> {
    let name = cfg.iface.as_str();
    let (prog, xskmap, key_base) = match &cfg.program {
        Some(p) => {
            if real > p.max_queues {
                return Err(err(
                    name,
                    format!(
                        "{real} RX queues, the XDP program serves {} per port",
                        p.max_queues
                    ),
                ));
            }
            (p.prog.clone(), p.xskmap.clone(), p.key_base)
        }
        None => {
            let xskmap = bpf::create_xskmap(real as u32).map_err(|e| bpf_err(name, "XSKMAP", e))?;
            let prog = bpf::load_xdp(&xdp_prog::program(sys::raw(&xskmap)), xdp_prog::LICENSE)
                .map_err(|e| bpf_err(name, "loading the XDP program", e))?;
            (Arc::new(prog), Arc::new(xskmap), 0)
        }
    };

    let tries: &[(XdpMode, u32)] = match cfg.xdp_mode {
        XdpMode::Native => &[(XdpMode::Native, bpf::XDP_FLAGS_DRV_MODE)],
        XdpMode::Generic => &[(XdpMode::Generic, bpf::XDP_FLAGS_SKB_MODE)],
        XdpMode::Auto => &[
            (XdpMode::Native, bpf::XDP_FLAGS_DRV_MODE),
            (XdpMode::Generic, bpf::XDP_FLAGS_SKB_MODE),
        ],
    };
    let mut failures = Vec::new();
    let mut got = None;
    for &(mode, flags) in tries {
        match bpf::link_xdp(&prog, ifindex, flags) {
            Ok(link) => {
                got = Some((mode, link));
                break;
            }
            Err(e) => {
                // Busy or not permitted will not get better in another mode.
                let fatal = matches!(
                    e.raw_os_error(),
                    Some(libc::EBUSY) | Some(libc::EEXIST) | Some(libc::EPERM)
                );
                failures.push((mode, e));
                if fatal {
                    break;
                }
            }
        }
    }
    let Some((mode, link)) = got else {
        let (mode, e) = failures.pop().expect("one attempt");
        let mut msg = match e.raw_os_error() {
            Some(libc::EBUSY) | Some(libc::EEXIST) => format!(
                "busy: another XDP program is attached to {name} (see `ip -d link show {name}`; \
                 detach it with `ip link set dev {name} xdp off`)"
            ),
            Some(libc::EPERM) | Some(libc::EACCES) => {
                format!("attaching XDP not permitted: {e}; needs root or CAP_NET_ADMIN + CAP_BPF")
            }
            Some(libc::EOPNOTSUPP) => {
                format!("{mode} XDP not supported by the driver: {e}")
            }
            _ => format!("attaching the XDP program ({mode}): {e}"),
        };
        for (m, e) in failures {
            msg.push_str(&format!("; {m} mode failed first: {e}"));
        }
        return Err(err(name, msg));
    };
    Ok(Attached {
        prog,
        xskmap,
        key_base,
        mode,
        link,
    })
}
