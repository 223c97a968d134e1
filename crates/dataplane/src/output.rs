//! Output: the MAC rewrite of a forwarded packet whose neighbour is
//! resolved, the hand-off to fragmentation (`frag.rs`) when it is larger
//! than the egress MTU, and its staging for TX. Called by the hold stage
//! (`hold.rs`) for a packet sent now or released from a hold queue.

use crate::cx::{Egress, Out};
use crate::frag;
use crate::shared::PortCtx;
use netio::Buf;
use packet::ethernet::ETH_LEN;

/// MAC rewrite and staging of a forwarded packet on `port` to `mac`
/// (fragmenting IPv4 larger than the MTU; only IPv4 without DF gets here
/// that large, checked before); counts the packet forwarded. Inlined into
/// every caller, with fragmentation out of line (cold): the common path
/// is a few stores, not a call with fragmentation's stack frame.
#[inline(always)]
pub(crate) fn emit(out: &mut Out, ports: &[PortCtx], buf: Buf, port: usize, mac: [u8; 6]) {
    let pc = &ports[port];
    if buf.len as usize > ETH_LEN + pc.mtu as usize {
        return frag::fragment(out, pc, port, buf, mac);
    }
    let mut macs = [0u8; 12];
    macs[..6].copy_from_slice(&mac);
    macs[6..].copy_from_slice(&pc.mac);
    stage(out, buf, port, &macs);
}

/// [`emit`] through a known [`Egress`]: its port's constants are in it,
/// no port is read.
#[inline(always)]
pub(crate) fn emit_via(out: &mut Out, ports: &[PortCtx], buf: Buf, e: &Egress) {
    if buf.len as usize > ETH_LEN + e.mtu as usize {
        let mac = e.macs[..6].try_into().expect("6 bytes");
        return frag::fragment(out, &ports[e.port], e.port, buf, mac);
    }
    stage(out, buf, e.port, &e.macs);
}

/// Writes the MAC pair `macs` (destination, source) over the frame's
/// first 12 bytes in one copy, counts the packet forwarded and stages it
/// on `port`. The frame fits `port`'s MTU (checked by the caller).
#[inline(always)]
pub(crate) fn stage(out: &mut Out, buf: Buf, port: usize, macs: &[u8; 12]) {
    out.pool.data_mut(buf)[..12].copy_from_slice(macs);
    out.forward(port, buf);
}
