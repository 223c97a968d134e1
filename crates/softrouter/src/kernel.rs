//! The kernel features softrouter needs, and a clear refusal on a kernel
//! too old for them (rather than an `EINVAL` from deep inside a BPF load).
//!
//! The check reads the running kernel's release (`uname -r`); where cheap,
//! a probe confirms (the `netdev` generic-netlink family for
//! `xdp_features`). Distribution kernels that backport a feature can skip
//! the release check with `SOFTROUTER_SKIP_KERNEL_CHECK=1`; what then
//! fails, fails with the kernel's own error. Minimums (see README.md,
//! "Kernel"):
//!
//! | feature | since | used by |
//! |---|---|---|
//! | `BPF_F_MMAPABLE` array maps | 5.5 | the XDP tier's tables, the tester's counters |
//! | XDP attached through a `bpf_link` | 5.9 | every afxdp port, the tester |
//! | AF_XDP `XDP_SHARED_UMEM` across queues and devices | 5.10 | afxdp ports |
//! | `NTF_EXT_MANAGED` neighbours | 5.16 | `[kernel] local` |
//! | `BPF_PROG_TEST_RUN` live frames | 5.18 | the XDP tester (`--tester xdp`, the default) |
//! | `xdp_features` (netdev netlink) | 6.3 | the XDP tier's redirects between ports |

use std::cmp::Ordering;

/// A kernel feature and the release that brought it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    pub name: &'static str,
    pub since: (u32, u32),
}

/// What every `run` needs (afxdp ports: bpf_link, mmapable maps, shared UMEM).
pub const RUN: Feature = Feature {
    name: "AF_XDP shared UMEM and XDP through a bpf_link",
    since: (5, 10),
};
/// What the XDP tier needs to forward between ports in XDP.
pub const XDP_FEATURES: Feature = Feature {
    name: "xdp_features (the netdev netlink family), which the XDP tier reads before redirecting between ports",
    since: (6, 3),
};
/// What the default tester needs.
pub const LIVE_FRAMES: Feature = Feature {
    name: "BPF_PROG_TEST_RUN with live XDP frames (BPF_F_TEST_XDP_LIVE_FRAMES), the XDP tester's generator",
    since: (5, 18),
};

/// Set to skip the release checks (a backporting distribution kernel).
pub const SKIP_ENV: &str = "SOFTROUTER_SKIP_KERNEL_CHECK";

/// (major, minor) of a release string such as `6.1.0-18-amd64` or
/// `5.18.0`; None if it does not start that way.
pub fn parse_release(r: &str) -> Option<(u32, u32)> {
    let mut it = r.trim().split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// Whether `release` is at least `min`.
pub fn at_least(release: (u32, u32), min: (u32, u32)) -> bool {
    release.cmp(&min) != Ordering::Less
}

/// The running kernel's release, as `uname -r` prints it.
pub fn release() -> String {
    // SAFETY: uname(2) fills the struct it is given.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    // SAFETY: uname NUL-terminates the field.
    unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// Refuses `what` on `release` if it is older than `f` needs: the message
/// names the feature, the kernel needed and the kernel running.
pub fn require_on(release: &str, f: Feature, what: &str) -> Result<(), String> {
    match parse_release(release) {
        Some(r) if !at_least(r, f.since) => Err(format!(
            "{what} needs Linux {}.{} or later for {}; this kernel is {release} (set {SKIP_ENV}=1 if your distribution backported it)",
            f.since.0, f.since.1, f.name
        )),
        // A release we cannot read is left to the kernel to judge.
        _ => Ok(()),
    }
}

/// [`require_on`] the running kernel, unless [`SKIP_ENV`] is set.
pub fn require(f: Feature, what: &str) -> Result<(), String> {
    if std::env::var_os(SKIP_ENV).is_some_and(|v| v != "0") {
        return Ok(());
    }
    require_on(&release(), f, what)
}

/// Whether the kernel answers `xdp_features` queries (a probe on the
/// loopback device: one netlink round trip).
pub fn has_xdp_features() -> bool {
    netio::xdp_features::query(1).is_ok()
}

/// `softrouter run`: afxdp ports need [`RUN`]; their XDP tier without
/// [`XDP_FEATURES`] runs, but never redirects between ports (warned).
/// `mem`, `pcap` and `afpacket` ports need nothing special.
pub fn check_run(cfg: &config::Config) -> Result<(), String> {
    if !cfg.ports.iter().any(|p| p.driver == config::Driver::AfXdp) {
        return Ok(());
    }
    require(RUN, "softrouter run with afxdp ports")?;
    if cfg.router.fast_path == config::FastPath::Xdp && !has_xdp_features() {
        tracing::warn!(
            "this kernel ({}) has no xdp_features (Linux 6.3+): the XDP tier will hand every packet to the workers; set [router] fast_path = \"off\" to save it the work",
            release()
        );
    }
    Ok(())
}

/// `softrouter bench`: the XDP tester (the default) needs [`LIVE_FRAMES`];
/// the others, and the softrouter DUT's afxdp ports, [`RUN`]. Settings
/// that do not build are left to the bench to report; writing the
/// resolved experiment (`--save-experiment`) needs no kernel at all.
#[cfg(feature = "bench")]
pub fn check_bench(args: &bench_cli::cli::BenchArgs) -> Result<(), String> {
    if args.save_experiment.is_some() {
        return Ok(());
    }
    let Ok(runs) = bench_cli::cli::build_settings(args) else {
        return Ok(());
    };
    let xdp = runs
        .iter()
        .any(|s| s.tester == bench::settings::TesterBackend::Xdp);
    if xdp {
        require(LIVE_FRAMES, "softrouter bench with the XDP tester (--tester xdp, the default; --tester afxdp needs 5.10)")
    } else {
        require(RUN, "softrouter bench")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_and_compare() {
        assert_eq!(parse_release("6.1.0-18-amd64"), Some((6, 1)));
        assert_eq!(parse_release("5.18.0"), Some((5, 18)));
        assert_eq!(parse_release("6.18.44-fc-v595"), Some((6, 18)));
        assert_eq!(parse_release("4.19"), Some((4, 19)));
        assert_eq!(parse_release("6"), None);
        assert_eq!(parse_release("junk"), None);
        // Numeric, not textual: 5.9 < 5.10 < 5.18 < 6.1.
        assert!(!at_least((5, 9), (5, 10)));
        assert!(at_least((5, 10), (5, 10)));
        assert!(at_least((5, 18), (5, 10)));
        assert!(!at_least((5, 10), (5, 18)));
        assert!(at_least((6, 1), (5, 18)));
        assert!(!at_least((6, 1), (6, 3)));
        assert!(at_least((7, 0), (6, 3)));
    }

    #[test]
    fn refusals_name_the_feature_and_the_kernels() {
        let e = require_on("5.15.0-91-generic", LIVE_FRAMES, "softrouter bench").unwrap_err();
        assert!(e.contains("Linux 5.18 or later"), "{e}");
        assert!(e.contains("BPF_F_TEST_XDP_LIVE_FRAMES"), "{e}");
        assert!(e.contains("5.15.0-91-generic"), "{e}");
        assert!(require_on("5.18.0", LIVE_FRAMES, "bench").is_ok());
        assert!(require_on("4.19.0", RUN, "run").is_err());
        assert!(require_on("6.1.0-18-amd64", RUN, "run").is_ok());
        // Unreadable: not ours to refuse.
        assert!(require_on("", RUN, "run").is_ok());
    }
}
