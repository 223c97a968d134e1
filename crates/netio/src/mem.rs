//! The `mem` port: the instrument for measuring the pipeline's own cost.
//!
//! RX replays the frames of a capture forever, copying each into a pool
//! buffer as a NIC's DMA would (so the cache behaviour of fresh packet data
//! is real); TX frees what it is given. Any number of RX queues can be
//! opened, each replaying the capture from its own position.
//!
//! Receiving is a bulk operation over the burst, as DPDK's `net_pcap`
//! infinite RX (an mbuf bulk allocation, then a copy per frame): the
//! buffers of the whole burst are taken from the pool in one step
//! ([`Pool::alloc_bulk`]) and each frame is copied in whole 64-byte
//! blocks from a copy of the capture laid out in such blocks
//! ([`Blocks`]), a few vector moves instead of a call to `memcpy` with a
//! length. Frames too large for the pool's buffers are left out of a
//! queue's replay list when it is opened, and counted as skipped from
//! the number of frames delivered (`rx_oversize`), so the per-frame loop
//! has no branch for them.

use crate::pcap::load_capture;
use crate::pcap_file::Capture;
use crate::{
    Buf, Burst, NetioError, Pool, Port, PortInfo, QueueCounter, QueueCounters, RxQueue, TxQueue,
    HEADROOM,
};
use std::path::Path;
use std::sync::Arc;

/// The unit frames are copied in: one cache line.
const BLOCK: usize = 64;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u8; BLOCK]);

/// A capture's frames, each starting on a fresh [`Block`] and padded
/// with zeros to a whole number of them. A buffer's data starts
/// [`HEADROOM`] bytes into a frame of a power-of-two size of at least
/// 2048, so it is block aligned and its room is a whole number of blocks:
/// a frame that fits a buffer fits it padded too.
struct Blocks {
    blocks: Vec<Block>,
    /// Per capture frame: where it is and how long.
    frames: Vec<Template>,
}

#[derive(Clone, Copy)]
struct Template {
    /// Index of its first block.
    first: u32,
    blocks: u32,
    len: u32,
}

impl Blocks {
    fn new(capture: &Capture) -> Blocks {
        let mut b = Blocks {
            blocks: Vec::new(),
            frames: Vec::with_capacity(capture.len()),
        };
        for f in capture.iter() {
            let first = b.blocks.len() as u32;
            for chunk in f.chunks(BLOCK) {
                let mut blk = Block([0; BLOCK]);
                blk.0[..chunk.len()].copy_from_slice(chunk);
                b.blocks.push(blk);
            }
            b.frames.push(Template {
                first,
                blocks: b.blocks.len() as u32 - first,
                len: f.len() as u32,
            });
        }
        b
    }
}

pub struct MemPort {
    info: PortInfo,
    templates: Arc<Blocks>,
}

impl MemPort {
    pub fn open(
        name: &str,
        mac: [u8; 6],
        mtu: u16,
        rx_pcap: Option<&Path>,
        rx_queues: u16,
    ) -> Result<Self, NetioError> {
        let templates = match rx_pcap {
            Some(p) => load_capture(p)?,
            None => Capture::new(),
        };
        Ok(Self::from_capture(name, mac, mtu, templates, rx_queues))
    }

    pub fn from_capture(
        name: &str,
        mac: [u8; 6],
        mtu: u16,
        frames: Capture,
        rx_queues: u16,
    ) -> Self {
        MemPort {
            info: PortInfo {
                name: name.to_string(),
                mac,
                mtu,
                rx_queues: rx_queues.max(1),
            },
            templates: Arc::new(Blocks::new(&frames)),
        }
    }
}

impl Port for MemPort {
    fn info(&self) -> &PortInfo {
        &self.info
    }

    fn open_rx(&self, queue: u16, pool: &mut Pool) -> Result<Box<dyn RxQueue>, NetioError> {
        crate::check_mtu_fits(&self.info.name, self.info.mtu, pool)?;
        let room = (pool.frame_size() - HEADROOM) as usize;
        let all = &self.templates.frames;
        // Queues start at different frames so workers see a mix: the
        // replay list is the capture from frame `queue` on, round, with
        // what does not fit a buffer left out (and remembered by position).
        let start = queue as usize % all.len().max(1);
        let (mut replay, mut position) = (Vec::new(), Vec::new());
        for k in 0..all.len() {
            let t = all[(start + k) % all.len()];
            if t.len as usize <= room {
                replay.push(t);
                position.push(k as u32);
            }
        }
        Ok(Box::new(MemRx {
            blocks: self.templates.clone(),
            replay,
            position,
            capture_len: all.len() as u64,
            next: 0,
            queue,
            delivered: 0,
            empty_passes: 0,
        }))
    }

    fn open_tx(&self, _worker: usize, _pool: &mut Pool) -> Result<Box<dyn TxQueue>, NetioError> {
        Ok(Box::new(MemTx))
    }
}

struct MemRx {
    blocks: Arc<Blocks>,
    /// The frames this queue replays, in order, round and round.
    replay: Vec<Template>,
    /// Each replayed frame's place in the capture, counted from this
    /// queue's first frame (for the `rx_oversize` count).
    position: Vec<u32>,
    capture_len: u64,
    /// Index in `replay` of the next frame.
    next: usize,
    queue: u16,
    /// Frames delivered since the queue was opened.
    delivered: u64,
    /// Polls of a capture in which no frame fits a buffer: each passed
    /// over the whole capture once, as a NIC would drop every frame.
    empty_passes: u64,
}

impl MemRx {
    /// Capture frames skipped because they do not fit a buffer: those
    /// passed over up to the last frame delivered (the replay passes the
    /// capture's frames in order, taking the ones that fit).
    fn oversize(&self) -> u64 {
        let m = self.replay.len() as u64;
        if m == 0 {
            return self.empty_passes * self.capture_len;
        }
        let Some(last) = self.delivered.checked_sub(1) else {
            return 0;
        };
        let passed =
            last / m * self.capture_len + u64::from(self.position[(last % m) as usize]) + 1;
        passed - self.delivered
    }
}

impl RxQueue for MemRx {
    #[inline]
    fn rx_burst(&mut self, pool: &mut Pool, out: &mut Burst, max: usize) -> usize {
        let max = max.min(out.room());
        let m = self.replay.len();
        if m == 0 || max == 0 {
            // Nothing fits (or nothing asked): one pass over the capture.
            self.empty_passes += u64::from(max > 0);
            return 0;
        }
        let have = out.len();
        let bufs = &mut out.spare_mut()[..max];
        // Pool empty: fewer frames now, the rest next time.
        let n = pool.alloc_bulk(bufs);
        let (mut next, blocks) = (self.next, &self.blocks.blocks);
        for b in &mut bufs[..n] {
            let t = self.replay[next];
            next += 1;
            if next == m {
                next = 0;
            }
            let from = &blocks[t.first as usize..][..t.blocks as usize];
            let room = pool.room_mut(*b);
            // Whole blocks: a fixed-size copy each (see `Blocks`); a
            // frame of up to 64 bytes, the common one, without a loop.
            match (from, room.first_chunk_mut::<BLOCK>()) {
                ([one], Some(to)) => *to = one.0,
                _ => {
                    for (to, from) in room.chunks_exact_mut(BLOCK).zip(from) {
                        to.copy_from_slice(&from.0);
                    }
                }
            }
            b.len = t.len;
        }
        self.next = next;
        out.set_len(have + n);
        self.delivered += n as u64;
        n
    }

    fn queue_id(&self) -> u16 {
        self.queue
    }

    fn counters(&mut self) -> QueueCounters {
        let mut c = QueueCounters::default();
        c.set(QueueCounter::RxOversize, self.oversize());
        c
    }
}

struct MemTx;

impl TxQueue for MemTx {
    #[inline]
    fn tx_burst(&mut self, pool: &mut Pool, bufs: &[Buf]) -> usize {
        pool.free_all(bufs);
        bufs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BURST_SIZE;

    #[test]
    fn replays_forever_and_frees_on_tx() {
        let mut cap = Capture::new();
        cap.push(&[1; 64]);
        cap.push(&[2; 128]);
        let port = MemPort::from_capture("m0", [0; 6], 1500, cap, 2);
        let mut pool = Pool::new(256, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut tx = port.open_tx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        for _ in 0..10 {
            assert_eq!(
                rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE),
                crate::BURST_SIZE
            );
            let lens: Vec<u32> = burst.as_slice().iter().map(|b| b.len).collect();
            assert!(lens.chunks(2).all(|c| c == [64, 128]));
            tx.tx_burst(&mut pool, burst.as_slice());
            burst.clear();
        }
        assert_eq!(pool.available(), 256);
    }

    #[test]
    fn oversize_templates_are_skipped_and_counted() {
        let mut cap = Capture::new();
        cap.push(&[1; 64]);
        cap.push(&[2; 4000]);
        let port = MemPort::from_capture("m0", [0; 6], 1500, cap, 1);
        let mut pool = Pool::new(256, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        // Before: the replay stopped for good at the first oversize frame.
        assert_eq!(
            rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE),
            crate::BURST_SIZE
        );
        assert!(burst.as_slice().iter().all(|b| b.len == 64));
        assert_eq!(rx.counters().get(QueueCounter::RxOversize), 63);
        pool.free_all(burst.as_slice());
        let mut only_big = Capture::new();
        only_big.push(&[2; 4000]);
        let port = MemPort::from_capture("m1", [0; 6], 1500, only_big, 1);
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        burst.clear();
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE), 0);
        assert_eq!(rx.counters().get(QueueCounter::RxOversize), 1);
    }

    #[test]
    fn a_burst_stops_at_the_maximum_and_the_next_resumes() {
        let mut cap = Capture::new();
        for i in 0..5u8 {
            cap.push(&[i; 60]);
        }
        let port = MemPort::from_capture("m0", [0; 6], 1500, cap, 1);
        let mut pool = Pool::new(16, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, 3), 3);
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, 0), 0);
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, 4), 4);
        let first: Vec<u8> = burst.as_slice().iter().map(|b| pool.data(*b)[0]).collect();
        assert_eq!(first, [0, 1, 2, 3, 4, 0, 1]);
        pool.free_all(burst.as_slice());
        assert_eq!(pool.available(), 16);
    }

    /// The bulk receive delivers what the frame-by-frame replay did (every
    /// frame of the capture in turn from the queue's own start, the
    /// oversize ones skipped and counted as they are passed), for
    /// captures of mixed sizes, several queues and any burst sizes.
    #[test]
    fn bulk_receive_replays_as_frame_by_frame() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut pool = Pool::new(256, 2048).unwrap();
        for _ in 0..50 {
            let count = 1 + rand(9) as usize;
            let mut cap = Capture::new();
            let mut frames = Vec::new();
            for i in 0..count {
                let len = match rand(4) {
                    0 => 1792 + 1 + rand(3000) as usize,
                    1 => 1792 - rand(3) as usize,
                    _ => 1 + rand(300) as usize,
                };
                let f: Vec<u8> = (0..len).map(|k| (i * 31 + k) as u8).collect();
                cap.push(&f);
                frames.push(f);
            }
            let port = MemPort::from_capture("m0", [0; 6], 1500, cap, 3);
            for queue in 0..3u16 {
                let mut rx = port.open_rx(queue, &mut pool).unwrap();
                // The frame-by-frame replay: where it is, what it skipped.
                let (mut next, mut skipped) = (queue as usize % count, 0u64);
                let mut burst = Burst::new();
                for _ in 0..20 {
                    let max = rand(70) as usize;
                    let got = rx.rx_burst(&mut pool, &mut burst, max);
                    let mut want = Vec::new();
                    let mut run = 0;
                    while want.len() < max.min(BURST_SIZE) && run < count {
                        let f = &frames[next];
                        next = (next + 1) % count;
                        if f.len() > 1792 {
                            skipped += 1;
                            run += 1;
                            continue;
                        }
                        run = 0;
                        want.push(f.clone());
                    }
                    assert_eq!(got, want.len());
                    for (b, w) in burst.as_slice().iter().zip(&want) {
                        assert_eq!(pool.data(*b), &w[..]);
                    }
                    assert_eq!(rx.counters().get(QueueCounter::RxOversize), skipped);
                    pool.free_all(burst.as_slice());
                    burst.clear();
                }
            }
        }
        assert_eq!(pool.available(), 256);
    }

    #[test]
    fn no_capture_receives_nothing() {
        let port = MemPort::from_capture("m0", [0; 6], 1500, Capture::new(), 1);
        let mut pool = Pool::new(4, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE), 0);
    }
}
