//! Delivery-rate estimation (Linux net/ipv4/tcp_rate.c; draft-cheng-iccrg-delivery-rate-
//! estimation): every segment remembers how much had been delivered when it was sent; when it
//! is delivered (cumulatively ACKed or SACKed) the rate over the interval between the two is
//! a sample of the path's delivery rate. BBR consumes these samples through
//! [`super::cc::CongestionControl::cong_control`].
//!
//! - send interval = send time of the newest delivered segment − `first_tx` of its flight;
//! - ACK interval = now − `delivered_ns` when that segment was sent;
//! - interval = max(send interval, ACK interval); a sample whose interval is below min_rtt is
//!   discarded (`tcp_rate_gen`), since it cannot be a real delivery rate;
//! - application-limited marking (`tcp_rate_check_app_limited`): when the sender runs out of
//!   data with room in cwnd, samples are flagged until everything then in flight is delivered.

use super::cc::{CcState, RateSample};
use super::scoreboard::{Seg, TxState};

#[derive(Default)]
pub struct RateSampler {
    /// Send time of the first segment of the current flight (`first_tx_mstamp`).
    first_tx_ns: u64,
    /// `tp.delivered_pkts` mark until which samples are application-limited (0: none).
    app_limited_until: u64,
    // ---- the sample being built for the current ACK ----
    prior_delivered: Option<u64>,
    prior_ns: u64,
    send_interval_ns: u64,
    is_app_limited: bool,
    rtt_ns: Option<u64>,
    acked_sacked: u32,
}

impl RateSampler {
    /// `tcp_rate_skb_sent`: the state to store in a segment being (re)sent.
    pub fn on_send(&mut self, tp: &mut CcState, packets_out: u32, now_ns: u64) -> TxState {
        if packets_out == 0 {
            self.first_tx_ns = now_ns;
            tp.delivered_ns = now_ns;
        }
        TxState::new(
            tp.delivered_pkts,
            tp.delivered_ns,
            self.first_tx_ns,
            self.app_limited_until != 0,
        )
    }

    /// `tcp_rate_skb_delivered`, for each segment newly ACKed or SACKed by this ACK.
    pub fn on_delivered(&mut self, tp: &mut CcState, seg: &Seg, now_ns: u64) {
        self.count_delivered(tp, 1);
        let Some(tx_delivered_ns) = seg.tx.delivered_ns() else {
            return;
        };
        if self
            .prior_delivered
            .is_none_or(|p| seg.tx.delivered_pkts > p)
        {
            self.prior_delivered = Some(seg.tx.delivered_pkts);
            self.prior_ns = tx_delivered_ns;
            self.is_app_limited = seg.tx.app_limited;
            self.send_interval_ns = seg.sent_ns.saturating_sub(seg.tx.first_tx_ns);
            // the next flight's send interval starts here
            self.first_tx_ns = seg.sent_ns;
            if !seg.has(super::scoreboard::segflags::EVER_RETRANS) {
                self.rtt_ns = Some(now_ns.saturating_sub(seg.sent_ns));
            }
        }
    }

    /// [`Self::on_delivered`] for `n` segments of a sender whose congestion control takes no
    /// samples ([`Self::finish_unsampled`]): the delivery counts only. The rest of
    /// `on_delivered` builds the sample (and the next flight's send-interval start), which only
    /// [`Self::finish`] reads.
    #[inline]
    pub fn count_delivered(&mut self, tp: &mut CcState, n: u32) {
        tp.delivered_pkts += n as u64;
        self.acked_sacked += n;
    }

    /// `tcp_rate_gen`: completes the sample of this ACK.
    pub fn finish(&mut self, tp: &mut CcState, losses: u32, prior_in_flight: u32) -> RateSample {
        self.update_app_limited(tp);
        let mut rs = RateSample {
            acked_sacked_pkts: self.acked_sacked,
            losses_pkts: losses,
            prior_in_flight_pkts: prior_in_flight,
            rtt_ns: self.rtt_ns,
            ..Default::default()
        };
        if let Some(prior) = self.prior_delivered {
            rs.prior_delivered_pkts = prior;
            rs.delivered_pkts = tp.delivered_pkts - prior;
            rs.is_app_limited = self.is_app_limited;
            let ack_interval = tp.now_ns.saturating_sub(self.prior_ns);
            let interval = self.send_interval_ns.max(ack_interval);
            // Linux: an interval shorter than min_rtt is an artefact (e.g. a stretched ACK)
            if interval >= tp.min_rtt_ns.min(u64::MAX - 1) && interval > 0 {
                rs.interval_ns = Some(interval);
            }
        }
        self.reset_sample();
        rs
    }

    /// [`Self::finish`] for a sender whose congestion control takes no samples: the same
    /// state changes, without building the sample.
    pub fn finish_unsampled(&mut self, tp: &mut CcState) {
        self.update_app_limited(tp);
        self.reset_sample();
    }

    /// The application-limited mark and `delivered_ns` after this ACK's deliveries.
    #[inline]
    fn update_app_limited(&mut self, tp: &mut CcState) {
        if self.app_limited_until != 0 && tp.delivered_pkts > self.app_limited_until {
            self.app_limited_until = 0;
        }
        tp.app_limited = self.app_limited_until != 0;
        if self.acked_sacked > 0 {
            tp.delivered_ns = tp.now_ns;
        }
    }

    /// Clears the sample being built, for the next ACK.
    #[inline]
    fn reset_sample(&mut self) {
        self.prior_delivered = None;
        self.rtt_ns = None;
        self.acked_sacked = 0;
        self.is_app_limited = false;
    }

    /// `tcp_rate_check_app_limited`: the sender has nothing more to send while cwnd has room
    /// and no loss awaits retransmission.
    pub fn mark_app_limited(&mut self, tp: &CcState, pipe: u32) {
        self.app_limited_until = (tp.delivered_pkts + pipe as u64).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::scoreboard::Seg;

    #[test]
    fn a_steady_flight_samples_the_ack_rate() {
        // 10 segments sent 1 ms apart; ACKed one by one 1 ms apart after a 50 ms RTT: the
        // rate sample is one packet per ms
        let mut tp = CcState::new(10, 1000);
        tp.min_rtt_ns = 50_000_000;
        let mut r = RateSampler::default();
        let mut segs = vec![];
        for i in 0..10u64 {
            let now = i * 1_000_000;
            let tx = r.on_send(&mut tp, i as u32, now);
            segs.push(Seg {
                start: i,
                end: i + 1,
                sent_ns: now,
                flags: 0,
                tx,
            });
        }
        let mut last = RateSample::default();
        for (i, s) in segs.iter().enumerate() {
            tp.now_ns = 50_000_000 + i as u64 * 1_000_000;
            let now = tp.now_ns;
            r.on_delivered(&mut tp, s, now);
            last = r.finish(&mut tp, 0, 10 - i as u32);
        }
        assert_eq!(tp.delivered_pkts, 10);
        // last sample: the 10th segment was sent with delivered = 0 at t = 0 (the flight
        // start), delivered at 59 ms: 10 packets over max(9 ms send, 59 ms ack) = 59 ms
        assert_eq!(last.delivered_pkts, 10);
        assert_eq!(last.interval_ns, Some(59_000_000));
        assert!(!last.is_app_limited);
    }

    #[test]
    fn app_limited_marks_samples_until_the_flight_is_delivered() {
        let mut tp = CcState::new(10, 1000);
        tp.min_rtt_ns = 1;
        let mut r = RateSampler::default();
        r.mark_app_limited(&tp, 2);
        let tx = r.on_send(&mut tp, 0, 0);
        assert!(tx.app_limited);
        let seg = Seg {
            start: 0,
            end: 1,
            sent_ns: 0,
            flags: 0,
            tx,
        };
        tp.now_ns = 10;
        r.on_delivered(&mut tp, &seg, 10);
        let rs = r.finish(&mut tp, 0, 1);
        assert!(rs.is_app_limited);
        assert!(tp.app_limited, "mark (2) not yet passed");
        tp.delivered_pkts = 3;
        r.finish(&mut tp, 0, 0);
        assert!(!tp.app_limited);
    }
}
