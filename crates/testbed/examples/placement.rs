//! The placement probe from the command line, for scripts that measure
//! outside the bench (bench/floor/floor.sh): how far apart the host placed
//! two CPUs right now (a cache line's round trip between them), and
//! waiting until it places them near, as the bench does before a trial.
//!
//! ```text
//! placement A B                   one probe: "round_trip_ns=61 near=1"
//! placement A B --wait-near S     probe until near, at most S seconds
//! placement A B --watch S         a probe every 0.25 s for S seconds
//! ```
//!
//! Exit status 0 when the last probe was near, 1 when far, 2 on bad
//! arguments or when the probe could not run.

use std::time::{Duration, Instant};

use testbed::placement::{fastest, round_trip, wait_until_near};

fn line(rt: Option<Duration>, near: bool) -> String {
    format!(
        "round_trip_ns={} near={} fastest_ns={}",
        rt.map_or("-".into(), |d| d.as_nanos().to_string()),
        u8::from(near),
        fastest().map_or("-".into(), |d| d.as_nanos().to_string()),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || -> ! {
        eprintln!("usage: placement A B [--wait-near SECONDS | --watch SECONDS]");
        std::process::exit(2)
    };
    let cpu = |i: usize| -> usize {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| usage())
    };
    let (a, b) = (cpu(0), cpu(1));
    let secs = || -> Duration {
        args.get(3)
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .unwrap_or_else(|| usage())
    };
    // One probe, printed: whether near (`None`: it could not run).
    let probe = || {
        let rt = round_trip(a, b);
        let near = rt.is_some_and(testbed::placement::is_near);
        println!("{}", line(rt, near));
        rt.map(|_| near)
    };
    let near = match args.get(2).map(String::as_str) {
        None => probe(),
        Some("--wait-near") => {
            let p = wait_until_near(a, b, secs());
            println!(
                "{} waited_s={:.2}",
                line(p.round_trip, p.near),
                p.waited.as_secs_f64()
            );
            p.round_trip.map(|_| p.near)
        }
        Some("--watch") => {
            let (end, mut last) = (Instant::now() + secs(), None);
            while Instant::now() < end {
                last = probe();
                std::thread::sleep(Duration::from_millis(250));
            }
            last
        }
        Some(_) => usage(),
    };
    std::process::exit(match near {
        Some(true) => 0,
        Some(false) => 1,
        None => 2,
    })
}
