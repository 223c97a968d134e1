//! The `pcap` port: receives the frames of a capture file once, writes what
//! it sends to another capture file. Deterministic and unprivileged: the
//! golden tests of the pipeline run on it.
//!
//! It has one RX queue (a capture is one ordered stream). Every worker gets a
//! TX queue; they append to one file under a mutex taken once per burst.
//! That lock is acceptable here because this backend exists for tests, not
//! for speed; with one worker the output order is fully deterministic.

use crate::pcap_file::{self, Capture, Writer};
use crate::{
    Buf, Burst, NetioError, Pool, Port, PortInfo, QueueCounter, QueueCounters, RxQueue, TxQueue,
};
use std::fs::File;
use std::io::BufWriter;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Where transmitted frames go: a capture file, or memory (tests, fuzzing).
enum Sink {
    File(Writer<BufWriter<File>>),
    Memory(Capture),
}

impl Sink {
    fn write(&mut self, frame: &[u8]) -> bool {
        match self {
            Sink::File(w) => w.write_frame(frame).is_ok(),
            Sink::Memory(c) => {
                c.push(frame);
                true
            }
        }
    }
}

type SharedWriter = Arc<Mutex<Option<Sink>>>;

pub struct PcapPort {
    info: PortInfo,
    rx: Option<Arc<Capture>>,
    rx_taken: AtomicBool,
    tx: Option<(PathBuf, SharedWriter)>,
    tx_errors: Arc<AtomicU64>,
}

impl PcapPort {
    /// Reads `rx_pcap` completely (if given) and creates `tx_pcap` (if given).
    pub fn open(
        name: &str,
        mac: [u8; 6],
        mtu: u16,
        rx_pcap: Option<&Path>,
        tx_pcap: Option<&Path>,
    ) -> Result<Self, NetioError> {
        let rx = rx_pcap.map(load_capture).transpose()?.map(Arc::new);
        let tx = match tx_pcap {
            Some(path) => {
                // Never through a symlink someone planted where the
                // capture goes (the router often runs as root).
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(path)
                    .map_err(|source| NetioError::File {
                        path: path.to_path_buf(),
                        source,
                    })?;
                let w = Writer::new(BufWriter::new(file)).map_err(|source| NetioError::File {
                    path: path.to_path_buf(),
                    source,
                })?;
                Some((
                    path.to_path_buf(),
                    Arc::new(Mutex::new(Some(Sink::File(w)))),
                ))
            }
            None => None,
        };
        Ok(PcapPort {
            info: PortInfo {
                name: name.to_string(),
                mac,
                mtu,
                rx_queues: 1,
            },
            rx,
            rx_taken: AtomicBool::new(false),
            tx,
            tx_errors: Arc::new(AtomicU64::new(0)),
        })
    }

    /// A port that receives `rx` once and keeps what it sends in memory
    /// ([`PcapPort::take_sent`]): golden tests and fuzzing without files.
    pub fn in_memory(name: &str, mac: [u8; 6], mtu: u16, rx: Capture) -> Self {
        PcapPort {
            info: PortInfo {
                name: name.to_string(),
                mac,
                mtu,
                rx_queues: 1,
            },
            rx: Some(Arc::new(rx)),
            rx_taken: AtomicBool::new(false),
            tx: Some((
                PathBuf::from(format!("<memory:{name}>")),
                Arc::new(Mutex::new(Some(Sink::Memory(Capture::new())))),
            )),
            tx_errors: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The frames sent so far by an [`PcapPort::in_memory`] port (emptied).
    pub fn take_sent(&self) -> Capture {
        let Some((_, w)) = &self.tx else {
            return Capture::new();
        };
        match w.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            Some(Sink::Memory(c)) => std::mem::take(c),
            _ => Capture::new(),
        }
    }

    /// Flushes and closes the output capture; reports a write error, if any
    /// frame could not be written.
    fn finish_output(&self) -> Result<(), NetioError> {
        let Some((path, writer)) = &self.tx else {
            return Ok(());
        };
        let w = writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let err = |source| NetioError::File {
            path: path.clone(),
            source,
        };
        if let Some(Sink::File(mut w)) = w {
            w.flush().map_err(err)?;
        }
        let failed = self.tx_errors.load(Ordering::Relaxed);
        if failed > 0 {
            return Err(err(std::io::Error::other(format!(
                "{failed} frames could not be written"
            ))));
        }
        Ok(())
    }
}

/// Reads a capture file, naming the file in any error.
pub fn load_capture(path: &Path) -> Result<Capture, NetioError> {
    let file = File::open(path).map_err(|source| NetioError::File {
        path: path.to_path_buf(),
        source,
    })?;
    pcap_file::read(std::io::BufReader::new(file)).map_err(|reason| NetioError::BadPcap {
        path: path.to_path_buf(),
        reason,
    })
}

/// Copies `frame` into a fresh pool buffer, as a NIC's DMA would. `None`
/// when the pool is empty or the frame does not fit a buffer.
#[inline]
pub(crate) fn copy_in(pool: &mut Pool, frame: &[u8]) -> Option<Buf> {
    let mut buf = pool.alloc()?;
    let room = pool.room_mut(buf);
    if frame.len() > room.len() {
        pool.free(buf);
        return None;
    }
    room[..frame.len()].copy_from_slice(frame);
    buf.len = frame.len() as u32;
    Some(buf)
}

impl Port for PcapPort {
    fn info(&self) -> &PortInfo {
        &self.info
    }

    fn open_rx(&self, queue: u16, pool: &mut Pool) -> Result<Box<dyn RxQueue>, NetioError> {
        crate::check_mtu_fits(&self.info.name, self.info.mtu, pool)?;
        if queue != 0 || self.rx_taken.swap(true, Ordering::AcqRel) {
            return Err(NetioError::port(
                &self.info.name,
                "a pcap port has exactly one RX queue",
            ));
        }
        Ok(Box::new(PcapRx {
            capture: self.rx.clone().unwrap_or_default(),
            next: 0,
            oversize: 0,
        }))
    }

    fn finish(&self) -> Result<(), NetioError> {
        self.finish_output()
    }

    fn open_tx(&self, _worker: usize, _pool: &mut Pool) -> Result<Box<dyn TxQueue>, NetioError> {
        Ok(Box::new(PcapTx {
            writer: self.tx.as_ref().map(|(_, w)| w.clone()),
            errors: self.tx_errors.clone(),
        }))
    }
}

struct PcapRx {
    capture: Arc<Capture>,
    next: usize,
    oversize: u64,
}

impl RxQueue for PcapRx {
    fn rx_burst(&mut self, pool: &mut Pool, out: &mut Burst, max: usize) -> usize {
        let max = max.min(out.room());
        let mut n = 0;
        while n < max && self.next < self.capture.len() {
            let frame = self.capture.get(self.next);
            if frame.len() > (pool.frame_size() - crate::HEADROOM) as usize {
                // Larger than any buffer: a NIC would drop it as well;
                // counted (`rx_oversize`), never seen by the worker.
                self.oversize += 1;
                self.next += 1;
                continue;
            }
            let Some(buf) = copy_in(pool, frame) else {
                break; // pool empty: try again next round, lose nothing
            };
            let _ = out.push(buf);
            self.next += 1;
            n += 1;
        }
        n
    }

    fn exhausted(&self) -> bool {
        self.next >= self.capture.len()
    }

    fn counters(&mut self) -> QueueCounters {
        let mut c = QueueCounters::default();
        c.set(QueueCounter::RxOversize, self.oversize);
        c
    }
}

struct PcapTx {
    writer: Option<SharedWriter>,
    errors: Arc<AtomicU64>,
}

impl TxQueue for PcapTx {
    fn tx_burst(&mut self, pool: &mut Pool, bufs: &[Buf]) -> usize {
        if let Some(writer) = &self.writer {
            let mut guard = writer.lock().unwrap_or_else(|e| e.into_inner());
            for b in bufs {
                let ok = match guard.as_mut() {
                    Some(sink) => sink.write(pool.data(*b)),
                    None => false,
                };
                if !ok {
                    self.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        pool.free_all(bufs);
        bufs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("netio-pcap-{}-{name}", std::process::id()))
    }

    #[test]
    fn frames_pass_through_in_order() {
        let input = tmp("in.pcap");
        let output = tmp("out.pcap");
        let mut w = Writer::new(File::create(&input).unwrap()).unwrap();
        for i in 0..100u8 {
            w.write_frame(&[i; 60]).unwrap();
        }
        w.flush().unwrap();
        drop(w);

        let port =
            PcapPort::open("p0", [2, 0, 0, 0, 0, 1], 1500, Some(&input), Some(&output)).unwrap();
        let mut pool = Pool::new(32, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut tx = port.open_tx(0, &mut pool).unwrap();
        assert!(port.open_rx(0, &mut pool).is_err(), "second RX queue");
        let mut burst = Burst::new();
        while !rx.exhausted() {
            rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE);
            assert_eq!(tx.tx_burst(&mut pool, burst.as_slice()), burst.len());
            burst.clear();
        }
        assert_eq!(pool.available(), 32, "every buffer returned");
        port.finish().unwrap();
        let back = load_capture(&output).unwrap();
        assert_eq!(back.len(), 100);
        for (i, f) in back.iter().enumerate() {
            assert_eq!(f, &[i as u8; 60][..]);
        }
        let _ = std::fs::remove_file(input);
        let _ = std::fs::remove_file(output);
    }

    #[test]
    fn in_memory_port_keeps_what_it_sends() {
        let mut cap = Capture::new();
        cap.push(&[7; 60]);
        let port = PcapPort::in_memory("p0", [0; 6], 1500, cap);
        let mut pool = Pool::new(4, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut tx = port.open_tx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE), 1);
        assert!(rx.exhausted());
        tx.tx_burst(&mut pool, burst.as_slice());
        let sent = port.take_sent();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent.get(0), &[7; 60][..]);
        assert!(port.take_sent().is_empty());
    }

    #[test]
    fn a_burst_stops_at_the_maximum_and_the_next_resumes() {
        let mut cap = Capture::new();
        for i in 0..5u8 {
            cap.push(&[i; 60]);
        }
        let port = PcapPort::in_memory("p0", [0; 6], 1500, cap);
        let mut pool = Pool::new(16, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, 2), 2);
        assert!(!rx.exhausted());
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, 0), 0);
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, 64), 3);
        assert!(rx.exhausted());
        let first: Vec<u8> = burst.as_slice().iter().map(|b| pool.data(*b)[0]).collect();
        assert_eq!(first, [0, 1, 2, 3, 4]);
        pool.free_all(burst.as_slice());
    }

    #[test]
    fn oversize_frames_are_counted_not_lost() {
        let mut cap = Capture::new();
        cap.push(&[1; 60]);
        cap.push(&[2; 1793]); // one byte more than a 2048-byte buffer holds
        cap.push(&[3; 1792]);
        cap.push(&[4; 9000]);
        let port = PcapPort::in_memory("p0", [0; 6], 1500, cap);
        let mut pool = Pool::new(16, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE), 2);
        assert!(rx.exhausted());
        let c = rx.counters();
        assert_eq!(c.get(QueueCounter::RxOversize), 2);
        assert_eq!(c.total(crate::CounterKind::RxDrop), 2);
        pool.free_all(burst.as_slice());
    }

    #[test]
    fn mtu_larger_than_buffers_is_rejected_at_open() {
        let port = PcapPort::in_memory("jumbo", [0; 6], 9000, Capture::new());
        let mut pool = Pool::new(16, 2048).unwrap();
        let e = port
            .open_rx(0, &mut pool)
            .err()
            .expect("rejected")
            .to_string();
        assert!(
            e.contains("jumbo") && e.contains("MTU 9000") && e.contains("frame_size"),
            "{e}"
        );
        // 1774 + 18 = 1792 = 2048 - 256: the largest MTU that fits.
        let port = PcapPort::in_memory("p", [0; 6], 1774, Capture::new());
        assert!(port.open_rx(0, &mut pool).is_ok());
        let port = PcapPort::in_memory("p", [0; 6], 1775, Capture::new());
        assert!(port.open_rx(0, &mut pool).is_err());
        // With 16 KiB frames a 9000-byte MTU fits.
        let mut big = Pool::new(4, 16384).unwrap();
        let port = PcapPort::in_memory("jumbo", [0; 6], 9000, Capture::new());
        assert!(port.open_rx(0, &mut big).is_ok());
    }

    #[test]
    fn missing_file_is_named_in_the_error() {
        let e = PcapPort::open(
            "p0",
            [0; 6],
            1500,
            Some(Path::new("/nonexistent/x.pcap")),
            None,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("/nonexistent/x.pcap"));
    }
}

#[cfg(test)]
mod nofollow_tests {
    use super::*;

    #[test]
    fn tx_capture_never_follows_a_planted_symlink() {
        let dir = std::env::temp_dir().join(format!("sr-nofollow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.join("out.pcap");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let r = PcapPort::open("p", [2, 0, 0, 0, 0, 1], 1500, None, Some(&link));
        assert!(r.is_err(), "opened a capture through a symlink");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
