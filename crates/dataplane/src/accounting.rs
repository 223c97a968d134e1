//! The accounting identities between the counters, and their check on
//! statistics JSON.
//!
//! # Per port
//!
//! Every frame that reaches a port ends in exactly one bucket of that
//! (input) port:
//!
//! ```text
//! received = rx_packets + port-side input drops
//! received = forwarded + local + held + sum(drops[r])
//! ```
//!
//! * `rx_packets`: frames the port's queues handed to a worker;
//! * port-side input drops: frames that reached the port but never a
//!   worker, counted by the queue or the kernel
//!   ([`netio::CounterKind::RxDrop`]: `rx_oversize`, `xdp_rx_ring_full`,
//!   `afpacket_tp_drops`, ...), read off the fast path every
//!   [`PORT_COUNTERS_INTERVAL_MS`](crate::stats::PORT_COUNTERS_INTERVAL_MS),
//!   on a snapshot request and at shutdown;
//! * `forwarded`: received and handed to an egress TX stage (a fragmented
//!   packet counts once here, its fragments in `fragments`);
//! * `local`: consumed by the router (ARP, NS/NA, echo requests answered);
//! * `held`: currently waiting in a hold queue for neighbor resolution (a
//!   gauge: it goes down when the packet is sent, counted `forwarded`, or
//!   dropped, counted `neighbor_unresolved` / `held_at_shutdown`);
//! * `drops`: the input reasons, the worker's ([`DropReason::is_input`])
//!   and the port side's.
//!
//! Every count is by *input* port: a frame received on p0 and forwarded
//! out of p1 is `forwarded` on p0.
//!
//! On the output side, frames the router made itself are `generated`
//! (echo replies, ARP replies and requests, NA/NS, ICMP errors), and over
//! all ports
//!
//! ```text
//! tx_packets = forwarded - fragmented + fragments + generated - tx_full
//! ```
//!
//! Output reasons (`tx_full`, `icmp_rate_limited`, `reply_no_buffer`, the
//! kernel's `xdp_tx_invalid_descs`) are per port in `output_drops`, on the
//! port the frame would have left by; `icmp_rate_limited` and
//! `reply_no_buffer` count errors not generated, so they are in neither
//! identity. Kernel events that are not frames (`xdp_*_ring_empty_descs`)
//! are in `events`.
//!
//! [`accounting_violations`] checks all of this on the statistics JSON
//! (a snapshot, or softrouter's `--stats-json` file); tests call
//! [`assert_accounting`].

use crate::drop::DropReason;
use netio::{CounterKind, QueueCounter};
use serde::Serialize;
use serde_json::Value;

fn input_reason(name: &str) -> bool {
    DropReason::ALL
        .iter()
        .any(|r| r.is_input() && r.name() == name)
        || QueueCounter::from_name(name).is_some_and(|c| c.kind() == CounterKind::RxDrop)
}

fn output_reason(name: &str) -> bool {
    DropReason::ALL
        .iter()
        .any(|r| !r.is_input() && r.name() == name)
        || QueueCounter::from_name(name).is_some_and(|c| c.kind() == CounterKind::TxDrop)
        || crate::drop::DEVICE_DROPS.contains(&name)
}

// The checker adds in u128: counters near u64::MAX (a gauge gone below
// zero) are reported, not overflowed.
fn check_port(at: &str, p: &Value, out: &mut Vec<String>) {
    let mut num = |k: &str| -> u128 {
        match p.get(k).and_then(Value::as_u64) {
            Some(v) => u128::from(v),
            None => {
                out.push(format!("{at}: no counter {k:?}"));
                0
            }
        }
    };
    let (rx, received) = (num("rx_packets"), num("received"));
    let (fwd, local, held) = (num("forwarded"), num("local"), num("held"));
    let mut map = |k: &str| -> Vec<(String, u128)> {
        match p.get(k).and_then(Value::as_object) {
            Some(m) => m
                .iter()
                .map(|(k, v)| (k.clone(), u128::from(v.as_u64().unwrap_or(u64::MAX))))
                .collect(),
            None => {
                out.push(format!("{at}: no {k:?} map"));
                Vec::new()
            }
        }
    };
    let drops = map("drops");
    let output = map("output_drops");
    for (k, v) in &drops {
        if !input_reason(k) {
            out.push(format!("{at}: {k:?} ({v}) is not an input drop reason"));
        }
    }
    for (k, v) in &output {
        if !output_reason(k) {
            out.push(format!("{at}: {k:?} ({v}) is not an output drop reason"));
        }
    }
    let dropped: u128 = drops.iter().map(|(_, v)| v).sum();
    let port_side: u128 = drops
        .iter()
        .filter(|(k, _)| QueueCounter::from_name(k).is_some())
        .map(|(_, v)| v)
        .sum();
    if received != fwd + local + held + dropped {
        out.push(format!(
            "{at}: received {received} != forwarded {fwd} + local {local} + held {held} \
             + dropped {dropped} ({:?})",
            drops
        ));
    }
    if received != rx + port_side {
        out.push(format!(
            "{at}: received {received} != rx_packets {rx} + port-side drops {port_side}"
        ));
    }
    if let Some(queues) = p.get("rx_queues").and_then(Value::as_array) {
        let per_queue: u128 = queues
            .iter()
            .filter_map(|q| q.get("counters").and_then(Value::as_object))
            .flat_map(|m| m.iter())
            .filter(|(k, _)| {
                QueueCounter::from_name(k).is_some_and(|c| c.kind() == CounterKind::RxDrop)
            })
            .map(|(_, v)| u128::from(v.as_u64().unwrap_or(0)))
            .sum();
        if per_queue != port_side {
            out.push(format!(
                "{at}: port-side drops {port_side} != sum over rx_queues {per_queue}"
            ));
        }
    }
}

/// A snapshot-shaped object: totals equal the sums over ports, and the
/// output identity over all ports.
fn check_totals(at: &str, s: &Value, out: &mut Vec<String>) {
    let Some(ports) = s.get("ports").and_then(Value::as_array) else {
        return;
    };
    let sum = |k: &str| -> u128 {
        ports
            .iter()
            .map(|p| u128::from(p.get(k).and_then(Value::as_u64).unwrap_or(0)))
            .sum()
    };
    let wrapped = |v: u128| v as u64 as u128;
    let top = |k: &str| s.get(k).and_then(Value::as_u64).map(u128::from);
    for k in ["forwarded", "local", "held"] {
        if let Some(t) = top(k) {
            // The snapshot's own totals wrap (see `sum_ports`).
            if t != wrapped(sum(k)) {
                out.push(format!("{at}: {k} {t} != sum over ports {}", sum(k)));
            }
        }
    }
    let (Some(fwd), Some(gen), Some(fragmented), Some(fragments)) = (
        top("forwarded"),
        top("generated"),
        top("fragmented"),
        top("fragments"),
    ) else {
        return;
    };
    let tx_full: u128 = ports
        .iter()
        .filter_map(|p| p.pointer("/output_drops/tx_full").and_then(Value::as_u64))
        .map(u128::from)
        .sum();
    let tx = sum("tx_packets");
    if tx + fragmented + tx_full != fwd + fragments + gen {
        out.push(format!(
            "{at}: tx_packets {tx} != forwarded {fwd} - fragmented {fragmented} + fragments \
             {fragments} + generated {gen} - tx_full {tx_full}"
        ));
    }
}

/// Every violation of the accounting identities in statistics JSON: a
/// serialized [`StatsSnapshot`](crate::StatsSnapshot), or softrouter's statistics file (its
/// `ports`, `totals` and each of `per_worker` are checked). Empty if all
/// hold.
pub fn accounting_violations(stats: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(ports) = stats.get("ports").and_then(Value::as_array) else {
        return vec!["no \"ports\" array".to_string()];
    };
    for (i, p) in ports.iter().enumerate() {
        let at = match p.get("name").and_then(Value::as_str) {
            Some(name) => format!("ports[{i}] ({name})"),
            None => format!("ports[{i}]"),
        };
        check_port(&at, p, &mut out);
    }
    check_totals("all ports", stats, &mut out);
    if let Some(t) = stats.get("totals") {
        for (i, p) in t["ports"].as_array().into_iter().flatten().enumerate() {
            check_port(&format!("totals.ports[{i}]"), p, &mut out);
        }
        check_totals("totals", t, &mut out);
        // The report's ports are the totals' ports with names.
        for (i, p) in ports.iter().enumerate() {
            for k in ["received", "rx_packets", "forwarded", "local", "held"] {
                if p.get(k) != t.pointer(&format!("/ports/{i}/{k}")) {
                    out.push(format!("ports[{i}].{k} differs from totals.ports[{i}].{k}"));
                }
            }
        }
    }
    for (w, s) in stats
        .get("per_worker")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (i, p) in s["ports"].as_array().into_iter().flatten().enumerate() {
            check_port(&format!("per_worker[{w}].ports[{i}]"), p, &mut out);
        }
        check_totals(&format!("per_worker[{w}]"), s, &mut out);
    }
    out
}

/// Panics with every violation of the accounting identities in `stats`:
/// statistics JSON (a `serde_json::Value`, or its text as a string), a
/// [`StatsSnapshot`](crate::StatsSnapshot), or anything else that serializes to it.
#[track_caller]
pub fn assert_accounting<T: Serialize + ?Sized>(stats: &T) {
    let mut v = serde_json::to_value(stats).expect("statistics serialize");
    if let Value::String(text) = &v {
        v = serde_json::from_str(text).expect("statistics text is JSON");
    }
    let errors = accounting_violations(&v);
    if !errors.is_empty() {
        let mut text = serde_json::to_string_pretty(&v).unwrap_or_default();
        if text.len() > 20_000 {
            text.truncate(text.floor_char_boundary(20_000));
            text.push_str(" ...");
        }
        panic!(
            "accounting identity violated:\n  {}\nin {text}",
            errors.join("\n  ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn port(received: u64, rx: u64, fwd: u64, drops: Value) -> Value {
        let queue: serde_json::Map<String, Value> = drops
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| QueueCounter::from_name(k).is_some())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        json!({
            "rx_packets": rx, "tx_packets": 0, "rx_bytes": 0, "tx_bytes": 0,
            "received": received, "forwarded": fwd, "local": 1, "held": 2,
            "drops": drops, "output_drops": {}, "events": {},
            "rx_queues": [{"worker": 0, "queue": 0, "counters": queue}],
        })
    }

    #[test]
    fn drop_reason_and_queue_counter_names_are_distinct() {
        // They share the `drops` / `output_drops` maps of a port.
        for &r in DropReason::ALL {
            assert!(QueueCounter::from_name(r.name()).is_none(), "{}", r.name());
        }
    }

    #[test]
    fn a_balanced_port_passes() {
        let s = json!({"ports": [port(10, 9, 3, json!({"no_route": 3, "rx_oversize": 1}))]});
        assert_eq!(accounting_violations(&s), Vec::<String>::new());
    }

    #[test]
    fn each_imbalance_is_reported() {
        // One frame unaccounted.
        let s = json!({"ports": [port(10, 9, 2, json!({"no_route": 3, "rx_oversize": 1}))]});
        let e = accounting_violations(&s);
        assert!(
            e.len() == 1 && e[0].contains("received 10 != forwarded 2"),
            "{e:?}"
        );
        // Port-side drops that do not explain received - rx_packets.
        let s = json!({"ports": [port(10, 10, 3, json!({"no_route": 3, "rx_oversize": 1}))]});
        let e = accounting_violations(&s);
        assert!(e.len() == 1 && e[0].contains("rx_packets 10"), "{e:?}");
        // An output reason among the input drops, and a missing field.
        let mut p = port(10, 10, 3, json!({"no_route": 3, "tx_full": 1}));
        p.as_object_mut().unwrap().remove("held");
        let e = accounting_violations(&json!({"ports": [p]}));
        assert!(e.iter().any(|e| e.contains("\"tx_full\"")), "{e:?}");
        assert!(e.iter().any(|e| e.contains("\"held\"")), "{e:?}");
        assert!(!accounting_violations(&json!({})).is_empty());
    }

    #[test]
    fn queue_detail_must_add_up() {
        let mut p = port(10, 9, 3, json!({"no_route": 3, "xdp_rx_ring_full": 1}));
        p["rx_queues"] = json!([{"worker": 0, "queue": 0, "counters": {"xdp_rx_ring_full": 2}}]);
        let e = accounting_violations(&json!({"ports": [p]}));
        assert!(e.len() == 1 && e[0].contains("rx_queues"), "{e:?}");
    }
}
