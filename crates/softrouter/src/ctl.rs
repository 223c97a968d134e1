//! `softrouter ctl`: talk to a running router over its control socket
//! (see the `control` crate), in the style of `birdc` and `grcli`: human
//! tables by default, the router's JSON with `--json`.
//!
//! Exit codes: 0 done; 1 the router refused or failed (its message is
//! printed); 2 bad arguments or no router to talk to.

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use control::protocol::{NeighView, RouteSummaryView, RouteView};
use control::{client, Request, Response};

#[derive(Args, Debug)]
pub struct CtlArgs {
    /// The router's control socket (anywhere on the line).
    #[arg(long, global = true, default_value = config::DEFAULT_CONTROL_SOCKET)]
    pub socket: PathBuf,
    /// Print the router's answer as JSON (anywhere on the line).
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub what: What,
}

#[derive(Subcommand, Debug)]
pub enum What {
    /// Routes: add, del, show, summary.
    #[command(subcommand)]
    Route(RouteCmd),
    /// Neighbours: show, add (static), del.
    #[command(subcommand)]
    Neigh(NeighCmd),
    /// Ports and their counters.
    #[command(subcommand)]
    Port(PortCmd),
    /// The statistics snapshot (the --stats-json document).
    Stats,
    /// Re-read the configuration file and apply what changed.
    Reload,
}

#[derive(Subcommand, Debug)]
pub enum RouteCmd {
    /// `route add PREFIX via NH [NH...]` (several next hops: ECMP).
    Add {
        prefix: String,
        /// `via` followed by the next hops.
        #[arg(num_args = 2.., value_name = "via NH")]
        via: Vec<String>,
    },
    /// `route del PREFIX`.
    Del { prefix: String },
    /// Every route, one prefix, or the route a packet to `--longest` takes.
    Show {
        prefix: Option<String>,
        #[arg(long, value_name = "ADDR", conflicts_with = "prefix")]
        longest: Option<IpAddr>,
        /// Only how many routes are installed (from counters: no walk of
        /// the table, unlike a full `route show`).
        #[arg(long, conflicts_with_all = ["prefix", "longest"])]
        count: bool,
    },
    /// Routes by family and by source, next hops in use (counters only).
    Summary,
}

#[derive(Subcommand, Debug)]
pub enum NeighCmd {
    Show,
    /// `neigh add ADDR MAC PORT`: a static neighbour.
    Add {
        address: IpAddr,
        mac: String,
        port: String,
    },
    Del {
        address: IpAddr,
    },
}

#[derive(Subcommand, Debug)]
pub enum PortCmd {
    Show,
}

/// The request `what` asks for, or a usage error.
pub fn request_of(what: What) -> Result<Request, String> {
    Ok(match what {
        What::Route(RouteCmd::Add { prefix, via }) => {
            let Some((kw, hops)) = via.split_first() else {
                return Err("route add PREFIX via NH [NH...]".into());
            };
            if kw != "via" {
                return Err(format!("route add {prefix}: expected `via`, not {kw:?}"));
            }
            let via = hops
                .iter()
                .map(|h| {
                    h.parse()
                        .map_err(|_| format!("route add {prefix}: {h:?} is not an IP address"))
                })
                .collect::<Result<_, _>>()?;
            Request::RouteAdd { prefix, via }
        }
        What::Route(RouteCmd::Del { prefix }) => Request::RouteDel { prefix },
        What::Route(RouteCmd::Show { count: true, .. }) | What::Route(RouteCmd::Summary) => {
            Request::RouteSummary
        }
        What::Route(RouteCmd::Show {
            prefix, longest, ..
        }) => Request::RouteShow { prefix, longest },
        What::Neigh(NeighCmd::Show) => Request::NeighShow,
        What::Neigh(NeighCmd::Add { address, mac, port }) => {
            Request::NeighAdd { address, mac, port }
        }
        What::Neigh(NeighCmd::Del { address }) => Request::NeighDel { address },
        What::Port(PortCmd::Show) => Request::PortShow,
        What::Stats => Request::Stats,
        What::Reload => Request::Reload,
    })
}

/// Run `softrouter ctl`.
pub fn run(args: CtlArgs) -> ExitCode {
    let count_only = matches!(args.what, What::Route(RouteCmd::Show { count: true, .. }));
    let request = match request_of(args.what) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("softrouter ctl: {e}");
            return ExitCode::from(2);
        }
    };
    let answer = match client::request(&args.socket, request.clone()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("softrouter ctl: {e:#}");
            return ExitCode::from(2);
        }
    };
    match answer {
        Response::Error { message } => {
            eprintln!("softrouter ctl: {message}");
            ExitCode::from(1)
        }
        Response::Ok { data } => {
            if count_only {
                let s: RouteSummaryView = serde_json::from_value(data).unwrap_or_default();
                let n = s.routes_v4 + s.routes_v6;
                if args.json {
                    println!("{}", serde_json::json!({ "count": n }));
                } else {
                    println!("{n}");
                }
            } else if args.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&data).unwrap_or_default()
                );
            } else {
                print!("{}", human(&request, &data));
            }
            ExitCode::SUCCESS
        }
    }
}

/// The answer to `request` as a table (what `--json` is not).
pub fn human(request: &Request, data: &serde_json::Value) -> String {
    let table = |rows: Vec<Vec<String>>| -> String {
        let n = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..n)
            .map(|c| {
                rows.iter()
                    .filter_map(|r| r.get(c))
                    .map(String::len)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        rows.iter()
            .map(|r| {
                let cells: Vec<String> = r
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
                    .collect();
                cells.join("  ").trim_end().to_string() + "\n"
            })
            .collect()
    };
    match request {
        Request::RouteShow { .. } => {
            let routes: Vec<RouteView> = serde_json::from_value(data.clone()).unwrap_or_default();
            let mut rows = vec![vec!["PREFIX".into(), "KIND".into(), "VIA".into()]];
            for r in routes {
                let via: Vec<String> = r
                    .via
                    .iter()
                    .map(|v| format!("{} ({})", v.address, v.port))
                    .collect();
                rows.push(vec![r.prefix, r.kind, via.join(", ")]);
            }
            table(rows)
        }
        Request::NeighShow => {
            let ns: Vec<NeighView> = serde_json::from_value(data.clone()).unwrap_or_default();
            let mut rows = vec![vec![
                "ADDRESS".into(),
                "PORT".into(),
                "STATE".into(),
                "MAC".into(),
                "ORIGIN".into(),
            ]];
            for n in ns {
                rows.push(vec![
                    n.address.to_string(),
                    n.port,
                    n.state,
                    n.mac.unwrap_or_else(|| "-".into()),
                    if n.dynamic { "dynamic" } else { "permanent" }.into(),
                ]);
            }
            table(rows)
        }
        Request::PortShow => {
            let ports: Vec<dataplane::report::PortReport> =
                serde_json::from_value(data.clone()).unwrap_or_default();
            // FORWARDED counts both tiers; BY XDP is the XDP tier's share
            // ("-" where it does not run).
            let mut rows = vec![[
                "PORT",
                "RX",
                "TX",
                "FORWARDED",
                "BY XDP",
                "PUNTED",
                "LOCAL",
                "DROPPED",
            ]
            .map(String::from)
            .to_vec()];
            for p in ports {
                let c = &p.counters;
                let dropped: u64 = c.drops.values().chain(c.output_drops.values()).sum();
                let tier = |f: fn(&dataplane::report::FastPathPort) -> u64| {
                    p.fast_path
                        .as_ref()
                        .map_or("-".into(), |t| f(t).to_string())
                };
                rows.push(vec![
                    p.name.clone(),
                    c.rx_packets.to_string(),
                    c.tx_packets.to_string(),
                    c.forwarded.to_string(),
                    tier(|t| t.forwarded),
                    tier(|t| t.punted_total()),
                    c.local.to_string(),
                    dropped.to_string(),
                ]);
            }
            table(rows)
        }
        Request::RouteSummary => {
            let s: RouteSummaryView = serde_json::from_value(data.clone()).unwrap_or_default();
            let other = (s.routes_v4 + s.routes_v6).saturating_sub(s.from_file + s.from_kernel);
            table(vec![
                vec!["routes".into(), (s.routes_v4 + s.routes_v6).to_string()],
                vec!["  IPv4".into(), s.routes_v4.to_string()],
                vec!["  IPv6".into(), s.routes_v6.to_string()],
                vec!["  from the file".into(), s.from_file.to_string()],
                vec!["  from the kernel".into(), s.from_kernel.to_string()],
                vec!["  connected, local, ctl".into(), other.to_string()],
                vec!["next hops in use".into(), s.next_hops.to_string()],
                vec![
                    "  retired, in grace".into(),
                    s.next_hops_retired.to_string(),
                ],
            ])
        }
        Request::Stats => stats_table(data, &table),
        Request::Reload => {
            let list = |k: &str| -> Vec<String> {
                serde_json::from_value(data[k].clone()).unwrap_or_default()
            };
            let (applied, restart) = (list("applied"), list("restart_needed"));
            let mut s = String::new();
            if applied.is_empty() {
                s.push_str("reloaded: no route or neighbour changed\n");
            }
            for a in applied {
                s.push_str(&format!("applied: {a}\n"));
            }
            for r in restart {
                s.push_str(&format!("needs a restart (kept as running): {r}\n"));
            }
            s
        }
        _ if data.is_null() => String::new(),
        _ => format!(
            "{}\n",
            serde_json::to_string_pretty(data).unwrap_or_default()
        ),
    }
}

/// `ctl stats` without `--json`: the totals, then the ports' table.
fn stats_table(data: &serde_json::Value, table: &dyn Fn(Vec<Vec<String>>) -> String) -> String {
    if data.is_null() {
        return String::new();
    }
    let Ok(r) = serde_json::from_value::<dataplane::report::Report>(data.clone()) else {
        // Another router version's document: shown as it came.
        return format!(
            "{}\n",
            serde_json::to_string_pretty(data).unwrap_or_default()
        );
    };
    let fwd: u64 = r.ports.iter().map(|p| p.counters.forwarded).sum();
    let dropped: u64 = r.drops.values().sum();
    let mut rows = vec![
        vec!["version".into(), r.version.clone()],
        vec!["uptime".into(), format!("{:.1} s", r.elapsed_s)],
        vec![
            "workers".into(),
            format!("{} ({}, fast path {})", r.workers, r.mode, r.fast_path),
        ],
        vec!["forwarded".into(), fwd.to_string()],
        vec!["dropped".into(), dropped.to_string()],
        vec![
            "cycles/packet".into(),
            format!(
                "{:.1} (rx {:.1}, process {:.1}, tx {:.1})",
                r.cycles_per_packet.total,
                r.cycles_per_packet.rx,
                r.cycles_per_packet.process,
                r.cycles_per_packet.tx
            ),
        ],
    ];
    if let Some(cp) = &r.control_plane {
        rows.push(vec![
            "routes".into(),
            format!("{} IPv4, {} IPv6", cp.routes_v4, cp.routes_v6),
        ]);
        let n: Vec<String> = cp
            .neighbors
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        rows.push(vec!["neighbours".into(), n.join(", ")]);
    }
    for (reason, n) in &r.drops {
        rows.push(vec![format!("  drop {reason}"), n.to_string()]);
    }
    for n in &r.notes {
        rows.push(vec!["note".into(), n.clone()]);
    }
    let ports = serde_json::to_value(&r.ports).unwrap_or_default();
    format!("{}\n{}", table(rows), human(&Request::PortShow, &ports))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Top {
        #[command(flatten)]
        ctl: CtlArgs,
    }

    fn parse(args: &[&str]) -> Result<Request, String> {
        let top = Top::try_parse_from(std::iter::once("ctl").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        request_of(top.ctl.what)
    }

    #[test]
    fn command_lines_become_requests() {
        assert_eq!(
            parse(&[
                "route",
                "add",
                "198.19.0.0/16",
                "via",
                "198.18.1.2",
                "198.18.1.3"
            ]),
            Ok(Request::RouteAdd {
                prefix: "198.19.0.0/16".into(),
                via: vec!["198.18.1.2".parse().unwrap(), "198.18.1.3".parse().unwrap()],
            })
        );
        assert_eq!(
            parse(&["route", "show", "--longest", "2001:2::1"]),
            Ok(Request::RouteShow {
                prefix: None,
                longest: Some("2001:2::1".parse().unwrap())
            })
        );
        assert_eq!(
            parse(&["neigh", "add", "198.18.1.2", "02:00:00:00:00:01", "out"]),
            Ok(Request::NeighAdd {
                address: "198.18.1.2".parse().unwrap(),
                mac: "02:00:00:00:00:01".into(),
                port: "out".into()
            })
        );
        assert_eq!(parse(&["reload"]), Ok(Request::Reload));
        let e = parse(&["route", "add", "198.19.0.0/16", "through", "198.18.1.2"]).unwrap_err();
        assert!(e.contains("expected `via`"), "{e}");
        let e = parse(&["route", "add", "198.19.0.0/16", "via", "gw"]).unwrap_err();
        assert!(e.contains("\"gw\" is not an IP address"), "{e}");
        assert!(parse(&["route", "add", "198.19.0.0/16"]).is_err());
    }

    /// A table's words, one line each, single spaces.
    fn squash(t: &str) -> String {
        t.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .map(|l| l + "\n")
            .collect()
    }

    fn parse_args(args: &[&str]) -> CtlArgs {
        Top::try_parse_from(std::iter::once("ctl").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .ctl
    }

    #[test]
    fn global_flags_anywhere_on_the_line() {
        for line in [
            &["--json", "--socket", "/tmp/s", "route", "show"][..],
            &["route", "--json", "show", "--socket", "/tmp/s"],
            &["route", "show", "--socket", "/tmp/s", "--json"],
        ] {
            let a = parse_args(line);
            assert!(a.json, "{line:?}");
            assert_eq!(a.socket, PathBuf::from("/tmp/s"), "{line:?}");
        }
        let a = parse_args(&["stats"]);
        assert!(!a.json);
        assert_eq!(a.socket, PathBuf::from(config::DEFAULT_CONTROL_SOCKET));
    }

    #[test]
    fn count_and_summary_ask_for_counters_only() {
        assert_eq!(
            parse(&["route", "show", "--count"]),
            Ok(Request::RouteSummary)
        );
        assert_eq!(parse(&["route", "summary"]), Ok(Request::RouteSummary));
        assert!(parse(&["route", "show", "198.19.0.0/16", "--count"]).is_err());
        let s = serde_json::json!({"routes_v4": 5, "routes_v6": 2, "from_file": 3,
            "from_kernel": 1, "next_hops": 4, "next_hops_retired": 0});
        let t = squash(&human(&Request::RouteSummary, &s));
        assert!(t.starts_with("routes 7\nIPv4 5\nIPv6 2\n"), "{t}");
        assert!(t.contains("\nconnected, local, ctl 3\n"), "{t}");
        assert!(t.contains("\nnext hops in use 4\n"), "{t}");
    }

    #[test]
    fn stats_are_a_table_unless_json() {
        let w = dataplane::WorkerStats::new(0, 1, &[(0, 0)]);
        let r = dataplane::report::Report {
            version: "0.1.0".into(),
            elapsed_s: 2.0,
            workers: 1,
            mode: "poll".into(),
            fast_path: "off".into(),
            ports: vec![dataplane::report::PortReport::new(
                "in".into(),
                Default::default(),
            )],
            drops: [("no_route".to_string(), 3u64)].into(),
            cycles_per_packet: dataplane::report::Cycles {
                rx: 1.0,
                process: 2.0,
                tx: 3.0,
                total: 6.0,
            },
            sleeps: 0,
            notes: vec![],
            memory: vec![],
            totals: w.snapshot(),
            per_worker: vec![w.snapshot()],
            control_plane: None,
        };
        let t = squash(&human(&Request::Stats, &serde_json::to_value(&r).unwrap()));
        assert!(t.starts_with("version 0.1.0\n"), "{t}");
        assert!(t.contains("\ndropped 3\n"), "{t}");
        assert!(t.contains("\ndrop no_route 3\n"), "{t}");
        assert!(t.contains("\nPORT RX TX"), "{t}");
        assert!(!t.contains('{'), "{t}");
    }

    #[test]
    fn tables_line_up() {
        let routes = serde_json::json!([
            {"prefix": "198.19.0.0/16", "kind": "forward",
             "via": [{"address": "198.18.1.2", "port": "out"}, {"address": "198.18.1.3", "port": "out"}]},
            {"prefix": "198.18.1.1/32", "kind": "local"}
        ]);
        let t = human(
            &Request::RouteShow {
                prefix: None,
                longest: None,
            },
            &routes,
        );
        assert_eq!(
            t,
            "PREFIX         KIND     VIA\n\
             198.19.0.0/16  forward  198.18.1.2 (out), 198.18.1.3 (out)\n\
             198.18.1.1/32  local\n"
        );
        assert_eq!(human(&Request::Stats, &serde_json::Value::Null), "");
        let reload = serde_json::json!({
            "applied": ["route 198.19.0.0/16 added"],
            "restart_needed": ["[router] workers"]
        });
        assert_eq!(
            human(&Request::Reload, &reload),
            "applied: route 198.19.0.0/16 added\n\
             needs a restart (kept as running): [router] workers\n"
        );
    }
}
