//! Helpers for the live-backend tests: run a closure in a network
//! namespace, build marked UDP/IPv4 test frames (198.18.0.1 -> 198.18.0.2),
//! and a plain AF_PACKET socket for the far end of a veth.
#![allow(dead_code)]

use netio::{Buf, Burst, Pool, RxQueue};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

pub const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
pub const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 2];
/// Payload marker, so stray frames (IPv6 ND, ...) are ignored.
pub const MAGIC: &[u8; 8] = b"SRNETIO!";

/// Runs `f` on a thread moved into namespace `ns` (only that thread moves);
/// panics of `f` propagate.
pub fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("open netns file");
        // SAFETY: setns on a valid netns fd; affects this thread only.
        let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
        f()
    })
    .join()
    .unwrap_or_else(|e| std::panic::resume_unwind(e))
}

/// A UDP/IPv4 frame 198.18.0.1:(1000+flow) -> 198.18.0.2:9 whose payload is
/// MAGIC, the sequence number and `pad` filler bytes.
pub fn frame(seq: u32, flow: u16, pad: usize) -> Vec<u8> {
    let mut payload = MAGIC.to_vec();
    payload.extend_from_slice(&seq.to_be_bytes());
    payload.extend((0..pad).map(|i| (i as u8) ^ (seq as u8)));
    let udp_len = 8 + payload.len();
    let ip_len = 20 + udp_len;
    let mut f = Vec::with_capacity(14 + ip_len);
    f.extend_from_slice(&DST_MAC);
    f.extend_from_slice(&SRC_MAC);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    let mut ip = [0u8; 20];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
    ip[4..6].copy_from_slice(&(seq as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[198, 18, 0, 1]);
    ip[16..20].copy_from_slice(&[198, 18, 0, 2]);
    packet::ipv4::Packet::new_unchecked(&mut ip[..]).fill_checksum();
    f.extend_from_slice(&ip);
    f.extend_from_slice(&(1000 + flow).to_be_bytes());
    f.extend_from_slice(&9u16.to_be_bytes());
    f.extend_from_slice(&(udp_len as u16).to_be_bytes());
    f.extend_from_slice(&[0, 0]); // no UDP checksum (allowed for IPv4)
    f.extend_from_slice(&payload);
    f
}

/// Sequence number of a test frame, or None for anything else.
pub fn seq_of(f: &[u8]) -> Option<u32> {
    let p = 14 + 20 + 8;
    if f.len() >= p + 12 && f[12..14] == [0x08, 0x00] && &f[p..p + 8] == MAGIC {
        Some(u32::from_be_bytes(f[p + 8..p + 12].try_into().unwrap()))
    } else {
        None
    }
}

/// A plain AF_PACKET socket on `iface` (this thread's namespace), not
/// seeing its own transmissions.
pub struct RawSock {
    fd: OwnedFd,
    ifindex: u32,
}

impl RawSock {
    pub fn open(iface: &str) -> RawSock {
        let ifindex = netio::ifinfo::ifindex(iface).expect("ifindex");
        // SAFETY: plain socket calls, checked.
        unsafe {
            let fd = libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                (libc::ETH_P_ALL as u16).to_be() as i32,
            );
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let fd = OwnedFd::from_raw_fd(fd);
            let one: i32 = 1;
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_PACKET,
                23, // PACKET_IGNORE_OUTGOING
                (&one as *const i32).cast(),
                4,
            );
            // Tests read after sending everything: room for thousands.
            let big: i32 = 32 << 20;
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&big as *const i32).cast(),
                4,
            );
            let mut sa: libc::sockaddr_ll = std::mem::zeroed();
            sa.sll_family = libc::AF_PACKET as u16;
            sa.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
            sa.sll_ifindex = ifindex as i32;
            let r = libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            );
            assert_eq!(r, 0, "bind: {}", std::io::Error::last_os_error());
            RawSock { fd, ifindex }
        }
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub fn send(&self, f: &[u8]) {
        // SAFETY: sending a live buffer on a bound socket.
        loop {
            let r = unsafe { libc::send(self.fd(), f.as_ptr().cast(), f.len(), 0) };
            if r == f.len() as isize {
                return;
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOBUFS) || e.raw_os_error() == Some(libc::EAGAIN) {
                std::thread::sleep(Duration::from_micros(100));
                continue;
            }
            panic!("send: {e}");
        }
    }

    /// Receives test frames until `n` arrived or `timeout` passed.
    pub fn recv_test_frames(&self, n: usize, timeout: Duration) -> Vec<Vec<u8>> {
        let end = Instant::now() + timeout;
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65536];
        while got.len() < n && Instant::now() < end {
            if !netio::poll_in(self.fd(), 50) {
                continue;
            }
            // SAFETY: receiving into a live buffer.
            let r = unsafe {
                libc::recv(
                    self.fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if r > 0 && seq_of(&buf[..r as usize]).is_some() {
                got.push(buf[..r as usize].to_vec());
            }
        }
        got
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }
}

/// Receives test frames from `rx` until `n` arrived or `timeout` passed,
/// returning their bytes; every buffer is freed.
pub fn recv_from_queue(
    rx: &mut dyn RxQueue,
    pool: &mut Pool,
    n: usize,
    timeout: Duration,
) -> Vec<Vec<u8>> {
    let end = Instant::now() + timeout;
    let mut got = Vec::new();
    let mut burst = Burst::new();
    while got.len() < n && Instant::now() < end {
        if rx.rx_burst(pool, &mut burst, netio::BURST_SIZE) == 0 {
            if let Some(fd) = rx.wait_fd() {
                netio::poll_in(fd, 20);
            }
            continue;
        }
        for b in burst.as_slice() {
            let d = pool.data(*b);
            if seq_of(d).is_some() {
                got.push(d.to_vec());
            }
        }
        pool.free_all(burst.as_slice());
        burst.clear();
    }
    got
}

/// Copies test frames `first..first+n` into pool buffers.
pub fn fill_bufs(pool: &mut Pool, first: u32, n: u32, pad: usize) -> Vec<Buf> {
    (first..first + n)
        .map(|i| {
            let mut b = pool.alloc().expect("pool has room");
            let f = frame(i, (i % 64) as u16, pad);
            pool.room_mut(b)[..f.len()].copy_from_slice(&f);
            b.len = f.len() as u32;
            b
        })
        .collect()
}

/// Sends `bufs` through `tx`, flushing until nothing is in flight. Frames
/// the queue refused are freed and counted; returns how many were taken.
pub fn send_all(tx: &mut dyn netio::TxQueue, pool: &mut Pool, bufs: &[Buf]) -> usize {
    let mut taken = 0;
    let end = Instant::now() + Duration::from_secs(5);
    for chunk in bufs.chunks(netio::BURST_SIZE) {
        let mut off = 0;
        while off < chunk.len() && Instant::now() < end {
            let k = tx.tx_burst(pool, &chunk[off..]);
            off += k;
            tx.flush(pool);
            if k == 0 {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        taken += off;
        pool.free_all(&chunk[off..]);
    }
    while tx.in_flight() > 0 && Instant::now() < end {
        tx.flush(pool);
        std::thread::sleep(Duration::from_micros(100));
    }
    taken
}

/// Output of `ip -d link show dev IF` in this thread's namespace.
pub fn ip_link_show(iface: &str) -> String {
    let out = std::process::Command::new("ip")
        .args(["-d", "link", "show", "dev", iface])
        .output()
        .expect("ip");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// True if `ip -d link show` reports an XDP program on the interface.
pub fn has_xdp(iface: &str) -> bool {
    let s = ip_link_show(iface);
    s.contains("prog/xdp")
        || s.contains(" xdpgeneric")
        || s.contains(" xdpdrv")
        || s.contains(" xdp ")
}
