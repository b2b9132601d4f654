//! haslab-core: a deterministic packet-level simulator for HTTP adaptive streaming over TCP.
//!
//! Layers (one idea per folder):
//! - [`sim`]: integer-nanosecond time, the event list, seeded per-component random streams.
//! - [`net`]: packets, links (rate, delay, loss), drop-tail queues, routing, pcap output.
//! - [`tcp`]: the TCP connection (handshake, segmentation, ACKs, loss recovery, RTO) and the
//!   congestion-control interface modelled on Linux `tcp_congestion_ops` ([`tcp::cc`]).
//! - [`app`]: applications on the byte-stream API (bulk sender, chunked sender, sink).
//! - [`has`]: HTTP adaptive streaming: videos and MPDs, players, playback, HTTP client/server.
//! - [`traffic`]: cross-traffic generators (PPBP, exponential on/off, CBR, web-like TCP
//!   transfers).
//! - [`input`]: reading the files a scenario names (regular files only, with a size cap).
//! - [`metrics`]: counters and time series collected during a run.
//! - [`scenario`]: the one scenario schema (serde), its validation, and the resolved [`scenario::Plan`].
//! - [`world`]: builds a [`scenario::Plan`] into a running simulation and returns a [`metrics::SimResult`].

/// A fingerprint of this simulator's source (every file under `src/`): runs stored by a sweep
/// record it, and a sweep re-runs the stored runs an other simulator computed.
pub const MODEL_ID: &str = env!("HASLAB_MODEL_ID");

pub mod app;
pub mod has;
pub mod input;
pub mod metrics;
pub mod net;
pub mod sabre;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod traffic;
pub mod world;

pub use world::{run_plan, RunOptions};
