//! The kernel mirror is the kernel's FIB (issue 22): with several routes
//! for a prefix softrouter uses the one the kernel uses, deleting another
//! leaves it, next-hop objects are followed; kernel routes are judged
//! like configured ones and never take the router's own and connected
//! routes; and 10,000 random kernel route operations leave softrouter's
//! choice equal to the kernel's for every prefix after every batch.
//!
//! Needs root (namespaces); skipped with a message otherwise.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::RouterProcess;
use control::protocol::{Request, Response};
use rand::{rngs::SmallRng, Rng, SeedableRng};
use testbed::{Netns, Testbed};

/// A router namespace with one port (softrouter's 198.18.0.1/24 and
/// 2001:2::1/64) and softrouter following its kernel table. The kernel
/// has addresses of its own there (.9, ::9; softrouter's are not the
/// kernel's, as on an afxdp router without `[kernel] local`), so it
/// takes routes via softrouter's own address.
struct Lab {
    router: Option<RouterProcess>,
    sock: PathBuf,
    dir: PathBuf,
    port: String,
    ns: String,
    tb: Testbed,
}

impl Lab {
    fn start(tag: &str) -> Lab {
        let tb = Testbed::builder()
            .ns("router")
            .ns("peer")
            .veth("router", "peer", 1)
            .build()
            .expect("testbed");
        let r = tb.ns("router").unwrap();
        let port = tb.veth(0).a.clone();
        r.add_addr(&port, "198.18.0.9/24").unwrap();
        r.add_addr(&port, "2001:2::9/64").unwrap();
        let dir = std::env::temp_dir().join(format!("sr-kmirror-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("ctl.sock");
        let cfg = format!(
            r#"
[router]
workers = 1
mode = "interrupt"

[[port]]
name = "p0"
driver = "afpacket"
iface = "{port}"
addresses = ["198.18.0.1/24", "2001:2::1/64"]

[control]
socket = "{sock}"

[kernel]
routes = true
"#,
            sock = sock.display()
        );
        let mut router = RouterProcess::start(r, tag, &cfg);
        router.wait_ready(Duration::from_secs(20));
        let lab = Lab {
            router: Some(router),
            sock,
            dir,
            port,
            ns: r.name().to_string(),
            tb,
        };
        lab
    }

    fn ns(&self) -> &Netns {
        self.tb.ns("router").unwrap()
    }

    fn ip(&self, args: &[&str]) {
        self.ns().ip(args).unwrap();
    }

    /// The route for exactly `prefix` (`ctl route show PREFIX`).
    fn route(&self, prefix: &str) -> Option<serde_json::Value> {
        match ctl(
            &self.sock,
            Request::RouteShow {
                prefix: Some(prefix.into()),
                longest: None,
            },
        )? {
            serde_json::Value::Array(a) => a.first().cloned(),
            _ => None,
        }
    }

    /// `prefix`'s route as "kind via,via" (via sorted), "-" if none.
    fn shown(&self, prefix: &str) -> String {
        self.route(prefix).map_or("-".into(), |r| summary(&r))
    }

    fn stop(mut self) -> serde_json::Value {
        self.router.take().unwrap().stop()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        drop(self.router.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ctl(sock: &Path, r: Request) -> Option<serde_json::Value> {
    match control::client::request(sock, r).ok()? {
        Response::Ok { data } => Some(data),
        Response::Error { .. } => None,
    }
}

/// A route of `ctl route show` as "kind via,via" (gateways sorted).
fn summary(r: &serde_json::Value) -> String {
    let via: BTreeSet<&str> = r["via"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["address"].as_str())
        .collect();
    let via: Vec<&str> = via.into_iter().collect();
    format!("{} {}", r["kind"].as_str().unwrap_or("?"), via.join(","))
        .trim_end()
        .to_string()
}

/// Waits until `prefix` shows as `want` ("-": no route).
fn expect(lab: &Lab, prefix: &str, want: &str, after: &str) {
    let t = Instant::now();
    loop {
        let got = lab.shown(prefix);
        if got == want {
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "after {after}: {prefix} is {got:?}, the kernel uses {want:?}\n{}",
            lab.router.as_ref().unwrap().log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Defect 1: several kernel routes for one prefix (metrics, a backup
/// blackhole, IPv6 multipath members, a next-hop group): softrouter uses
/// what the kernel uses, after every change.
#[test]
fn the_mirror_uses_the_route_the_kernel_uses() {
    if !testbed::require_root("kernel mirror: the kernel's choice") {
        return;
    }
    let lab = Lab::start("choice");
    let dev = lab.port.clone();
    let q = "198.19.64.0/24";
    let step = |cmd: &[&str], prefix: &str, want: &str| {
        lab.ip(cmd);
        expect(&lab, prefix, want, &cmd.join(" "));
    };
    step(
        &[
            "route",
            "add",
            q,
            "via",
            "198.18.0.2",
            "dev",
            &dev,
            "metric",
            "10",
        ],
        q,
        "forward 198.18.0.2",
    );
    step(
        &[
            "route",
            "add",
            q,
            "via",
            "198.18.0.3",
            "dev",
            &dev,
            "metric",
            "20",
        ],
        q,
        "forward 198.18.0.2",
    );
    step(
        &["route", "add", "blackhole", q, "metric", "200"],
        q,
        "forward 198.18.0.2",
    );
    step(
        &[
            "route",
            "del",
            q,
            "via",
            "198.18.0.3",
            "dev",
            &dev,
            "metric",
            "20",
        ],
        q,
        "forward 198.18.0.2",
    );
    step(&["route", "del", q, "metric", "10"], q, "blackhole");
    step(&["route", "del", "blackhole", q, "metric", "200"], q, "-");

    // IPv6 multipath: members join and leave one at a time.
    let q6 = "2001:2:0:64::/64";
    step(
        &["-6", "route", "add", q6, "via", "2001:2::2", "metric", "10"],
        q6,
        "forward 2001:2::2",
    );
    step(
        &[
            "-6",
            "route",
            "append",
            q6,
            "via",
            "2001:2::3",
            "metric",
            "10",
        ],
        q6,
        "forward 2001:2::2,2001:2::3",
    );
    step(
        &["-6", "route", "del", q6, "via", "2001:2::2", "metric", "10"],
        q6,
        "forward 2001:2::3",
    );
    step(
        &["-6", "route", "add", "unreachable", q6, "metric", "5"],
        q6,
        "blackhole",
    );
    // Through a link-local gateway, as FRR installs IPv6 BGP routes.
    step(
        &[
            "-6", "route", "add", q6, "via", "fe80::2", "dev", &dev, "metric", "1",
        ],
        q6,
        "forward fe80::2",
    );

    // A route through a group of next-hop objects (as FRR installs
    // them) follows the objects.
    let g = "198.19.65.0/24";
    lab.ip(&[
        "nexthop",
        "add",
        "id",
        "1",
        "via",
        "198.18.0.2",
        "dev",
        &dev,
    ]);
    lab.ip(&[
        "nexthop",
        "add",
        "id",
        "2",
        "via",
        "198.18.0.3",
        "dev",
        &dev,
    ]);
    lab.ip(&["nexthop", "add", "id", "10", "group", "1/2"]);
    step(
        &["route", "add", g, "nhid", "10"],
        g,
        "forward 198.18.0.2,198.18.0.3",
    );
    step(
        &[
            "nexthop",
            "replace",
            "id",
            "2",
            "via",
            "198.18.0.4",
            "dev",
            &dev,
        ],
        g,
        "forward 198.18.0.2,198.18.0.4",
    );
    step(&["nexthop", "del", "id", "1"], g, "forward 198.18.0.4");
    step(&["nexthop", "del", "id", "2"], g, "-");

    // An interface that goes down takes its routes with it, and the
    // kernel says nothing about them (IPv4): the mirror dumps again.
    let d = "198.19.66.0/24";
    step(
        &["route", "add", d, "via", "198.18.0.2", "dev", &dev],
        d,
        "forward 198.18.0.2",
    );
    step(&["link", "set", &dev, "down"], d, "-");
    lab.ip(&["link", "set", &dev, "up"]);
    let stats = lab.stop();
    dataplane::assert_accounting(&stats);
}

/// Defect 2: kernel routes are judged like configured ones. A route for
/// the router's own address, one inside its connected subnet, one via
/// the router itself and a drop route over its own IPv6 address are
/// refused (counted, the reason logged); the local and connected routes
/// stay, also when the kernel deletes its routes again.
#[test]
fn kernel_routes_cannot_take_the_routers_own() {
    if !testbed::require_root("kernel mirror: the router's own routes") {
        return;
    }
    let lab = Lab::start("own");
    let dev = lab.port.clone();
    let skipped = |lab: &Lab| {
        ctl(&lab.sock, Request::Stats).unwrap()["control_plane"]["kernel_sync"]["skipped"]
            .as_u64()
            .unwrap()
    };
    let before = skipped(&lab);
    let routes: [&[&str]; 4] = [
        &[
            "route",
            "add",
            "198.18.0.1/32",
            "via",
            "198.18.0.2",
            "dev",
            &dev,
        ],
        &[
            "route",
            "add",
            "198.18.0.128/25",
            "via",
            "198.18.0.2",
            "dev",
            &dev,
        ],
        &[
            "route",
            "add",
            "198.19.70.0/24",
            "via",
            "198.18.0.1",
            "dev",
            &dev,
        ],
        &["-6", "route", "add", "blackhole", "2001:2::1/128"],
    ];
    // The log says why, at most once a second: the start's lines first.
    std::thread::sleep(Duration::from_millis(1100));
    for r in routes {
        lab.ip(r);
    }
    // A route after them that is taken: all before it were judged.
    lab.ip(&[
        "route",
        "add",
        "198.19.71.0/24",
        "via",
        "198.18.0.2",
        "dev",
        &dev,
    ]);
    expect(&lab, "198.19.71.0/24", "forward 198.18.0.2", "a good route");
    for (p, want) in [
        ("198.18.0.1/32", "local"),
        ("198.18.0.0/24", "connected"),
        ("2001:2::1/128", "local"),
        ("198.18.0.128/25", "-"),
        ("198.19.70.0/24", "-"),
    ] {
        assert_eq!(lab.shown(p), want, "{p}");
    }
    assert!(skipped(&lab) >= before + 4, "{}", skipped(&lab));
    let log = lab.router.as_ref().unwrap().log();
    assert!(
        log.contains("kernel route refused: route 198.18.0.1/32: prefix: 198.18.0.1 is the router's own address"),
        "{log}"
    );
    // The kernel deletes them: the router's own routes stay.
    lab.ip(&["route", "del", "198.18.0.1/32"]);
    lab.ip(&["route", "del", "198.18.0.128/25"]);
    lab.ip(&["-6", "route", "del", "blackhole", "2001:2::1/128"]);
    lab.ip(&["route", "del", "198.19.71.0/24"]);
    expect(&lab, "198.19.71.0/24", "-", "deletes");
    assert_eq!(lab.shown("198.18.0.1/32"), "local");
    assert_eq!(lab.shown("2001:2::1/128"), "local");
    assert_eq!(lab.shown("198.18.0.0/24"), "connected");
    lab.stop();
}

/// The randomised mirror test's prefixes: 12 IPv4 /24s and 12 IPv6 /64s.
fn prefixes() -> Vec<(String, String)> {
    let v4 = (0..12).map(|i| {
        (
            format!("198.19.{}.0/24", 100 + i),
            format!("198.19.{}.1", 100 + i),
        )
    });
    let v6 = (0..12).map(|i| {
        (
            format!("2001:2:0:{:x}::/64", 0x100 + i),
            format!("2001:2:0:{:x}::1", 0x100 + i),
        )
    });
    v4.chain(v6).collect()
}

/// One random kernel operation on `prefix` (`v6`: an IPv6 one), as an
/// `ip -batch` line.
fn random_op(rng: &mut SmallRng, prefix: &str, v6: bool, dev: &str) -> String {
    let gw = |rng: &mut SmallRng| {
        let n = rng.gen_range(2..7);
        if v6 {
            format!("2001:2::{n}")
        } else {
            format!("198.18.0.{n}")
        }
    };
    let metric = [10, 20, 30][rng.gen_range(0..3)];
    let base = if v6 { 20 } else { 0 };
    let what = match rng.gen_range(0..10) {
        0..=2 => format!("via {} dev {dev}", gw(rng)),
        3 => {
            let mut hops: Vec<String> = (0..rng.gen_range(2..4)).map(|_| gw(rng)).collect();
            hops.sort();
            hops.dedup();
            hops.iter()
                .map(|h| format!("nexthop via {h} dev {dev}"))
                .collect::<Vec<_>>()
                .join(" ")
        }
        // Singles 1-4 (+20 for IPv6), groups 11-13, 5 a blackhole.
        4 => {
            let id = match rng.gen_range(0..3) {
                0 => base + rng.gen_range(1..5),
                1 => base + rng.gen_range(11..14),
                _ if !v6 => 5,
                _ => base + 11,
            };
            format!("nhid {id}")
        }
        5 => "blackhole".into(),
        6 => "unreachable".into(),
        7 => "prohibit".into(),
        8 => format!("dev {dev}"),
        _ => format!("via {} dev {dev}", gw(rng)),
    };
    // Types go before the prefix in `ip route`, next hops after.
    let (kind, rest) = match what.as_str() {
        "blackhole" | "unreachable" | "prohibit" => (format!("{what} "), String::new()),
        _ => (String::new(), format!(" {what}")),
    };
    // `ip -batch` knows the family from the prefix; next hops go last.
    let m = format!("metric {metric}");
    match rng.gen_range(0..20) {
        0..=6 => format!("route add {kind}{prefix} {m}{rest}"),
        7..=11 => format!("route replace {kind}{prefix} {m}{rest}"),
        12..=13 if v6 => format!("route append {prefix} {m} via {} dev {dev}", gw(rng)),
        12..=13 => format!("route prepend {kind}{prefix} {m}{rest}"),
        14..=15 => format!("route del {prefix} {m} via {} dev {dev}", gw(rng)),
        16..=18 => format!("route del {prefix} {m}"),
        // Next-hop objects change under the routes.
        _ => {
            let id = base + rng.gen_range(1..5);
            match rng.gen_range(0..4) {
                0 => format!("nexthop del id {id}"),
                1 => {
                    let mut m: Vec<u32> = (0..rng.gen_range(1..4))
                        .map(|_| base + rng.gen_range(1..5))
                        .collect();
                    m.sort();
                    m.dedup();
                    let m: Vec<String> = m.iter().map(u32::to_string).collect();
                    format!(
                        "nexthop replace id {} group {}",
                        base + rng.gen_range(11..14),
                        m.join("/")
                    )
                }
                _ => format!("nexthop replace id {id} via {} dev {dev}", gw(rng)),
            }
        }
    }
}

/// What the kernel uses for `addr`'s IPv4 prefix, as [`summary`] says it
/// for softrouter's route (`ip route get fibmatch`, the kernel's own
/// lookup): a drop route's type is in its error (EINVAL blackhole,
/// EHOSTUNREACH unreachable, EACCES prohibit: all dropped, softrouter's
/// "blackhole"), no route is ENETUNREACH.
fn kernel_choice_v4(ns: &str, addr: &str) -> String {
    let out = Command::new("ip")
        .args(["-n", ns, "-j", "route", "get", "fibmatch", addr])
        .output()
        .unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return match err.trim().trim_start_matches("RTNETLINK answers: ") {
            "Invalid argument" | "No route to host" | "Permission denied" => "blackhole",
            "Network is unreachable" => "-",
            other => panic!("ip route get fibmatch {addr}: {other}"),
        }
        .into();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    kernel_summary(&v[0])
}

/// What the kernel uses for each IPv6 prefix: the first route of the
/// lowest metric in `ip -6 route show` (the kernel's order). Not `ip
/// route get fibmatch`: for routes through next-hop objects, kernel 6.18
/// answers it with another prefix's route using the same object.
fn kernel_choices_v6(ns: &str) -> std::collections::HashMap<String, String> {
    let out = Command::new("ip")
        .args(["-n", ns, "-j", "-6", "route", "show"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut best: std::collections::HashMap<String, (u64, String)> = Default::default();
    for r in v.as_array().unwrap() {
        let dst = r["dst"].as_str().unwrap_or("").to_string();
        let metric = r["metric"].as_u64().unwrap_or(0);
        if best.get(&dst).is_none_or(|(m, _)| metric < *m) {
            best.insert(dst, (metric, kernel_summary(r)));
        }
    }
    best.into_iter().map(|(k, (_, s))| (k, s)).collect()
}

/// A kernel route (`ip -j route`) as [`summary`] says softrouter's: its
/// type, or its gateways; "-" for one without a gateway (`dev X`, which
/// softrouter does not take).
fn kernel_summary(r: &serde_json::Value) -> String {
    if let Some("blackhole" | "unreachable" | "prohibit") = r["type"].as_str() {
        return "blackhole".into();
    }
    let mut gws: BTreeSet<String> = BTreeSet::new();
    if let Some(g) = r["gateway"].as_str() {
        gws.insert(g.into());
    }
    for h in r["nexthops"].as_array().into_iter().flatten() {
        match h["gateway"].as_str() {
            Some(g) => gws.insert(g.into()),
            None => return "-".into(),
        };
    }
    if gws.is_empty() {
        return "-".into();
    }
    format!("forward {}", gws.into_iter().collect::<Vec<_>>().join(","))
}

/// 10,000 random kernel route operations (both families; add, replace,
/// prepend/append, delete whole or one next hop; metrics; unicast,
/// multipath, blackhole, unreachable, prohibit, on-link; next-hop
/// objects and groups changed and removed under their routes) in batches
/// of 100: after each, softrouter's route for every prefix is what the
/// kernel uses. `MIRROR_SEED=N` repeats a run; the seed is printed.
#[test]
fn random_kernel_operations_are_mirrored_exactly() {
    if !testbed::require_root("kernel mirror: random operations") {
        return;
    }
    const OPS: usize = 10_000;
    const BATCH: usize = 100;
    let seed: u64 = std::env::var("MIRROR_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("random mirror test: MIRROR_SEED={seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let lab = Lab::start("random");
    let dev = lab.port.clone();
    // The objects routes refer to (families apart: 1-5, 11-13 IPv4; 21-24,
    // 31-33 IPv6).
    for (base, net) in [(0, "198.18.0."), (20, "2001:2::")] {
        for i in 1..5 {
            lab.ip(&[
                "nexthop",
                "add",
                "id",
                &(base + i).to_string(),
                "via",
                &format!("{net}{}", i + 1),
                "dev",
                &dev,
            ]);
        }
        for g in 11..14 {
            lab.ip(&[
                "nexthop",
                "add",
                "id",
                &(base + g).to_string(),
                "group",
                &format!("{}/{}", base + 1, base + 2),
            ]);
        }
    }
    lab.ip(&["nexthop", "add", "id", "5", "blackhole"]);
    let prefixes = prefixes();
    let batch = lab.dir.join("ops.batch");
    let t = Instant::now();
    let mut compared = 0;
    let mut history = Vec::new();
    for b in 0..OPS / BATCH {
        let mut lines = Vec::new();
        for _ in 0..BATCH {
            let (p, _) = &prefixes[rng.gen_range(0..prefixes.len())];
            lines.push(random_op(&mut rng, p, p.contains(':'), &dev));
        }
        // A marker after the batch: once softrouter has it, it has the
        // batch (one thread applies events in order).
        let marker = format!("198.18.0.{}", 10 + b % 200);
        lines.push(format!(
            "route replace 198.19.201.0/24 via {marker} dev {dev}"
        ));
        std::fs::write(&batch, lines.join("\n") + "\n").unwrap();
        let out = Command::new("ip")
            .args(["-n", &lab.ns, "-force", "-batch", batch.to_str().unwrap()])
            .output()
            .unwrap();
        // What happened to each prefix, for a failure's message.
        let errors = String::from_utf8_lossy(&out.stderr);
        let failed: BTreeSet<usize> = errors
            .lines()
            .filter_map(|l| l.strip_prefix("Command failed "))
            .filter_map(|l| l.rsplit_once(':')?.1.trim().parse().ok())
            .collect();
        for (i, l) in lines.iter().enumerate() {
            let ok = if failed.contains(&(i + 1)) {
                "failed"
            } else {
                "ok"
            };
            history.push(format!("batch {b}: {l} ({ok})"));
        }
        let want = format!("forward {marker}");
        expect(&lab, "198.19.201.0/24", &want, "the batch's marker");
        let v6 = kernel_choices_v6(&lab.ns);
        for (prefix, addr) in &prefixes {
            let k = &if prefix.contains(':') {
                v6.get(prefix.as_str())
                    .cloned()
                    .unwrap_or_else(|| "-".into())
            } else {
                kernel_choice_v4(&lab.ns, addr)
            };
            let ours = lab.shown(prefix);
            assert_eq!(
                &ours,
                k,
                "MIRROR_SEED={seed}: after batch {b}, {prefix}: softrouter {ours:?}, the kernel {k:?}\n{prefix} and next-hop objects:\n{}\nkernel table:\n{}{}",
                history
                    .iter()
                    .filter(|l| l.contains(&format!(" {prefix} ")) || l.contains("nexthop "))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n"),
                lab.ns().ip(&["route", "show"]).unwrap_or_default(),
                lab.ns().ip(&["-6", "route", "show"]).unwrap_or_default(),
            );
            compared += 1;
        }
    }
    eprintln!(
        "random mirror test: {OPS} operations ({} taken by the kernel, the rest refused by it), {compared} prefix comparisons in {:.1} s",
        history.iter().filter(|l| l.ends_with("(ok)")).count() - OPS / BATCH,
        t.elapsed().as_secs_f64()
    );
    let stats = lab.stop();
    dataplane::assert_accounting(&stats);
}
