//! The wire format: one JSON object per line.
//!
//! ```text
//! > {"version":1,"op":"route_add","prefix":"198.19.0.0/16","via":["198.18.1.2"]}
//! < {"status":"ok","data":null}
//! > {"version":1,"op":"route_del","prefix":"10.0.0.0/8"}
//! < {"status":"error","message":"no route 10.0.0.0/8"}
//! ```
//!
//! A request names its protocol version; a server answers a version it
//! does not speak with an error (and changes nothing), so an old `ctl`
//! against a new router fails clearly instead of doing something else.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// The protocol version this build speaks.
pub const VERSION: u32 = 1;

/// The longest request line a server reads (a route with many next hops
/// is far below it).
pub const MAX_LINE: usize = 64 * 1024;

/// What a client asks for. Prefixes are strings here and parsed by the
/// handler, so a bad one gets the router's own error message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Add or replace the route for `prefix` (ECMP over several `via`).
    RouteAdd { prefix: String, via: Vec<IpAddr> },
    /// Remove the route for exactly `prefix`.
    RouteDel { prefix: String },
    /// Every route, the route for exactly `prefix`, or the route a packet
    /// to `longest` takes.
    RouteShow {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        longest: Option<IpAddr>,
    },
    /// How many routes, by family and by source, and the next hops in
    /// use: counters only, never a walk of the table.
    RouteSummary,
    /// The neighbour table.
    NeighShow,
    /// A static neighbour.
    NeighAdd {
        address: IpAddr,
        mac: String,
        port: String,
    },
    /// Remove a neighbour (static or dynamic).
    NeighDel { address: IpAddr },
    /// Ports and their counters.
    PortShow,
    /// The statistics snapshot (the same document as `--stats-json`).
    Stats,
    /// Re-read the configuration file and apply what changed.
    Reload,
}

/// A route as `route show` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteView {
    pub prefix: String,
    /// `forward`, `connected`, `local` or `blackhole`.
    pub kind: String,
    /// Next hops (empty unless `forward`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<NextHopView>,
}

/// The answer to `route_summary`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteSummaryView {
    /// Routes installed, every kind (connected and local included).
    pub routes_v4: u64,
    pub routes_v6: u64,
    /// Routes from the configuration file (`[[route]]`, the routes file).
    pub from_file: u64,
    /// Routes the kernel mirror installed (`[kernel] routes`).
    pub from_kernel: u64,
    /// Next hops routes use now, and retired ones still in their grace
    /// period.
    pub next_hops: u64,
    pub next_hops_retired: u64,
}

/// One next hop of a route.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NextHopView {
    pub address: IpAddr,
    pub port: String,
}

/// A neighbour as `neigh show` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeighView {
    pub address: IpAddr,
    pub port: String,
    /// `incomplete`, `reachable`, `stale`, `static` or `failed`.
    pub state: String,
    /// Known once resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    /// Created by traffic (removed by the collector), or permanent.
    pub dynamic: bool,
}

/// A request on the wire: the version, then the request's own fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub version: u32,
    #[serde(flatten)]
    pub request: Request,
}

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Response {
    /// Done; `data` is what was asked for (null for a change).
    Ok {
        #[serde(default)]
        data: serde_json::Value,
    },
    /// Refused or failed; nothing was changed.
    Error { message: String },
}

impl Response {
    pub fn error(message: impl Into<String>) -> Response {
        Response::Error {
            message: message.into(),
        }
    }
}

/// Parse one request line: the request, or the error to answer with.
pub fn parse_request(line: &str) -> Result<Request, String> {
    #[derive(Deserialize)]
    struct Version {
        version: Option<u32>,
    }
    let v: Version =
        serde_json::from_str(line).map_err(|e| format!("not a JSON request object: {e}"))?;
    match v.version {
        Some(VERSION) => {}
        Some(other) => {
            return Err(format!(
                "protocol version {other} not spoken here (this router speaks {VERSION})"
            ))
        }
        None => return Err("request without \"version\"".into()),
    }
    let e: Envelope = serde_json::from_str(line).map_err(|e| format!("bad request: {e}"))?;
    refuse_unknown_fields(line, &e.request)?;
    Ok(e.request)
}

/// serde's `deny_unknown_fields` holds for the requests with fields; one
/// without any (`stats`, `reload`, ...) takes whatever follows its tag
/// (serde ignores the rest of an internally tagged unit variant). So a
/// request whose kind accepts a made-up field takes no fields, and every
/// field of the line but `version` and `op` is refused, by name: a typo or
/// an option this router does not have must not pass as done.
fn refuse_unknown_fields(line: &str, request: &Request) -> Result<(), String> {
    use serde_json::{Map, Value};
    let Ok(Value::Object(mut probe)) = serde_json::to_value(request) else {
        return Ok(());
    };
    let op = probe
        .get("op")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    probe.insert("\u{0}made-up".into(), Value::Null);
    if serde_json::from_value::<Request>(Value::Object(probe)).is_err() {
        return Ok(()); // its fields were checked by serde
    }
    let fields: Map<String, Value> =
        serde_json::from_str(line).map_err(|e| format!("bad request: {e}"))?;
    match fields.keys().find(|k| *k != "version" && *k != "op") {
        Some(k) => {
            // A name may be as long as the line: quote its start.
            let mut name: String = k.chars().take(60).collect();
            if name.len() < k.len() {
                name.push('…');
            }
            Err(format!(
                "bad request: unknown field `{name}`: `{op}` takes no fields"
            ))
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_in_the_documented_form() {
        let r = Request::RouteAdd {
            prefix: "198.19.0.0/16".into(),
            via: vec!["198.18.1.2".parse().unwrap()],
        };
        let line = serde_json::to_string(&Envelope {
            version: VERSION,
            request: r.clone(),
        })
        .unwrap();
        assert_eq!(
            line,
            r#"{"version":1,"op":"route_add","prefix":"198.19.0.0/16","via":["198.18.1.2"]}"#
        );
        assert_eq!(parse_request(&line), Ok(r));
        let show = r#"{"version":1,"op":"route_show","longest":"2001:2::1"}"#;
        assert_eq!(
            parse_request(show),
            Ok(Request::RouteShow {
                prefix: None,
                longest: Some("2001:2::1".parse().unwrap())
            })
        );
        let ok = serde_json::to_string(&Response::Ok {
            data: serde_json::Value::Null,
        })
        .unwrap();
        assert_eq!(ok, r#"{"status":"ok","data":null}"#);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let err = |s: &str| parse_request(s).unwrap_err();
        assert!(err("route add").contains("not a JSON request"));
        assert!(err(r#"{"op":"stats"}"#).contains("without \"version\""));
        assert!(err(r#"{"version":2,"op":"stats"}"#).contains("version 2 not spoken"));
        assert!(err(r#"{"version":1,"op":"route_flip"}"#).contains("unknown variant"));
        assert!(err(r#"{"version":1,"op":"route_del"}"#).contains("missing field `prefix`"));
        assert!(
            err(r#"{"version":1,"op":"route_del","prefix":"x","force":true}"#)
                .contains("unknown field")
        );
        assert!(
            err(r#"{"version":1,"op":"route_add","prefix":"p","via":["nope"]}"#)
                .contains("invalid IP address")
        );
        // Requests without fields refuse them too, by name.
        for op in ["reload", "stats", "neigh_show", "port_show"] {
            let e = err(&format!(r#"{{"version":1,"op":"{op}","path":"/etc/x"}}"#));
            assert!(
                e.contains("unknown field `path`")
                    && e.contains(&format!("`{op}` takes no fields")),
                "{op}: {e}"
            );
        }
        assert_eq!(
            parse_request(r#"{"version":1,"op":"route_show","prefix":null}"#),
            Ok(Request::RouteShow {
                prefix: None,
                longest: None
            })
        );
    }
}
