//! Output: the MAC rewrite of a forwarded packet whose neighbour is
//! resolved, the hand-off to fragmentation (`frag.rs`) when it is larger
//! than the egress MTU, and its staging for TX. Called by the hold stage
//! (`hold.rs`) for a packet sent now or released from a hold queue.

use crate::cx::Out;
use crate::frag;
use crate::shared::PortCtx;
use netio::Buf;
use packet::ethernet::{self, Address, ETH_LEN};

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
    let mut eth = ethernet::Frame::new_unchecked(out.pool.data_mut(buf));
    eth.set_dst_addr(Address(mac));
    eth.set_src_addr(Address(pc.mac));
    out.count_forwarded();
    out.send(port, buf);
}
