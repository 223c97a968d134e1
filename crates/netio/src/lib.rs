//! Packet I/O for softrouter: the buffer pool, bursts, the port/queue
//! abstraction and its backends.
//!
//! The model is ixy.rs and DPDK's ethdev: a worker owns one [`Pool`] of
//! fixed-size frames (the AF_XDP UMEM when the port is `afxdp`), receives
//! bursts of [`Buf`] descriptors from its [`RxQueue`]s and hands bursts to its
//! private [`TxQueue`] on every port. Descriptors are plain `Copy` values
//! (offset + length), so moving a packet between stages never touches its
//! bytes, and a buffer is owned by exactly one place at a time: the pool's
//! free list, a queue, or the worker's pipeline.
//!
//! Backends, one file each:
//! - [`pcap`]: reads a capture once, writes what is sent to a capture
//!   (deterministic, for golden tests);
//! - [`mem`]: replays a capture forever, copying each frame into a pool
//!   buffer as a NIC's DMA would, and frees what is sent (for measuring the
//!   pipeline's own cost);
//! - [`afxdp`] and [`afpacket`]: live interfaces (kernel bypass through
//!   AF_XDP, and the AF_PACKET fallback).

pub mod afpacket;
pub mod afxdp;
/// The raw `bpf(2)` wrappers (no libbpf), for other crates' XDP programs.
pub use afxdp::bpf;
pub mod burst;
pub mod counters;
pub mod error;
pub mod ifinfo;
pub mod mem;
pub mod pcap;
pub mod pcap_file;
pub mod pool;
pub mod port;
mod sys;
pub mod xdp_features;
pub use sys::poll_in;

pub use burst::{Burst, BURST_SIZE};
pub use counters::{CounterKind, QueueCounter, QueueCounters};
pub use error::NetioError;
pub use pool::{Buf, Pool, HEADROOM};
pub use port::{check_mtu_fits, Port, PortInfo, RxQueue, TxQueue, FRAME_OVERHEAD};
