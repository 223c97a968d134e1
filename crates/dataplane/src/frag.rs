//! IPv4 fragmentation (RFC 791 3.2, RFC 1812 5.2.6 / 4.2.2.7).
//!
//! Fragment data sizes are multiples of 8 except the last; offsets continue
//! from the packet's own offset (a fragment may be fragmented again); MF is
//! set on all but the last, which keeps the original MF; the first fragment
//! keeps every option, the others only those with the copy flag.

use crate::cx::Out;
use crate::drop::DropReason;
use crate::shared::PortCtx;
use netio::Buf;
use packet::ethernet::{self, Address, ETH_IPV4, ETH_LEN};
use packet::ipv4::{self, IPV4_LEN, IPV4_MAX_LEN, IP_MF, IP_OFFSET};

/// Largest data end (offset x 8 + data length) a fragment may have.
pub(crate) const MAX_DATAGRAM: usize = 65_535;

/// Sends the IPv4 packet `buf` (larger than `egress`'s MTU, DF clear) as
/// fragments to `mac` on `port`, or drops it when it cannot be
/// fragmented. Counts it `forwarded` once, and `fragmented` / `fragments`.
#[cold]
#[inline(never)]
pub(crate) fn fragment(out: &mut Out, egress: &PortCtx, port: usize, buf: Buf, mac: [u8; 6]) {
    let (src_mac, mtu) = (egress.mac, egress.mtu as usize);
    let ip = ipv4::Packet::new_unchecked(&out.pool.data(buf)[ETH_LEN..]);
    let ihl = ip.header_len();
    let mut copied = [0u8; IPV4_MAX_LEN - IPV4_LEN];
    let n_copied = ipv4::copied_options(ip.options(), &mut copied);
    let payload = ip.into_inner().len() - ihl;
    let first_data = (mtu.saturating_sub(ihl)) / 8 * 8;
    let other_data = (mtu.saturating_sub(IPV4_LEN + n_copied)) / 8 * 8;
    if first_data == 0 || other_data == 0 {
        return out.drop(buf, DropReason::FragNeeded);
    }
    // The packet's own offset, in bytes, and MF.
    let (orig_off, orig_mf) = (usize::from(ip.frag_offset()), ip.more_frags());
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
        let hdr = if first { ihl } else { IPV4_LEN + n_copied };
        let max = if first { first_data } else { other_data };
        let len = (payload - pos).min(max);
        let last = pos + len == payload;
        let mut nb = out.pool.alloc().expect("checked available");
        let (r, w) = out.pool.pair_mut(buf, nb);
        let ip = &r[ETH_LEN..];
        ethernet::Frame::new_unchecked(&mut *w).write_header(
            Address(mac),
            Address(src_mac),
            ETH_IPV4,
        );
        let o = &mut w[ETH_LEN..ETH_LEN + hdr + len];
        o[..IPV4_LEN].copy_from_slice(&ip[..IPV4_LEN]);
        if first {
            o[IPV4_LEN..ihl].copy_from_slice(&ip[IPV4_LEN..ihl]);
        } else {
            o[IPV4_LEN..hdr].copy_from_slice(&copied[..n_copied]);
        }
        o[hdr..].copy_from_slice(&ip[ihl + pos..ihl + pos + len]);
        let mut f = ipv4::Packet::new_unchecked(o);
        f.set_header_len(hdr);
        f.set_total_len((hdr + len) as u16);
        let mf = if last && !orig_mf { 0 } else { IP_MF };
        // orig_off + pos < MAX_DATAGRAM and both are multiples of 8:
        // the offset fits the 13-bit field.
        f.set_frag_off_raw(mf | (((orig_off + pos) / 8) as u16 & IP_OFFSET));
        f.fill_checksum();
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
