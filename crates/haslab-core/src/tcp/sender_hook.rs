//! Sender hooks: the points where per-chunk sender mechanisms of the Enhancing-TCP paper (Liu,
//! Men, Zhang, §3) plug into the endpoint's send path, as congestion-window validation plugs in
//! through [`super::cwv::CwndValidation`]. A chunk is the data an HTTP server writes while its
//! sender is idle (plus what is appended before all of it is acknowledged); the endpoint tracks
//! the chunk and calls the hooks at its events, the hooks decide.
//!
//! Implementations: novel pacing ([`super::novel_pacing::NovelPacing`], §3.1) and Reducing Tail
//! Loss ([`super::rtl::TailLoss`], §3.2). [`from_config`] installs the ones the configuration
//! turns on; without any the endpoint is a plain TCP sender.

use super::cc::CcState;
use super::config::TcpConfig;

/// The sender's position in the current chunk, as the hooks see it (stream offsets).
#[derive(Clone, Copy, Debug)]
pub struct ChunkView {
    /// First byte of the chunk.
    pub start: u64,
    /// Just past the chunk's last written byte.
    pub end: u64,
    /// Oldest unacknowledged byte (RFC 793 SND.UNA).
    pub snd_una: u64,
    /// Next new byte to send (RFC 793 SND.NXT).
    pub snd_nxt: u64,
}

/// A packet a hook asks the endpoint to send after an ACK: `len` bytes of the stream at
/// `offset`, sent again (a retransmission in form, but not counted as one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtraPacket {
    pub offset: u64,
    pub len: u32,
}

/// Callbacks of the send path. Every method has a default that does nothing, so an
/// implementation names only the events it needs.
pub trait SenderHook: Send {
    fn name(&self) -> &'static str;

    /// Data was written while the sender was idle: a new chunk starts.
    fn on_chunk_written(&mut self) {}

    /// The chunk's first segment is about to be sent, with nothing in flight. `first_chunk`:
    /// the connection's first; `decayed`: restart after idle reduced cwnd just now. The hook
    /// may change `tp.cwnd_pkts`. Returns whether the hook paces the chunk (the endpoint then
    /// asks [`SenderHook::pacing_rate_bps`]).
    fn on_chunk_first_send(
        &mut self,
        _tp: &mut CcState,
        _first_chunk: bool,
        _decayed: bool,
        _mss_bytes: u32,
    ) -> bool {
        false
    }

    /// An ACK was processed with snd_una beyond the chunk's first byte (called on every such
    /// ACK). Returns whether this ends pacing the hook imposed.
    fn on_chunk_head_acked(&mut self) -> bool {
        false
    }

    /// A pure duplicate ACK of `ack` (= snd_una, nothing advanced): whether it is the echo of
    /// a packet the hook had sent, and so no sign of loss.
    fn is_echo(&mut self, _ack: u64) -> bool {
        false
    }

    /// The pacing rate the hook imposes now, if any (the maximum pacing rate still caps it).
    fn pacing_rate_bps(&self) -> Option<u64> {
        None
    }

    /// A segment was retransmitted.
    fn on_retransmission(&mut self) {}

    /// The RTO fired after the whole chunk was sent (in its trailing-ACKs phase), before cwnd
    /// is reduced.
    fn on_trailing_rto(&mut self, _tp: &CcState) {}

    /// After an ACK was processed: a packet to send now, if the hook wants one.
    /// `segments_sent`: the connection's segments sent so far.
    fn extra_packet(
        &mut self,
        _chunk: ChunkView,
        _tp: &CcState,
        _segments_sent: u64,
    ) -> Option<ExtraPacket> {
        None
    }
}

/// The hooks `cfg` turns on: novel pacing (`novel_pacing`), then Reducing Tail Loss (`rtl`).
pub fn from_config(cfg: &TcpConfig) -> Vec<Box<dyn SenderHook>> {
    let mut hooks: Vec<Box<dyn SenderHook>> = Vec::new();
    if cfg.novel_pacing {
        hooks.push(Box::new(super::novel_pacing::NovelPacing::default()));
    }
    if cfg.rtl {
        hooks.push(Box::new(super::rtl::TailLoss::new(cfg.rtl_epsilon)));
    }
    hooks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_installs_the_hooks_it_turns_on() {
        let names = |cfg: &TcpConfig| -> Vec<&'static str> {
            from_config(cfg).iter().map(|h| h.name()).collect()
        };
        let mut cfg = TcpConfig::default();
        assert!(names(&cfg).is_empty());
        cfg.rtl = true;
        assert_eq!(names(&cfg), ["rtl"]);
        cfg.novel_pacing = true;
        assert_eq!(names(&cfg), ["novel_pacing", "rtl"]);
    }
}
