//! IPv4 fragmentation (RFC 791 3.2, RFC 1812 5.2.6 / 4.2.2.7).
//!
//! Fragment data sizes are multiples of 8 except the last; offsets continue
//! from the packet's own offset (a fragment may be fragmented again); MF is
//! set on all but the last, which keeps the original MF; the first fragment
//! keeps every option, the others only those with the copy flag.

use crate::drop::DropReason;
use crate::router::PortCtx;
use crate::wire::*;
use crate::worker::Out;
use netio::Buf;

/// Largest data end (offset x 8 + data length) a fragment may have.
pub(crate) const MAX_DATAGRAM: usize = 65_535;

/// Sends the IPv4 packet `buf` (larger than `egress`'s MTU, DF clear) as
/// fragments to `mac` on `port`, or drops it when it cannot be
/// fragmented. Counts it `forwarded` once, and `fragmented` / `fragments`.
pub(crate) fn fragment(out: &mut Out, egress: &PortCtx, port: usize, buf: Buf, mac: [u8; 6]) {
    let (src_mac, mtu) = (egress.mac, egress.mtu as usize);
    let d = out.pool.data(buf);
    let ip = &d[ETH_LEN..];
    let ihl = (ip[0] & 0xf) as usize * 4;
    let mut copied = [0u8; 40];
    let n_copied = ipv4_copied_options(&ip[20..ihl], &mut copied);
    let payload = ip.len() - ihl;
    let first_data = (mtu.saturating_sub(ihl)) / 8 * 8;
    let other_data = (mtu.saturating_sub(20 + n_copied)) / 8 * 8;
    if first_data == 0 || other_data == 0 {
        return out.drop(buf, DropReason::FragNeeded);
    }
    let field = get16(ip, 6);
    // The packet's own offset, in bytes.
    let (orig_off, orig_mf) = ((field & 0x1fff) as usize * 8, field & 0x2000);
    if orig_off + payload > MAX_DATAGRAM {
        return out.drop(buf, DropReason::FragOffsetOverflow);
    }
    let needed = 1 + payload.saturating_sub(first_data).div_ceil(other_data);
    if out.pool.available() < needed {
        return out.drop(buf, DropReason::NoBuffer);
    }
    let mut pos = 0usize;
    let mut count = 0u64;
    while pos < payload {
        let first = pos == 0;
        let hdr = if first { ihl } else { 20 + n_copied };
        let max = if first { first_data } else { other_data };
        let len = (payload - pos).min(max);
        let last = pos + len == payload;
        let mut nb = out.pool.alloc().expect("checked available");
        let (r, w) = out.pool.pair_mut(buf, nb);
        let ip = &r[ETH_LEN..];
        write_eth(w, mac, src_mac, ETH_IPV4);
        let o = &mut w[ETH_LEN..];
        o[..20].copy_from_slice(&ip[..20]);
        if first {
            o[20..ihl].copy_from_slice(&ip[20..ihl]);
        } else {
            o[20..hdr].copy_from_slice(&copied[..n_copied]);
        }
        o[0] = 0x40 | (hdr / 4) as u8;
        put16(o, 2, (hdr + len) as u16);
        let mf = if last { orig_mf } else { 0x2000 };
        // orig_off + pos < MAX_DATAGRAM and both are multiples of 8:
        // the offset fits the 13-bit field.
        put16(o, 6, mf | ((orig_off + pos) / 8) as u16);
        o[hdr..hdr + len].copy_from_slice(&ip[ihl + pos..ihl + pos + len]);
        ipv4_set_checksum(&mut o[..hdr]);
        nb.len = (ETH_LEN + hdr + len) as u32;
        out.send(port, nb);
        count += 1;
        pos += len;
    }
    out.pool.free(buf);
    out.count_forwarded();
    out.stats.fragmented.add(1);
    out.stats.fragments.add(count);
}
