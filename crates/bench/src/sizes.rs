//! Frame sizes and size mixes (R1, R2).
//!
//! Why: users ask for "64,128,...,imix" and every tool means something else
//! by IMIX. Here `imix` is *named and fixed*: the papers' "Cisco" IMIX,
//! 64/594/1518 bytes weighted 7:4:1 (average 361.83 bytes with FCS).
//! Custom mixes are written `imix:64x7+594x4+1518x1`. The generator sends a
//! mix as a deterministic, smooth, repeating schedule (period = sum of the
//! weights), so two runs send exactly the same sequence of sizes.

use std::fmt;

use serde::{Deserialize, Serialize};

use packet::test_frame::{MAX_FRAME, MIN_FRAME_V4, MIN_FRAME_V6};

/// Per-frame overhead on the wire: preamble + SFD (8) and inter-frame gap (12).
pub const WIRE_OVERHEAD: usize = 20;

/// The standard RFC 2544 sizes (R1).
pub const RFC2544_SIZES: [usize; 7] = [64, 128, 256, 512, 1024, 1280, 1518];

/// One entry of a size list: a fixed size or a weighted mix.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum FrameSize {
    /// Every frame has this size (bytes, with FCS).
    Fixed(usize),
    /// A mix of sizes with integer weights.
    Mix(Mix),
}

/// A size mix: `(size, weight)` parts, sizes with FCS.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Mix {
    /// Parts in the order given.
    pub parts: Vec<(usize, u32)>,
}

impl Mix {
    /// The "Cisco" IMIX of the papers: 64/594/1518 at 7:4:1.
    pub fn cisco() -> Mix {
        Mix {
            parts: vec![(64, 7), (594, 4), (1518, 1)],
        }
    }

    /// Sum of the weights: the schedule's period.
    pub fn period(&self) -> u32 {
        self.parts.iter().map(|p| p.1).sum()
    }

    /// Average frame size (with FCS).
    pub fn average(&self) -> f64 {
        let w: f64 = self.period() as f64;
        self.parts
            .iter()
            .map(|&(s, k)| s as f64 * k as f64)
            .sum::<f64>()
            / w
    }

    /// One period of the send schedule, smooth weighted round robin: each
    /// slot picks the part with the largest accumulated credit, so sizes
    /// are spread evenly (7:4:1 gives 64,594,64,64,1518,64,594,...), and
    /// the sequence is the same on every run.
    pub fn schedule(&self) -> Vec<usize> {
        let total: i64 = self.period() as i64;
        let mut credit = vec![0i64; self.parts.len()];
        let mut out = Vec::with_capacity(total as usize);
        for _ in 0..total {
            for (c, p) in credit.iter_mut().zip(&self.parts) {
                *c += i64::from(p.1);
            }
            // First maximum wins ties: deterministic.
            let mut best = 0;
            for i in 1..credit.len() {
                if credit[i] > credit[best] {
                    best = i;
                }
            }
            credit[best] -= total;
            out.push(self.parts[best].0);
        }
        out
    }
}

impl FrameSize {
    /// Average size (with FCS).
    pub fn average(&self) -> f64 {
        match self {
            FrameSize::Fixed(s) => *s as f64,
            FrameSize::Mix(m) => m.average(),
        }
    }

    /// One period of the send schedule (`[s]` for a fixed size).
    pub fn schedule(&self) -> Vec<usize> {
        match self {
            FrameSize::Fixed(s) => vec![*s],
            FrameSize::Mix(m) => m.schedule(),
        }
    }

    /// The sizes that occur.
    pub fn sizes(&self) -> Vec<usize> {
        match self {
            FrameSize::Fixed(s) => vec![*s],
            FrameSize::Mix(m) => m.parts.iter().map(|p| p.0).collect(),
        }
    }

    /// This size as actually sent for the IP version: IPv6 frames smaller
    /// than 78 bytes are raised to 78 (see `frame` docs); results record
    /// the effective size.
    pub fn effective(&self, v6: bool) -> FrameSize {
        match self {
            FrameSize::Fixed(s) => FrameSize::Fixed(effective_size(*s, v6)),
            FrameSize::Mix(m) => FrameSize::Mix(Mix {
                parts: m
                    .parts
                    .iter()
                    .map(|&(s, w)| (effective_size(s, v6), w))
                    .collect(),
            }),
        }
    }

    /// Theoretical maximum frame rate on a link of `link_bps` (R2):
    /// `bps / ((frame + 20) * 8)`, with the average size for a mix.
    pub fn max_rate_fps(&self, link_bps: f64) -> f64 {
        max_rate_fps(link_bps, self.average())
    }
}

/// `size` raised to the minimum test frame size for the IP version.
pub fn effective_size(size: usize, v6: bool) -> usize {
    if v6 {
        size.max(MIN_FRAME_V6)
    } else {
        size.max(MIN_FRAME_V4)
    }
}

/// Theoretical maximum rate (R2): `link_bps / ((frame + 20) * 8)` frames/s.
pub fn max_rate_fps(link_bps: f64, frame: f64) -> f64 {
    link_bps / ((frame + WIRE_OVERHEAD as f64) * 8.0)
}

/// Layer-2 bit rate (with FCS, without preamble/IFG) of `fps` frames/s.
pub fn l2_bps(fps: f64, frame: f64) -> f64 {
    fps * frame * 8.0
}

/// Wire bit rate (with preamble and IFG) of `fps` frames/s.
pub fn wire_bps(fps: f64, frame: f64) -> f64 {
    fps * (frame + WIRE_OVERHEAD as f64) * 8.0
}

impl fmt::Display for FrameSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameSize::Fixed(s) => write!(f, "{s}"),
            FrameSize::Mix(m) if *m == Mix::cisco() => write!(f, "imix"),
            FrameSize::Mix(m) => {
                write!(f, "imix:")?;
                for (i, (s, w)) in m.parts.iter().enumerate() {
                    if i > 0 {
                        write!(f, "+")?;
                    }
                    write!(f, "{s}x{w}")?;
                }
                Ok(())
            }
        }
    }
}

fn check_size(s: usize) -> Result<usize, String> {
    if (MIN_FRAME_V4..=MAX_FRAME).contains(&s) {
        Ok(s)
    } else {
        Err(format!(
            "frame size {s} outside {MIN_FRAME_V4}..={MAX_FRAME}"
        ))
    }
}

impl std::str::FromStr for FrameSize {
    type Err = String;

    /// `1518`, `imix`, or `imix:64x7+594x4+1518x1`.
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("imix") {
            return Ok(FrameSize::Mix(Mix::cisco()));
        }
        if let Some(spec) = s.strip_prefix("imix:") {
            let mut parts = Vec::new();
            for p in spec.split('+') {
                let (size, w) = p
                    .split_once('x')
                    .ok_or_else(|| format!("mix part {p:?} is not SIZExWEIGHT"))?;
                let size = size
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("bad size in mix part {p:?}"))?;
                let w = w
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| format!("bad weight in mix part {p:?}"))?;
                if w == 0 {
                    return Err(format!("zero weight in mix part {p:?}"));
                }
                parts.push((check_size(size)?, w));
            }
            if parts.is_empty() {
                return Err("empty mix".into());
            }
            if parts.iter().map(|p| u64::from(p.1)).sum::<u64>() > 100_000 {
                return Err("mix weights sum above 100000".into());
            }
            return Ok(FrameSize::Mix(Mix { parts }));
        }
        let n = s
            .parse::<usize>()
            .map_err(|_| format!("{s:?} is not a frame size, `imix` or `imix:SxW+...`"))?;
        Ok(FrameSize::Fixed(check_size(n)?))
    }
}

impl TryFrom<String> for FrameSize {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<FrameSize> for String {
    fn from(f: FrameSize) -> String {
        f.to_string()
    }
}

/// Parse a comma-separated size list: `64,128,256,512,1024,1280,1518,imix`.
pub fn parse_sizes(list: &str) -> Result<Vec<FrameSize>, String> {
    let v: Vec<FrameSize> = list
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err("empty frame size list".into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_round_trips() {
        let v = parse_sizes("64,128,256,512,1024,1280,1518,imix").unwrap();
        assert_eq!(v.len(), 8);
        assert_eq!(v[7], FrameSize::Mix(Mix::cisco()));
        let m: FrameSize = "imix:64x7+594x4+1518x1".parse().unwrap();
        assert_eq!(m, FrameSize::Mix(Mix::cisco()));
        assert_eq!(m.to_string(), "imix");
        let c: FrameSize = "imix:64x1+1518x3".parse().unwrap();
        assert_eq!(c.to_string(), "imix:64x1+1518x3");
        assert_eq!(c.to_string().parse::<FrameSize>().unwrap(), c);
        for bad in [
            "",
            "63",
            "9023",
            "imix:64",
            "imix:64x0",
            "imix:",
            "abc",
            "imix:64x2+10x1",
        ] {
            assert!(parse_sizes(bad).is_err(), "{bad:?}");
        }
        let j = serde_json::to_string(&v).unwrap();
        assert!(j.contains("\"imix\""));
        let back: Vec<FrameSize> = serde_json::from_str(&j).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn cisco_imix_schedule_is_smooth_and_exact() {
        let m = Mix::cisco();
        let s = m.schedule();
        assert_eq!(s.len(), 12);
        assert_eq!(s.iter().filter(|&&x| x == 64).count(), 7);
        assert_eq!(s.iter().filter(|&&x| x == 594).count(), 4);
        assert_eq!(s.iter().filter(|&&x| x == 1518).count(), 1);
        // smooth: no two 594s and never the 1518 next to a 594 in a row of 3
        for w in s.windows(2) {
            assert!(!(w[0] == 594 && w[1] == 594), "{s:?}");
        }
        assert_eq!(m.schedule(), s, "deterministic");
        assert!((m.average() - 4342.0 / 12.0).abs() < 1e-9);
    }

    #[test]
    fn theoretical_rates() {
        let r = max_rate_fps(10e9, 64.0);
        assert!((r - 14_880_952.38).abs() < 1.0, "{r}");
        let r = FrameSize::Fixed(64).max_rate_fps(1e9);
        assert!((r - 1_488_095.24).abs() < 0.1);
        let r = FrameSize::Fixed(1518).max_rate_fps(1e9);
        assert!((r - 81_274.38).abs() < 0.1);
        assert!((wire_bps(r, 1518.0) - 1e9).abs() < 1.0);
        assert_eq!(effective_size(64, true), 78);
        assert_eq!(effective_size(64, false), 64);
        assert_eq!(
            FrameSize::Mix(Mix::cisco()).effective(true).sizes(),
            vec![78, 594, 1518]
        );
    }
}
