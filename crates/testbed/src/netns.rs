//! Network namespaces and veth pairs, each removed on `Drop`, plus the
//! process-wide registry that lets a signal handler remove whatever is still
//! alive ([`cleanup_all`]).
//!
//! All work is done through the `ip` tool (iproute2) so that what a test did
//! can be repeated by hand from its log. Namespaces are named
//! `sr<pid%10000>x<counter><tag>`; interface names stay within the kernel's
//! 15-character limit.

use std::collections::BTreeSet;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use anyhow::{bail, Context, Result};

/// Maximum interface name length (IFNAMSIZ - 1).
pub const IFNAME_MAX: usize = 15;

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Namespaces created by this process and not yet deleted.
fn registry() -> &'static Mutex<BTreeSet<String>> {
    static R: OnceLock<Mutex<BTreeSet<String>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// The name prefix all of this process's objects share: `sr<pid%10000>x`.
pub fn process_prefix() -> String {
    format!("sr{}x", std::process::id() % 10000)
}

/// A process-unique name `sr<pid%10000>x<counter><tag>`.
///
/// Fails if the result would not fit an interface name (15 characters), so
/// keep tags short (one to three characters).
pub fn unique_name(tag: &str) -> Result<String> {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = format!("{}{}{}", process_prefix(), n, tag);
    if name.len() > IFNAME_MAX {
        bail!("name {name:?} longer than {IFNAME_MAX} characters; use a shorter tag");
    }
    Ok(name)
}

/// Run a command, fail with its stderr when it exits non-zero.
pub(crate) fn run_checked(cmd: &mut Command) -> Result<Output> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("spawning {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{:?} failed ({}): {}",
            cmd,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(out)
}

/// `ip <args>` (checked), returning stdout.
pub(crate) fn ip(args: &[&str]) -> Result<String> {
    let out = run_checked(Command::new("ip").args(args))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub use crate::root::is_root;

/// Whether netns testbeds can be built here: root, `ip` present, and a probe
/// namespace can be created and deleted. Cached; `Err` says why not.
pub fn netns_available() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE
        .get_or_init(|| {
            if !is_root() {
                return Err("not running as root".into());
            }
            let probe = Netns::new("p").map_err(|e| format!("cannot create a namespace: {e:#}"))?;
            drop(probe);
            Ok(())
        })
        .clone()
}

/// For tests that need root and netns support: returns `true` when they can
/// run; otherwise prints a clear `SKIP` line and returns `false`, so the
/// test returns early instead of failing.
///
/// Set `SOFTROUTER_REQUIRE_NETNS=1` to turn a skip into a panic (CI on a
/// machine that must run them).
pub fn require_root(test: &str) -> bool {
    match netns_available() {
        Ok(()) => true,
        Err(why) => {
            if std::env::var_os("SOFTROUTER_REQUIRE_NETNS").is_some_and(|v| v == "1") {
                panic!("{test}: netns testbed unavailable ({why}) and SOFTROUTER_REQUIRE_NETNS=1");
            }
            eprintln!("SKIP {test}: needs root and network namespaces ({why})");
            false
        }
    }
}

/// Delete every namespace this process created and has not yet deleted
/// (their veth ends go with them). For signal handlers and panics outside
/// a guard; safe to call more than once.
pub fn cleanup_all() {
    crate::shield::lower_all();
    let names: Vec<String> = match registry().lock() {
        Ok(mut r) => std::mem::take(&mut *r).into_iter().collect(),
        Err(p) => std::mem::take(&mut *p.into_inner()).into_iter().collect(),
    };
    for n in names {
        let _ = Command::new("ip")
            .args(["netns", "del", &n])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        crate::journal::remove_namespace(&n);
    }
}

/// Install a Ctrl-C / SIGTERM handler that calls [`cleanup_all`] and exits
/// with status 130. Only one such handler can exist per process: a binary
/// with its own handler should call [`cleanup_all`] from it instead.
pub fn install_ctrlc_cleanup() -> Result<()> {
    ctrlc::set_handler(|| {
        cleanup_all();
        std::process::exit(130);
    })
    .context("installing the Ctrl-C handler")
}

/// Names of the namespaces this process currently owns.
pub fn live_namespaces() -> Vec<String> {
    registry()
        .lock()
        .map(|r| r.iter().cloned().collect())
        .unwrap_or_default()
}

/// One network namespace, deleted on `Drop`. Loopback is up.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Create `sr<pid>x<n><tag>` with `ip netns add` and bring `lo` up.
    pub fn new(tag: &str) -> Result<Netns> {
        let name = unique_name(tag)?;
        // Register before creating, so a signal between the two still
        // cleans up (deleting a missing namespace is harmless).
        registry().lock().unwrap().insert(name.clone());
        crate::journal::add_namespace(&name);
        if let Err(e) = ip(&["netns", "add", &name]) {
            registry().lock().unwrap().remove(&name);
            return Err(e);
        }
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name (as `ip netns` knows it).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A `Command` running `prog args...` inside the namespace
    /// (`ip netns exec <name> prog args...`), not yet started.
    pub fn command(&self, prog: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, prog]).args(args);
        c
    }

    /// Run `argv` inside the namespace and return its output, whatever its
    /// exit status (check `status` yourself). `argv[0]` is the program.
    pub fn exec(&self, argv: &[&str]) -> Result<Output> {
        let (prog, args) = argv.split_first().context("exec: empty argv")?;
        self.command(prog, args)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("exec {argv:?} in {}", self.name))
    }

    /// Run `argv` inside the namespace; fail unless it exits 0. Returns stdout.
    pub fn run(&self, argv: &[&str]) -> Result<String> {
        let (prog, args) = argv.split_first().context("run: empty argv")?;
        let out = run_checked(&mut self.command(prog, args))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Start `argv` inside the namespace. The caller owns the child and must
    /// kill and wait for it before the namespace is dropped.
    pub fn spawn(&self, argv: &[&str]) -> Result<Child> {
        let (prog, args) = argv.split_first().context("spawn: empty argv")?;
        self.command(prog, args)
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("spawn {argv:?} in {}", self.name))
    }

    /// `ip -n <name> <args>` (checked), returning stdout.
    pub fn ip(&self, args: &[&str]) -> Result<String> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Add an address (`198.18.0.1/24` or `2001:2::1/64`) to `ifname`.
    /// IPv6 addresses are added with `nodad` so they are usable at once.
    pub fn add_addr(&self, ifname: &str, cidr: &str) -> Result<()> {
        if cidr.contains(':') {
            self.ip(&["-6", "addr", "add", cidr, "dev", ifname, "nodad"])?;
        } else {
            self.ip(&["addr", "add", cidr, "dev", ifname])?;
        }
        Ok(())
    }

    /// Set `ifname` up.
    pub fn link_up(&self, ifname: &str) -> Result<()> {
        self.ip(&["link", "set", ifname, "up"]).map(|_| ())
    }

    /// Add a route `dst` (a prefix or `default`) via `gw`; `-6` is chosen
    /// from the gateway's form.
    pub fn add_route(&self, dst: &str, gw: &str) -> Result<()> {
        if gw.contains(':') {
            self.ip(&["-6", "route", "add", dst, "via", gw])?;
        } else {
            self.ip(&["route", "add", dst, "via", gw])?;
        }
        Ok(())
    }

    /// Write a sysctl inside the namespace (`net.ipv4.ip_forward`, `1`).
    pub fn sysctl(&self, key: &str, value: &str) -> Result<()> {
        self.run(&["sysctl", "-q", "-w", &format!("{key}={value}")])
            .map(|_| ())
    }

    /// Turns off TX checksum offload (and with it TSO) on `ifname`.
    ///
    /// Why: a veth hands the peer packets with `CHECKSUM_PARTIAL`, trusting
    /// the receiving kernel to finish the checksum. A user-space router on
    /// the other end (AF_XDP or AF_PACKET) forwards the bytes as they are,
    /// so the final receiver sees a wrong UDP/TCP checksum and drops the
    /// packet. Real NICs fill the checksum in hardware; on veth the sending
    /// host must compute it, as it would for a NIC without offloads.
    pub fn disable_tx_offload(&self, ifname: &str) -> Result<()> {
        self.run(&["ethtool", "-K", ifname, "tx", "off"])
            .map(|_| ())
    }

    /// Turn IPv4 and IPv6 forwarding on or off for the whole namespace.
    pub fn set_forwarding(&self, on: bool) -> Result<()> {
        let v = if on { "1" } else { "0" };
        self.sysctl("net.ipv4.ip_forward", v)?;
        self.sysctl("net.ipv6.conf.all.forwarding", v)
    }

    /// Names of the interfaces in the namespace (without `lo`).
    pub fn links(&self) -> Result<Vec<String>> {
        let out = self.ip(&["-o", "link", "show"])?;
        Ok(parse_link_names(&out)
            .into_iter()
            .filter(|n| n != "lo")
            .collect())
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Ok(mut r) = registry().lock() {
            r.remove(&self.name);
        }
        crate::journal::remove_namespace(&self.name);
    }
}

/// Interface names from `ip -o link show` output (`3: name@peer: <...>`).
pub fn parse_link_names(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let rest = l.split_once(": ")?.1;
            let name = rest.split(':').next()?;
            Some(name.split('@').next()?.trim().to_string())
        })
        .collect()
}

/// A veth pair: end `a` in namespace `ns_a`, end `b` in `ns_b`. Both ends
/// are up. Removed on `Drop` (and anyway with either namespace).
#[derive(Debug)]
pub struct VethPair {
    /// Interface name of the first end.
    pub a: String,
    /// Interface name of the second end.
    pub b: String,
    /// Namespace name of the first end.
    pub ns_a: String,
    /// Namespace name of the second end.
    pub ns_b: String,
    /// TX and RX queues per end.
    pub queues: u32,
}

impl VethPair {
    /// Create a veth pair with `queues` TX and RX queues per end (1 = the
    /// default single queue), directly inside the two namespaces, and set
    /// both ends up. Names are `sr<pid>x<n>a` / `sr<pid>x<n>b`.
    pub fn new(ns_a: &Netns, ns_b: &Netns, queues: u32) -> Result<VethPair> {
        if queues == 0 {
            bail!("a veth needs at least one queue");
        }
        let base = unique_name("")?;
        let (a, b) = (format!("{base}a"), format!("{base}b"));
        if b.len() > IFNAME_MAX {
            bail!("interface name {b:?} too long");
        }
        let q = queues.to_string();
        let mut args = vec!["link", "add", a.as_str()];
        if queues > 1 {
            args.extend(["numtxqueues", &q, "numrxqueues", &q]);
        }
        args.extend(["type", "veth", "peer", "name", b.as_str()]);
        if queues > 1 {
            args.extend(["numtxqueues", &q, "numrxqueues", &q]);
        }
        args.extend(["netns", ns_b.name()]);
        ns_a.ip(&args)?;
        let pair = VethPair {
            a,
            b,
            ns_a: ns_a.name().to_string(),
            ns_b: ns_b.name().to_string(),
            queues,
        };
        ns_a.link_up(&pair.a)?;
        ns_b.link_up(&pair.b)?;
        Ok(pair)
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        // Deleting one end deletes both. The namespace may already be gone.
        let _ = Command::new("ip")
            .args(["-n", &self.ns_a, "link", "del", &self.a])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_names_fit_and_differ() {
        let a = unique_name("snd").unwrap();
        let b = unique_name("snd").unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(&process_prefix()));
        assert!(a.len() <= IFNAME_MAX);
        assert!(unique_name("waytoolongtagname").is_err());
    }

    #[test]
    fn parses_link_names() {
        let out = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue\n\
                   5: sr12x3a@if4: <BROADCAST,MULTICAST,UP> mtu 1500\n";
        assert_eq!(parse_link_names(out), vec!["lo", "sr12x3a"]);
    }

    #[test]
    fn netns_create_exec_delete() {
        if !require_root("netns_create_exec_delete") {
            return;
        }
        let ns = Netns::new("t").unwrap();
        let name = ns.name().to_string();
        assert!(live_namespaces().contains(&name));
        let out = ns.exec(&["ip", "-o", "link", "show"]).unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("lo"));
        drop(ns);
        assert!(!live_namespaces().contains(&name));
        let list = ip(&["netns", "list"]).unwrap();
        assert!(!list
            .lines()
            .any(|l| l.split_whitespace().next() == Some(&name)));
    }

    #[test]
    fn multiqueue_veth() {
        if !require_root("multiqueue_veth") {
            return;
        }
        let a = Netns::new("qa").unwrap();
        let b = Netns::new("qb").unwrap();
        let v = VethPair::new(&a, &b, 4).unwrap();
        let d = a.ip(&["-d", "link", "show", &v.a]).unwrap();
        assert!(d.contains("numtxqueues 4"), "{d}");
        assert_eq!(b.links().unwrap(), vec![v.b.clone()]);
    }
}
