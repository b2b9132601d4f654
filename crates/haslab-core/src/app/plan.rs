//! What a flow's application is asked to do, resolved from the scenario's `[[flow]]` table
//! (`app = "bulk"` or `"chunks"`), and the application it builds.

use super::bulk::BulkSender;
use super::chunks::ChunkSender;
use super::App;

#[derive(Clone, Debug, PartialEq)]
pub enum AppPlan {
    /// FTP-like: connects at `start_ns`, writes `bytes` (unbounded if None) and stops writing at
    /// `stop_ns` (data already written is still delivered).
    Bulk {
        start_ns: u64,
        stop_ns: Option<u64>,
        bytes: Option<u64>,
    },
    /// On/off: connects at `start_ns`, writes `chunk_bytes` every `interval_ns` until `stop_ns`.
    Chunks {
        start_ns: u64,
        stop_ns: Option<u64>,
        chunk_bytes: u64,
        interval_ns: u64,
    },
}

impl AppPlan {
    /// When the application connects.
    pub fn start_ns(&self) -> u64 {
        match *self {
            AppPlan::Bulk { start_ns, .. } | AppPlan::Chunks { start_ns, .. } => start_ns,
        }
    }

    /// The sending application, on connection `conn`.
    pub fn build(&self, conn: u32) -> Box<dyn App> {
        match *self {
            AppPlan::Bulk { stop_ns, bytes, .. } => Box::new(BulkSender::new(conn, bytes, stop_ns)),
            AppPlan::Chunks {
                stop_ns,
                chunk_bytes,
                interval_ns,
                ..
            } => Box::new(ChunkSender::new(conn, chunk_bytes, interval_ns, stop_ns)),
        }
    }
}
