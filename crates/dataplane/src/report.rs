//! The statistics file's schema, `schema::report` (a crate of its own, so
//! that its readers need no datapath). Named here too so that its writer's
//! paths (`dataplane::report::Report`, in softrouter) stay as they were;
//! the test below checks the file against the datapath's accounting.

pub use schema::report::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::WorkerStats;
    use crate::DropReason;

    /// What is written reads back as the same report, and the names the
    /// bench and scripts rely on are where the module says.
    #[test]
    fn a_written_report_reads_back() {
        let w = WorkerStats::new(0, 2, &[(0, 0)]);
        w.ports[0].rx_packets.add(5);
        w.ports[0].forwarded.add(4);
        w.drop_on(0, DropReason::NoRoute, 1);
        w.ports[1].tx_packets.add(4);
        w.cycles_rx.add(100);
        w.cycles_packets.add(5);
        let s = w.snapshot();
        let r = Report {
            control_plane: None,
            memory: vec![],
            version: "0.1.0".into(),
            elapsed_s: 1.25,
            workers: 1,
            mode: "poll".into(),
            fast_path: "off".into(),
            ports: vec![
                PortReport::new("p0".into(), s.ports[0].clone()),
                PortReport::new("p1".into(), s.ports[1].clone()),
            ],
            drops: [("no_route".to_string(), 1)].into(),
            cycles_per_packet: Cycles {
                rx: 20.0,
                process: 0.0,
                tx: 0.0,
                total: 20.0,
            },
            sleeps: 3,
            notes: vec![],
            totals: s.clone(),
            per_worker: vec![s],
        };
        let text = serde_json::to_string_pretty(&r).unwrap();
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["ports"][0]["name"], "p0");
        assert_eq!(v["ports"][1]["tx_packets"], 4);
        assert_eq!(v["drops"]["no_route"], 1);
        assert_eq!(v["totals"]["forwarded"], 4);
        assert_eq!(v["totals"]["cycles"]["rx"], 100);
        assert_eq!(v["cycles_per_packet"]["total"], 20.0);
        crate::assert_accounting(&v);
    }
}
