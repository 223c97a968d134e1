//! softrouter's control socket: how `softrouter ctl` (and scripts) reach a
//! running router, in the style of `birdc` and grout's `grcli`.
//!
//! * [`protocol`]: one JSON object per line, a request then its response,
//!   versioned ([`protocol::VERSION`]); any number of requests per
//!   connection.
//! * [`server`]: the listening socket (mode 0660, root or one group),
//!   refusing a path held by a live instance; requests go to a
//!   [`server::Handler`] (the router's single writer).
//! * [`client`]: one request, one response (what `softrouter ctl` uses).
//! * [`kernel`]: the kernel's routing table as a source of routes (dump,
//!   then follow), so `ip route`, BIRD and FRR can drive softrouter.
//! * [`kernel_fib`]: every route the kernel keeps, and the one it uses
//!   per prefix (what the mirror installs).
//! * [`metrics`]: the OpenMetrics endpoint, one statistics snapshot per
//!   scrape.
//! * [`serve`]: the event loop both serve from, so that no client can hold
//!   up another or shutdown (limits, deadlines, refusals).
//!
//! Why JSON lines over a UNIX socket: every language and `socat` can speak
//! it, file permissions are the access control, and a request is tiny
//! next to what it does (a route change, a statistics snapshot).

pub mod client;
pub mod kernel;
pub mod kernel_fib;
pub mod kernel_neigh;
pub mod metrics;
/// The wire format lives in the `schema` crate (`schema::protocol`), so a
/// client such as the bench's control-latency sampler needs neither the
/// server nor the datapath; named here as before.
pub use schema::protocol;
pub mod serve;
pub mod server;

pub use protocol::{Request, Response};
pub use server::{ControlServer, Handler};
