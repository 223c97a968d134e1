//! Reading and writing classic libpcap capture files (Ethernet link type).
//!
//! Small enough to own: a 24-byte file header and a 16-byte record header
//! per frame. Both byte orders and both timestamp resolutions are read;
//! files are written little-endian with microsecond stamps, the format every
//! tool reads.

use std::io::{self, Read, Write};

const MAGIC_USEC: u32 = 0xa1b2_c3d4;
const MAGIC_NSEC: u32 = 0xa1b2_3c4d;
const LINKTYPE_ETHERNET: u32 = 1;
/// Frames longer than this are rejected as corrupt records.
const MAX_RECORD: u32 = 262_144;

/// All frames of a capture, stored back to back in one allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Capture {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, frame: &[u8]) {
        self.data.extend_from_slice(frame);
        self.ends.push(self.data.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// Parses a whole capture. Errors say what is wrong and at which record.
pub fn read(mut r: impl Read) -> Result<Capture, String> {
    let mut all = Vec::new();
    r.read_to_end(&mut all).map_err(|e| e.to_string())?;
    parse(&all)
}

pub fn parse(all: &[u8]) -> Result<Capture, String> {
    if all.len() < 24 {
        return Err("shorter than the 24-byte pcap header".into());
    }
    let le = u32::from_le_bytes(all[0..4].try_into().unwrap());
    let be = u32::from_be_bytes(all[0..4].try_into().unwrap());
    let little = if le == MAGIC_USEC || le == MAGIC_NSEC {
        true
    } else if be == MAGIC_USEC || be == MAGIC_NSEC {
        false
    } else {
        return Err(format!(
            "bad magic number {le:#010x} (pcapng is not supported)"
        ));
    };
    let u32_at = |b: &[u8], o: usize| {
        let bytes: [u8; 4] = b[o..o + 4].try_into().unwrap();
        if little {
            u32::from_le_bytes(bytes)
        } else {
            u32::from_be_bytes(bytes)
        }
    };
    let linktype = u32_at(all, 20) & 0x0fff_ffff;
    if linktype != LINKTYPE_ETHERNET {
        return Err(format!("link type {linktype} is not Ethernet (1)"));
    }
    let mut cap = Capture::new();
    let mut off = 24;
    while off < all.len() {
        let n = cap.len() + 1;
        if all.len() - off < 16 {
            return Err(format!("record {n}: truncated record header"));
        }
        let incl = u32_at(all, off + 8);
        if incl > MAX_RECORD {
            return Err(format!("record {n}: implausible length {incl}"));
        }
        let start = off + 16;
        let end = start + incl as usize;
        if end > all.len() {
            return Err(format!("record {n}: truncated frame"));
        }
        cap.push(&all[start..end]);
        off = end;
    }
    Ok(cap)
}

/// Writes frames as a pcap stream. Timestamps are a frame counter in
/// microseconds, so the same traffic always gives the same bytes (golden
/// tests compare files).
pub struct Writer<W: Write> {
    out: W,
    count: u64,
}

impl<W: Write> Writer<W> {
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut h = [0u8; 24];
        h[0..4].copy_from_slice(&MAGIC_USEC.to_le_bytes());
        h[4..6].copy_from_slice(&2u16.to_le_bytes());
        h[6..8].copy_from_slice(&4u16.to_le_bytes());
        h[16..20].copy_from_slice(&65535u32.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(Writer { out, count: 0 })
    }

    pub fn write_frame(&mut self, frame: &[u8]) -> io::Result<()> {
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&((self.count / 1_000_000) as u32).to_le_bytes());
        h[4..8].copy_from_slice(&((self.count % 1_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(frame)?;
        self.count += 1;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_garbage_with_reason() {
        assert!(parse(b"short").unwrap_err().contains("24-byte"));
        let mut h = vec![0u8; 24];
        h[0..4].copy_from_slice(&0x0a0d0d0au32.to_le_bytes());
        assert!(parse(&h).unwrap_err().contains("pcapng"));
    }

    #[test]
    fn reads_big_endian_nanosecond_files() {
        let mut f = Vec::new();
        f.extend_from_slice(&MAGIC_NSEC.to_be_bytes());
        f.extend_from_slice(&[0, 2, 0, 4]);
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&65535u32.to_be_bytes());
        f.extend_from_slice(&1u32.to_be_bytes());
        f.extend_from_slice(&[0; 8]);
        f.extend_from_slice(&3u32.to_be_bytes());
        f.extend_from_slice(&3u32.to_be_bytes());
        f.extend_from_slice(b"xyz");
        let cap = parse(&f).unwrap();
        assert_eq!(cap.len(), 1);
        assert_eq!(cap.get(0), b"xyz");
    }

    proptest! {
        #[test]
        fn write_then_read_round_trips(frames in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..1600), 0..20)) {
            let mut w = Writer::new(Vec::new()).unwrap();
            for f in &frames { w.write_frame(f).unwrap(); }
            let cap = parse(&w.into_inner()).unwrap();
            let back: Vec<Vec<u8>> = cap.iter().map(|f| f.to_vec()).collect();
            prop_assert_eq!(back, frames);
        }

        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = parse(&bytes);
        }
    }
}
