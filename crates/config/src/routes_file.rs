//! The routes file (`[routes_file] path`), checked against the
//! configuration it belongs to: one `prefix next-hop` per line (the format
//! of `fib::routes_file`, whose parser the router loads it with; `#`
//! comments, blank lines; gzip if the name ends in `.gz`).
//!
//! The file is streamed: lines are read one at a time through a bounded
//! buffer ([`MAX_LINE`] bytes), so a huge file costs memory only for what
//! must be remembered (one small entry per prefix, to find conflicting
//! duplicates) and a 10 MB line is an error after its first kilobyte.
//! Every error names the file and the line, and quotes at most a short
//! excerpt. Only a regular file of at most
//! [`crate::source::MAX_ROUTES_FILE_BYTES`] is read (as much once
//! decompressed): never a FIFO or a device. Each route obeys the rules of a `[[route]]` in the TOML (the
//! same functions decide), and the next hops of the whole configuration
//! must fit the router's next-hop table.

use crate::validate::{check_next_hop, check_route_prefix};
use crate::{excerpt, Cidr, Config, ConfigError};
use std::collections::{HashMap, HashSet};
use std::io::{self, BufRead, BufReader, Read};
use std::net::IpAddr;
use std::path::Path;

/// Longest line accepted (a route line is under 100 bytes).
pub const MAX_LINE: usize = 1024;

/// What a valid routes file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Route lines (a line repeated verbatim counts once).
    pub routes: usize,
    /// Next hops of the whole configuration, as the router's next-hop
    /// table holds them (two per port for connected and local delivery,
    /// one per distinct gateway and static neighbor).
    pub next_hops: usize,
}

/// Next hops the router needs for `cfg` without its routes file: two per
/// port (connected, local) and one per distinct (port, address) among
/// static neighbors and route gateways.
pub fn static_next_hops(cfg: &Config) -> HashSet<(usize, IpAddr)> {
    let mut set = HashSet::new();
    for n in &cfg.neighbors {
        set.insert((n.port, n.address));
    }
    for r in &cfg.routes {
        for &(ip, port) in &r.via {
            set.insert((port, ip));
        }
    }
    set
}

/// Checks `cfg`'s routes file, if it has one, against `cfg`; the router's
/// next-hop table holds `max_next_hops` entries.
pub fn check(cfg: &Config, max_next_hops: usize) -> Result<Summary, ConfigError> {
    let mut hops = static_next_hops(cfg);
    let fixed = 2 * cfg.ports.len();
    let Some(path) = &cfg.routes_file else {
        let next_hops = fixed + hops.len();
        if next_hops > max_next_hops {
            return Err(ConfigError::line(
                &cfg.source,
                0,
                format!(
                    "{next_hops} next hops (gateways, static neighbors, 2 per port) but the router's next-hop table holds {max_next_hops}"
                ),
            ));
        }
        return Ok(Summary {
            routes: 0,
            next_hops,
        });
    };
    // A regular file of bounded size, and as much once decompressed.
    let max = crate::source::MAX_ROUTES_FILE_BYTES;
    let file = crate::source::open_regular(path, max)?;
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(crate::source::Bounded::new(
            flate2::read::GzDecoder::new(file),
            max,
        )))
    } else {
        Box::new(BufReader::new(file))
    };
    check_stream(cfg, path, reader, &mut hops, max_next_hops)
}

/// [`check`] on any reader (`path` names it in errors).
pub fn check_reader(
    cfg: &Config,
    path: &Path,
    reader: impl Read,
    max_next_hops: usize,
) -> Result<Summary, ConfigError> {
    let mut hops = static_next_hops(cfg);
    check_stream(cfg, path, BufReader::new(reader), &mut hops, max_next_hops)
}

/// Compact keys for the duplicate check: a million IPv4 routes cost ~20 MB.
#[derive(Default)]
struct Seen {
    v4: HashMap<u64, (u32, u32)>,
    v6: HashMap<(u128, u8), (u128, u32)>,
}

impl Seen {
    /// Records `prefix -> hop` first seen at `line`; returns the earlier
    /// (next hop, line) if the prefix was seen before.
    fn insert(&mut self, prefix: &Cidr, hop: IpAddr, line: usize) -> Option<(IpAddr, usize)> {
        let line32 = line.min(u32::MAX as usize) as u32;
        match (prefix.addr, hop) {
            (IpAddr::V4(a), IpAddr::V4(h)) => {
                let key = (u64::from(u32::from(a)) << 8) | u64::from(prefix.len);
                match self.v4.entry(key) {
                    std::collections::hash_map::Entry::Occupied(e) => {
                        let (h0, l0) = *e.get();
                        Some((IpAddr::V4(h0.into()), l0 as usize))
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        e.insert((u32::from(h), line32));
                        None
                    }
                }
            }
            (IpAddr::V6(a), IpAddr::V6(h)) => match self.v6.entry((u128::from(a), prefix.len)) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let (h0, l0) = *e.get();
                    Some((IpAddr::V6(h0.into()), l0 as usize))
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((u128::from(h), line32));
                    None
                }
            },
            _ => None, // families are checked before
        }
    }
}

/// Reads one line into `buf` (without the newline). `Ok(false)` at the
/// end of input; an error if the line is longer than `max` bytes (`buf`
/// then holds its first `max` bytes).
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<bool> {
    buf.clear();
    let mut any = false;
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(any);
        }
        any = true;
        let (take, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (avail.len(), false),
        };
        let room = max - buf.len();
        if take > room {
            buf.extend_from_slice(&avail[..room]);
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("line is longer than {max} bytes"),
            ));
        }
        buf.extend_from_slice(&avail[..take]);
        r.consume(if done { take + 1 } else { take });
        if done {
            return Ok(true);
        }
    }
}

fn check_stream(
    cfg: &Config,
    path: &Path,
    mut reader: impl BufRead,
    hops: &mut HashSet<(usize, IpAddr)>,
    max_next_hops: usize,
) -> Result<Summary, ConfigError> {
    let fixed = 2 * cfg.ports.len();
    let toml_routes: HashMap<Cidr, &crate::Route> =
        cfg.routes.iter().map(|r| (r.prefix, r)).collect();
    let mut seen = Seen::default();
    let mut routes = 0usize;
    let mut buf = Vec::with_capacity(256);
    let mut line_no = 0usize;
    let err = |line: usize, m: String| ConfigError::line(path, line, m);
    loop {
        line_no += 1;
        match read_line(&mut reader, &mut buf, MAX_LINE) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                let text = String::from_utf8_lossy(&buf);
                return Err(err(line_no, format!("{e}: {}", excerpt(&text))));
            }
            Err(e) => return Err(err(line_no, format!("reading: {e}"))),
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            return Err(err(
                line_no,
                format!(
                    "not UTF-8 text: {}",
                    excerpt(&String::from_utf8_lossy(&buf))
                ),
            ));
        };
        let content = text.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let mut it = content.split_whitespace();
        let (Some(p), Some(h), None) = (it.next(), it.next(), it.next()) else {
            return Err(err(
                line_no,
                format!("expected \"prefix next-hop\", got {}", excerpt(content)),
            ));
        };
        let prefix: Cidr = p
            .parse()
            .map_err(|e| err(line_no, format!("prefix: {e}")))?;
        let hop: IpAddr = h.parse().map_err(|_| {
            err(
                line_no,
                format!(
                    "route {prefix}: next hop: {} is not an IP address",
                    excerpt(h)
                ),
            )
        })?;
        if hop.is_ipv4() != prefix.addr.is_ipv4() {
            return Err(err(
                line_no,
                format!("route {prefix}: next hop {hop} is not of the prefix's address family"),
            ));
        }
        // The router reads the file with fib's parser: it must agree.
        if let Err(m) = fib::routes_file::parse_line(content) {
            return Err(err(line_no, m));
        }
        check_route_prefix(&cfg.ports, &prefix)
            .map_err(|m| err(line_no, format!("route {prefix}: {m}")))?;
        let port = check_next_hop(&cfg.ports, hop)
            .map_err(|m| err(line_no, format!("route {prefix}: next hop: {m}")))?;
        if let Some(r) = toml_routes.get(&prefix) {
            if r.via != [(hop, port)] {
                return Err(err(
                    line_no,
                    format!(
                        "route {prefix}: also a [[route]] in {} with other next hops",
                        cfg.source.display()
                    ),
                ));
            }
        }
        match seen.insert(&prefix, hop, line_no) {
            Some((h0, _)) if h0 == hop => continue, // verbatim repeat
            Some((h0, l0)) => {
                return Err(err(
                    line_no,
                    format!("route {prefix}: next hop {hop}, but line {l0} gives {h0}"),
                ))
            }
            None => {}
        }
        routes += 1;
        if hops.insert((port, hop)) && fixed + hops.len() > max_next_hops {
            return Err(err(
                line_no,
                format!(
                    "route {prefix}: next hop {hop} is one too many: the router's next-hop table holds {max_next_hops} (2 per port, one per gateway and static neighbor)"
                ),
            ));
        }
    }
    Ok(Summary {
        routes,
        next_hops: fixed + hops.len(),
    })
}
