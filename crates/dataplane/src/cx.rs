//! The per-burst context every stage works in: [`Out`] (the worker's
//! pool, its TX staging and the counters of the frame's input port) and
//! [`Cx`] (that, the routing state read-only, the round's time and the
//! ICMP error limiter). The worker builds one per burst (and one for the
//! hold timers); stages take it and call each other one way: input ->
//! forward -> hold -> output -> TX staging, with local delivery and ICMP
//! errors as functions over the context. This module depends on no stage.

use crate::drop::DropReason;
use crate::shared::PortCtx;
use crate::shared::Shared;
use crate::stats::WorkerStats;
use crate::tokens::TokenBucket;
use crate::tx::Tx;
use fib::{NextHopId, Target};
use netio::{Buf, Pool};

/// What a stage does with frames: reads and writes them in the worker's
/// pool, allocates new ones, stages them for TX, and counts.
///
/// Every received frame ends in one bucket of its input port (see
/// [`crate::accounting`]): drops, `forwarded` and `local` are counted on
/// [`Out::in_port`], the input port of the frame being processed. The
/// worker sets it for a burst; `hold::unhold` sets it
/// ([`Out::set_in_port`]) for each packet taken out of a hold queue. Code
/// that ends a frame outside those (a new timer, a table flush) sets it
/// first, or goes through `unhold`.
pub(crate) struct Out<'a> {
    pub pool: &'a mut Pool,
    pub tx: &'a mut Tx,
    pub stats: &'a WorkerStats,
    in_port: usize,
    /// Frames of `in_port` forwarded and not yet added to its counter:
    /// the counter is written once per burst (when the input port changes
    /// and when the `Out` goes), not once per packet.
    forwarded: u64,
}

impl<'a> Out<'a> {
    pub fn new(
        pool: &'a mut Pool,
        tx: &'a mut Tx,
        stats: &'a WorkerStats,
        in_port: usize,
    ) -> Out<'a> {
        Out {
            pool,
            tx,
            stats,
            in_port,
            forwarded: 0,
        }
    }
}

impl Drop for Out<'_> {
    fn drop(&mut self) {
        self.flush_forwarded();
    }
}

impl Out<'_> {
    /// The input port of the frame being processed.
    #[inline]
    pub fn in_port(&self) -> usize {
        self.in_port
    }

    /// Makes `port` the input port (of a frame taken out of a hold queue):
    /// what was counted for the previous one is added to its counters.
    #[inline]
    pub fn set_in_port(&mut self, port: usize) {
        self.flush_forwarded();
        self.in_port = port;
    }

    #[inline]
    fn flush_forwarded(&mut self) {
        if self.forwarded > 0 {
            self.stats.ports[self.in_port].forwarded.add(self.forwarded);
            self.forwarded = 0;
        }
    }

    /// Stages `buf` for `port`.
    #[inline]
    pub fn send(&mut self, port: usize, buf: Buf) {
        self.tx.stage(self.pool, self.stats, port, buf);
    }

    /// Sends `buf`, a frame the router made itself, out of `port`.
    #[inline]
    pub fn send_generated(&mut self, port: usize, buf: Buf) {
        self.stats.generated.add(1);
        self.send(port, buf);
    }

    /// Frees `buf` and counts it dropped for `r` on the input port.
    #[inline]
    pub fn drop(&mut self, buf: Buf, r: DropReason) {
        self.pool.free(buf);
        self.count_drop(r);
    }

    /// Counts `r` on the input port (no buffer to free: ICMP errors not
    /// generated, which are about the current frame).
    #[inline]
    pub fn count_drop(&self, r: DropReason) {
        self.stats.drop_on(self.in_port, r, 1);
    }

    /// Counts the current frame forwarded (added to the port's counter
    /// by [`Out::set_in_port`] or when the `Out` goes).
    #[inline]
    pub fn count_forwarded(&mut self) {
        self.forwarded += 1;
    }

    /// Counts the current frame forwarded and stages it for `port` (its
    /// MACs rewritten).
    #[inline]
    pub fn forward(&mut self, port: usize, buf: Buf) {
        self.count_forwarded();
        self.send(port, buf);
    }

    /// Counts the current frame consumed by the router.
    #[inline]
    pub fn count_local(&self) {
        self.stats.ports[self.in_port].local.add(1);
    }

    /// Consumes the current frame (counted `local`) and frees it.
    #[inline]
    pub fn consume(&mut self, buf: Buf) {
        self.count_local();
        self.pool.free(buf);
    }

    /// Sends a reply built in the received frame's buffer back out of the
    /// input port: the request is `local`, the reply `generated`.
    #[inline]
    pub fn reply(&mut self, buf: Buf) {
        self.count_local();
        self.send_generated(self.in_port, buf);
    }
}

/// A stage's view of the worker while a frame is processed: the routing
/// state (read-only), the time of the round, the output side and the ICMP
/// error limiter. Stages that need more (the next-hop table, the hold
/// queues) take it as an argument.
pub(crate) struct Cx<'a> {
    pub shared: &'a Shared,
    pub now_ms: u64,
    pub out: Out<'a>,
    /// The ICMP error limiter (see [`crate::icmp`]).
    pub icmp: &'a mut TokenBucket,
    /// Where this context last sent a packet to a resolved neighbour
    /// (see [`Egress`]): the packets of a burst mostly go to a few next
    /// hops, and what was right for one packet is for the rest of the
    /// burst.
    pub egress: Option<Egress>,
}

impl<'a> Cx<'a> {
    pub fn new(shared: &'a Shared, now_ms: u64, out: Out<'a>, icmp: &'a mut TokenBucket) -> Cx<'a> {
        Cx {
            shared,
            now_ms,
            out,
            icmp,
            egress: None,
        }
    }
}

/// The next hop a context last sent to with its neighbour's MAC, and
/// what sending there takes: the egress port, its MTU and the frame's new
/// MAC pair. `hold::send` reuses it for the next packet to the same next
/// hop without reading the neighbour entry or the port; `forward::v4`
/// sends a packet whose route is `route` straight here.
///
/// Valid for the rest of the burst: the next hop's id is not reused
/// before the worker's quiescent point at the end of the round, and a
/// new MAC learned or a next hop changed meanwhile applies from the next
/// burst on, as if it had come a few microseconds later (the burst's
/// routes were looked up at its start anyway).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Egress {
    pub id: NextHopId,
    pub port: usize,
    pub mtu: u16,
    /// Destination (the neighbour's) and source (the port's) MAC: the
    /// frame's first 12 bytes, written in one copy.
    pub macs: [u8; 12],
    /// The IPv4 route target known to lead to `id` and nothing else: a
    /// single gateway next hop (not a group, not a connected route, whose
    /// packets each have their own host entry). [`Egress::NO_ROUTE`] until
    /// `forward::v4` has seen one.
    pub route: Target,
}

impl Egress {
    /// No route leads here yet: an invalid target, never a lookup result.
    pub const NO_ROUTE: Target = Target(u32::MAX);

    pub fn new(id: NextHopId, port: usize, pc: &PortCtx, mac: [u8; 6]) -> Egress {
        let mut macs = [0u8; 12];
        macs[..6].copy_from_slice(&mac);
        macs[6..].copy_from_slice(&pc.mac);
        Egress {
            id,
            port,
            mtu: pc.mtu,
            macs,
            route: Egress::NO_ROUTE,
        }
    }
}
