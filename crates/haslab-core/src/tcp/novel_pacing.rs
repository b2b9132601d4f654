//! Novel pacing (Enhancing-TCP paper, Liu, Men, Zhang, §3.1 and Fig. 2): the first round trip
//! of each HAS chunk after an idle period is paced instead of leaving as a burst.
//!
//! Decided when a chunk's first segment goes out: no pacing if restart after idle decayed
//! cwnd, or for the connection's first chunk (its slow start is left alone); after an RTO in
//! the previous chunk's trailing-ACKs phase, cwnd = cwnd' (the window before that RTO: slow
//! start is skipped) paced at cwnd' packets per 2·RTT; otherwise cwnd packets per RTT. Pacing
//! ends when the chunk's first packet is acknowledged, and the flow's own pacing (if any)
//! applies again. No constants beyond the paper's 1 and 2 RTTs.
//!
//! It plugs into the sender as a [`SenderHook`], installed when `novel_pacing` is on.

use super::cc::{CaState, CcState};
use super::sender_hook::SenderHook;

/// One connection's novel-pacing state.
#[derive(Clone, Debug, Default)]
pub struct NovelPacing {
    /// The rate while the first RTT of a chunk is paced.
    rate_bps: Option<u64>,
    /// cwnd before an RTO in the current chunk's trailing-ACKs phase.
    rto_trailing_cwnd: Option<u32>,
}

impl NovelPacing {
    /// The pacing rate while a chunk's first RTT is paced.
    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    /// An RTO in the trailing-ACKs phase (the whole chunk was sent): the first one's window is
    /// remembered for the next chunk.
    pub fn note_trailing_rto(&mut self, window_pkts: impl FnOnce() -> u32) {
        if self.rto_trailing_cwnd.is_none() {
            self.rto_trailing_cwnd = Some(window_pkts());
        }
    }

    /// A chunk's first segment goes out. `decayed`: restart after idle reduced cwnd;
    /// `first_chunk`: the connection's first; `cwnd_pkts` may be raised to the window before a
    /// trailing RTO. Returns whether the chunk is paced.
    pub fn on_chunk_start(
        &mut self,
        decayed: bool,
        first_chunk: bool,
        srtt_ns: u64,
        mss_bytes: u32,
        cwnd_pkts: &mut u32,
    ) -> bool {
        let rto_cwnd = self.rto_trailing_cwnd.take();
        if decayed || srtt_ns == 0 || first_chunk {
            return false;
        }
        let (pkts, rtts) = match rto_cwnd {
            Some(prev) => {
                *cwnd_pkts = (*cwnd_pkts).max(prev);
                (prev, 2)
            }
            None => (*cwnd_pkts, 1),
        };
        let bits = pkts as u128 * mss_bytes as u128 * 8 * 1_000_000_000;
        self.rate_bps = Some((bits / (rtts * srtt_ns as u128)).max(1) as u64);
        true
    }

    /// The chunk's first packet is acknowledged: the paced burst is over. Returns whether it
    /// was paced.
    pub fn on_first_packet_acked(&mut self) -> bool {
        self.rate_bps.take().is_some()
    }
}

impl SenderHook for NovelPacing {
    fn name(&self) -> &'static str {
        "novel_pacing"
    }

    fn on_chunk_first_send(
        &mut self,
        tp: &mut CcState,
        first_chunk: bool,
        decayed: bool,
        mss_bytes: u32,
    ) -> bool {
        let srtt_ns = tp.srtt_ns;
        self.on_chunk_start(decayed, first_chunk, srtt_ns, mss_bytes, &mut tp.cwnd_pkts)
    }

    fn on_chunk_head_acked(&mut self) -> bool {
        self.on_first_packet_acked()
    }

    fn pacing_rate_bps(&self) -> Option<u64> {
        self.rate_bps()
    }

    /// The window to restore is cwnd, or in fast recovery ssthresh: a cwnd inflated by
    /// duplicate ACKs (RFC 6582) is not a window to restore.
    fn on_trailing_rto(&mut self, tp: &CcState) {
        self.note_trailing_rto(|| {
            if tp.ca_state == CaState::Recovery {
                tp.cwnd_pkts.min(tp.ssthresh_pkts)
            } else {
                tp.cwnd_pkts
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_is_paced_at_cwnd_per_rtt_or_after_a_trailing_rto_at_the_old_window_per_two_rtts() {
        let mut n = NovelPacing::default();
        let mut cwnd = 10;
        // 10 packets of 1000 bytes per 100 ms = 800 kbit/s
        assert!(n.on_chunk_start(false, false, 100_000_000, 1000, &mut cwnd));
        assert_eq!(n.rate_bps(), Some(800_000));
        assert!(n.on_first_packet_acked());
        assert_eq!(n.rate_bps(), None);
        // an RTO with cwnd 20 in the trailing phase (a second one is ignored); cwnd is back at 1
        n.note_trailing_rto(|| 20);
        n.note_trailing_rto(|| 5);
        let mut cwnd = 1;
        assert!(n.on_chunk_start(false, false, 100_000_000, 1000, &mut cwnd));
        assert_eq!((cwnd, n.rate_bps()), (20, Some(800_000)));
        // no pacing for the first chunk or after a decay (when off, the hook is not installed:
        // see sender_hook.rs); the trailing RTO is spent
        n.on_first_packet_acked();
        n.note_trailing_rto(|| 20);
        for (decayed, first) in [(true, false), (false, true)] {
            let mut cwnd = 10;
            assert!(!n.on_chunk_start(decayed, first, 100_000_000, 1000, &mut cwnd));
            assert_eq!((cwnd, n.rate_bps()), (10, None));
        }
    }
}
