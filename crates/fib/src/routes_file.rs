//! Route files.
//!
//! * Bulk route files: one route per line, `prefix next-hop`, e.g.
//!   `198.18.0.0/15 198.19.0.1`; blank lines and `#` comments (whole line
//!   or trailing) are ignored. The next hop must be of the prefix's family.
//! * The shared test table format: one prefix per line, gzip-compressed if
//!   the path ends in `.gz` ([`load_prefixes`]).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::net::IpAddr;
use std::path::Path;

use thiserror::Error;

use crate::Prefix;

/// A route file line that did not parse, or a read error.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}: {message}")]
pub struct RouteFileError {
    /// 1-based line number (0 for an error not tied to a line).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Parse one line: `Ok(None)` for a blank or comment line.
pub fn parse_line(line: &str) -> Result<Option<(Prefix, IpAddr)>, String> {
    let line = line.split('#').next().unwrap_or("").trim();
    if line.is_empty() {
        return Ok(None);
    }
    let mut it = line.split_whitespace();
    let (Some(p), Some(nh), None) = (it.next(), it.next(), it.next()) else {
        return Err(format!("expected \"prefix next-hop\", got {line:?}"));
    };
    let prefix: Prefix = p.parse().map_err(|e| format!("{e}"))?;
    let nh: IpAddr = nh
        .parse()
        .map_err(|_| format!("invalid next hop {nh:?}: not an IP address"))?;
    if matches!(prefix, Prefix::V4(_)) != nh.is_ipv4() {
        return Err(format!(
            "next hop {nh} is not of the same family as {prefix}"
        ));
    }
    Ok(Some((prefix, nh)))
}

/// Parse a whole route file.
pub fn parse(reader: impl Read) -> Result<Vec<(Prefix, IpAddr)>, RouteFileError> {
    let mut out = Vec::new();
    for (i, line) in BufReader::new(reader).lines().enumerate() {
        let line = line.map_err(|e| RouteFileError {
            line: i + 1,
            message: e.to_string(),
        })?;
        if let Some(r) = parse_line(&line).map_err(|message| RouteFileError {
            line: i + 1,
            message,
        })? {
            out.push(r);
        }
    }
    Ok(out)
}

/// Load a prefix list (one prefix per line, `#` comments and blank lines
/// ignored; gzip if the path ends in `.gz`).
pub fn load_prefixes(path: impl AsRef<Path>) -> io::Result<Vec<Prefix>> {
    let path = path.as_ref();
    let file = File::open(path)?;
    let reader: Box<dyn BufRead> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(BufReader::new(flate2::read::GzDecoder::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let mut out = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line?;
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let p = l.parse().map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: line {}: {e}", path.display(), i + 1),
            )
        })?;
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_routes_and_names_bad_lines() {
        let text = "# routes\n\n198.18.0.0/15 198.19.0.1\n2001:2::/48 2001:2::1 # v6\n";
        let r = parse(text.as_bytes()).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].0.to_string(), "198.18.0.0/15");
        assert_eq!(r[1].1, "2001:2::1".parse::<IpAddr>().unwrap());

        let e =
            parse("198.18.0.0/15 198.19.0.1\n198.18.0.0/33 198.19.0.1\n".as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("line 2:"), "{e}");
        for bad in [
            "198.18.0.0/15",
            "198.18.0.0/15 x",
            "198.18.0.0/15 2001:2::1",
            "198.18.0.0/15 198.19.0.1 extra",
        ] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_line("   # only a comment").unwrap(), None);
    }
}
