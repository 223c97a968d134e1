//! The `mem` port: the instrument for measuring the pipeline's own cost.
//!
//! RX replays the frames of a capture forever, copying each into a pool
//! buffer as a NIC's DMA would (so the cache behaviour of fresh packet data
//! is real); TX frees what it is given. Any number of RX queues can be
//! opened, each replaying the capture from its own position.

use crate::pcap::{copy_in, load_capture};
use crate::pcap_file::Capture;
use crate::{
    Buf, Burst, NetioError, Pool, Port, PortInfo, QueueCounter, QueueCounters, RxQueue, TxQueue,
};
use std::path::Path;
use std::sync::Arc;

pub struct MemPort {
    info: PortInfo,
    templates: Arc<Capture>,
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
            templates: Arc::new(frames),
        }
    }
}

impl Port for MemPort {
    fn info(&self) -> &PortInfo {
        &self.info
    }

    fn open_rx(&self, queue: u16, pool: &mut Pool) -> Result<Box<dyn RxQueue>, NetioError> {
        crate::check_mtu_fits(&self.info.name, self.info.mtu, pool)?;
        let n = self.templates.len().max(1);
        Ok(Box::new(MemRx {
            templates: self.templates.clone(),
            // Queues start at different frames so workers see a mix.
            next: queue as usize % n,
            queue,
            oversize: 0,
        }))
    }

    fn open_tx(&self, _worker: usize, _pool: &mut Pool) -> Result<Box<dyn TxQueue>, NetioError> {
        Ok(Box::new(MemTx))
    }
}

struct MemRx {
    templates: Arc<Capture>,
    next: usize,
    queue: u16,
    /// Template frames skipped because they do not fit a buffer.
    oversize: u64,
}

impl RxQueue for MemRx {
    #[inline]
    fn rx_burst(&mut self, pool: &mut Pool, out: &mut Burst, max: usize) -> usize {
        let count = self.templates.len();
        if count == 0 {
            return 0;
        }
        let max = max.min(out.room());
        let room = (pool.frame_size() - crate::HEADROOM) as usize;
        let mut n = 0;
        // Oversize frames skipped in a row: a capture of nothing but
        // oversize frames ends the burst after one pass instead of spinning.
        let mut skipped = 0;
        while n < max && skipped < count {
            let frame = self.templates.get(self.next);
            self.next += 1;
            if self.next == count {
                self.next = 0;
            }
            if frame.len() > room {
                // As a NIC would: dropped, counted (`rx_oversize`).
                self.oversize += 1;
                skipped += 1;
                continue;
            }
            let Some(buf) = copy_in(pool, frame) else {
                // Pool empty: replay this frame next time.
                self.next = self.next.checked_sub(1).unwrap_or(count - 1);
                break;
            };
            let _ = out.push(buf);
            skipped = 0;
            n += 1;
        }
        n
    }

    fn queue_id(&self) -> u16 {
        self.queue
    }

    fn counters(&mut self) -> QueueCounters {
        let mut c = QueueCounters::default();
        c.set(QueueCounter::RxOversize, self.oversize);
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

    #[test]
    fn no_capture_receives_nothing() {
        let port = MemPort::from_capture("m0", [0; 6], 1500, Capture::new(), 1);
        let mut pool = Pool::new(4, 2048).unwrap();
        let mut rx = port.open_rx(0, &mut pool).unwrap();
        let mut burst = Burst::new();
        assert_eq!(rx.rx_burst(&mut pool, &mut burst, crate::BURST_SIZE), 0);
    }
}
