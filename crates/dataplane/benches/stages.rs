//! `bench/l3fwd/compare.sh`'s softrouter side in one process: one worker,
//! two `mem` ports, compare.sh's routes and static neighbours, its 4,096
//! frames (64 B on the wire, `gen_pcap.py`'s flows to 198.18.1.0/24), or
//! with `--table full` the IPv4 half of the shared full table with the
//! destinations spread over it. Prints Mpps and cycles per packet (the
//! worker's stage counters and the TSC over the window) for each round:
//! a quick, repeatable look at the pipeline's per-packet cost without
//! building the binary and DPDK.
//!
//! `cargo bench -p softrouter-dataplane --bench stages -- [--table full]
//! [--seconds S] [--rounds R] [--budget B]`
//!
//! `--budget` is the frames a poll round may take per RX queue: 64 by
//! default, the router's default `[router] budget` and so what compare.sh's
//! softrouter runs with (this bench used 256 until issue 23's third
//! session, which hid part of a round's fixed cost).
//!
//! `cargo test` builds and runs benches too (`--all-targets`), without the
//! `--bench` argument `cargo bench` passes: then this is a smoke test of
//! a fraction of a second (one short round, every frame must be
//! forwarded), so the test suite does not spend seconds measuring.

use dataplane::{Router, Worker};
use netio::mem::MemPort;
use netio::pcap_file::Capture;
use netio::{Pool, Port, PortInfo};
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

const TABLE: &str = "/work/shared/data/routes/full-table.txt.gz";
const FLOWS: usize = 4096;

/// run_compare.py's SR_CONFIG, without the `[router]` section.
const CONFIG: &str = r#"
[[port]]
name = "p0"
driver = "mem"
mac = "02:00:00:00:00:10"
addresses = ["198.18.255.1/24"]

[[port]]
name = "p1"
driver = "mem"
mac = "02:00:00:00:00:11"
addresses = ["198.19.0.1/24"]

[[route]]
prefix = "198.18.0.0/24"
via = ["198.18.255.2"]

[[route]]
prefix = "198.18.1.0/24"
via = ["198.19.0.2"]

[[neighbor]]
address = "198.18.255.2"
mac = "02:00:00:00:00:21"
port = "p0"

[[neighbor]]
address = "198.19.0.2"
mac = "02:00:00:00:00:22"
port = "p1"
"#;

/// `gen_pcap.py`'s frame `i` to `dst`.
fn frame(i: usize, dst: [u8; 4]) -> Vec<u8> {
    let src = [198, 51, (i >> 8) as u8, 1 + (i % 253) as u8];
    let (sport, dport) = (1024 + (i * 13) % 60000, 1024 + (i * 31) % 60000);
    let mut f = vec![2, 0, 0, 0, 0, 0x10, 2, 0, 0, 0, 0, 1, 8, 0];
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&46u16.to_be_bytes());
    ip[4..6].copy_from_slice(&(i as u16).to_be_bytes());
    ip[6] = 0x40;
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&src);
    ip[16..20].copy_from_slice(&dst);
    let mut sum: u32 = ip
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&(sport as u16).to_be_bytes());
    f.extend_from_slice(&(dport as u16).to_be_bytes());
    f.extend_from_slice(&26u16.to_be_bytes());
    f.extend_from_slice(&[0; 20]);
    f
}

/// The full table's IPv4 routes as a routes file (every route via p1's
/// neighbour) and `FLOWS` destinations, each a random host of a random
/// prefix (seeded), as `full_table.py` does.
fn full_table(dir: &Path) -> Option<(String, Vec<[u8; 4]>)> {
    let prefixes = fib::routes_file::load_prefixes(TABLE).ok()?;
    let v4: Vec<fib::Prefix4> = prefixes
        .iter()
        .filter_map(|p| match p {
            fib::Prefix::V4(p) => Some(*p),
            _ => None,
        })
        .filter(|p| p.len >= 8)
        .collect();
    let path = dir.join("stages-routes.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).ok()?);
    for p in &v4 {
        writeln!(f, "{p} 198.19.0.2").ok()?;
    }
    f.flush().ok()?;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(23);
    let dsts = (0..FLOWS)
        .map(|_| {
            let p = v4[rng.gen_range(0..v4.len())];
            let host = rng.gen::<u32>().checked_shr(u32::from(p.len)).unwrap_or(0);
            (u32::from(p.addr) | host).to_be_bytes()
        })
        .collect();
    Some((
        format!("\n[routes_file]\npath = \"{}\"\n", path.display()),
        dsts,
    ))
}

fn setup(full: bool) -> Option<(Router, Worker)> {
    let dir = std::env::temp_dir().join(format!("sr-stages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let (extra, dsts) = if full {
        full_table(&dir)?
    } else {
        let d = (0..FLOWS)
            .map(|i| [198, 18, 1, 1 + ((i * 7) % 253) as u8])
            .collect();
        (String::new(), d)
    };
    let text = format!("{CONFIG}{extra}");
    let cfg = config::parse(&text, Path::new("stages.toml")).unwrap();
    let infos: Vec<PortInfo> = cfg
        .ports
        .iter()
        .map(|p| PortInfo {
            name: p.name.clone(),
            mac: p.mac.unwrap(),
            mtu: 1500,
            rx_queues: 1,
        })
        .collect();
    let router = Router::new(&cfg, &infos).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mut cap = Capture::new();
    for (i, d) in dsts.iter().enumerate() {
        cap.push(&frame(i, *d));
    }
    let p0 = MemPort::from_capture("p0", infos[0].mac, 1500, cap, 1);
    let p1 = MemPort::from_capture("p1", infos[1].mac, 1500, Capture::new(), 1);
    let mut pool = Pool::new(4096, 2048).unwrap();
    let rx = vec![
        (0, p0.open_rx(0, &mut pool).unwrap()),
        (1, p1.open_rx(0, &mut pool).unwrap()),
    ];
    let tx = vec![
        p0.open_tx(0, &mut pool).unwrap(),
        p1.open_tx(0, &mut pool).unwrap(),
    ];
    let w = Worker::new(0, router.shared(), pool, rx, tx);
    Some((router, w))
}

/// Nanoseconds this thread has run on a CPU (schedstat): the window's
/// cycles per packet counting only that time are much steadier on a
/// shared machine than the wall-clock ones.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn arg(name: &str) -> Option<String> {
    let a: Vec<String> = std::env::args().collect();
    a.iter()
        .position(|x| x == name)
        .and_then(|i| a.get(i + 1).cloned())
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let full = arg("--table").as_deref() == Some("full");
    let budget: u32 = arg("--budget").and_then(|s| s.parse().ok()).unwrap_or(64);
    let (seconds, rounds, warmup) = if bench {
        let s = arg("--seconds").and_then(|s| s.parse().ok()).unwrap_or(3.0);
        let r = arg("--rounds").and_then(|s| s.parse().ok()).unwrap_or(3);
        (s, r, Duration::from_millis(500))
    } else {
        (0.05, 1, Duration::from_millis(20))
    };
    let Some((_router, mut w)) = setup(full) else {
        eprintln!("{TABLE} missing: skipping");
        return;
    };
    let s = w.stats();
    let totals = || {
        let c = [
            &s.cycles_rx,
            &s.cycles_process,
            &s.cycles_tx,
            &s.cycles_packets,
        ];
        c.map(|c| c.get())
    };
    let forwarded = || s.ports.iter().map(|p| p.forwarded.get()).sum::<u64>();
    let received = || s.ports.iter().map(|p| p.rx_packets.get()).sum::<u64>();
    // Warm-up: caches, branch predictors, the pool's free list.
    let t = Instant::now();
    while t.elapsed() < warmup {
        w.poll_once(budget);
    }
    let table = if full { "full" } else { "small" };
    for r in 0..rounds {
        let (c0, f0, r0, cpu0) = (totals(), forwarded(), received(), cpu_ns());
        let (tsc0, t0) = (dataplane::tsc::now(), Instant::now());
        // Each round's own cost: a round the scheduler did not interrupt
        // costs what the pipeline costs, so the median over rounds barely
        // moves with the machine's load (the window's figures do).
        let mut per_round: Vec<f64> = Vec::with_capacity(1 << 22);
        while t0.elapsed().as_secs_f64() < seconds {
            for _ in 0..64 {
                let t = dataplane::tsc::now();
                let n = w.poll_once(budget);
                let c = dataplane::tsc::now() - t;
                if n > 0 && per_round.len() < per_round.capacity() {
                    per_round.push(c as f64 / n as f64);
                }
            }
        }
        per_round.sort_by(f64::total_cmp);
        let pct = |q: f64| per_round[((per_round.len() - 1) as f64 * q) as usize];
        let (tsc1, dt) = (dataplane::tsc::now(), t0.elapsed());
        let (c1, f1, r1, cpu1) = (totals(), forwarded(), received(), cpu_ns());
        let share = (cpu1 - cpu0) as f64 / dt.as_nanos() as f64;
        // The stage counters cover the worker's sampled rounds only.
        let sampled = (c1[3] - c0[3]).max(1) as f64;
        let per = |i: usize| (c1[i] - c0[i]) as f64 / sampled;
        let (fw, rx) = (f1 - f0, r1 - r0);
        let pk = rx.max(1) as f64;
        println!(
            "stages table={table} round={r} cyc_round_p10={:.1} cyc_round_med={:.1} mpps={:.2} cyc_wall={:.1} cyc_cpu={:.1} cpu_share={share:.3} rx={:.1} process={:.1} tx={:.1} total={:.1} forwarded/received={:.4}",
            pct(0.1),
            pct(0.5),
            fw as f64 / dt.as_secs_f64() / 1e6,
            (tsc1 - tsc0) as f64 / pk,
            (tsc1 - tsc0) as f64 * share / pk,
            per(0),
            per(1),
            per(2),
            per(0) + per(1) + per(2),
            fw as f64 / pk,
        );
        assert!(
            bench || (fw > 0 && fw == rx),
            "smoke run: {fw} of {rx} frames forwarded"
        );
    }
}
