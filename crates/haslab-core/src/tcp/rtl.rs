//! Reducing Tail Loss (RTL): the number of dummy packets a HAS server sends in a chunk's
//! trailing-ACKs phase, from the Enhancing-TCP paper (§3.2, equations (1)–(5)).
//!
//! The last three segments of a chunk have too few segments behind them to produce three
//! duplicate ACKs when one of them is lost. RTL sends `m` small dummy packets after them, one
//! per ACK received in the trailing-ACKs phase; each dummy that arrives produces a duplicate
//! ACK. With a per-packet loss probability `p`, P(k), the probability that at least k of the
//! m dummies arrive, is
//!
//! - P(1) = 1 − p^m                                              (1)
//! - P(2) = 1 − p^m − C(m,1)·p^(m−1)·(1 − p)                     (2)
//! - P(3) = 1 − p^m − C(m,1)·p^(m−1)·(1 − p) − C(m,2)·p^(m−2)·(1 − p)²   (3)
//!
//! and the probability that no RTO happens, over the loss patterns of the last three segments
//! (one lost, in 3 positions; two lost, in 3 arrangements; three lost; none lost), is
//!
//! P_A(¬RTO) = p(1−p)²·[P(1) + P(2) + P(3)] + p²(1−p)·[2P(2) + P(3)] + p³·P(3) + (1−p)³  (4)
//!
//! `m` is the smallest number with P_A(RTO) = 1 − P_A(¬RTO) ≤ ε (5); the paper uses
//! ε = 10⁻⁶.
//!
//! The sender's side plugs into the endpoint as a [`SenderHook`] ([`TailLoss`]), installed when
//! `rtl` is on.

use super::cc::{CaState, CcState};
use super::sender_hook::{ChunkView, ExtraPacket, SenderHook};

/// Upper bound on m: with p < 0.5 the search ends long before (m = 9 at p = 0.1, ε = 10⁻⁶).
pub const MAX_DUMMIES: u32 = 64;

/// C(n, k) as a float (small arguments).
fn binomial(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// P(k) of equations (1)–(3): at least `k` of `m` dummies arrive.
pub fn p_at_least(k: u32, m: u32, p: f64) -> f64 {
    // 1 − P(fewer than k arrive) = 1 − Σ_{j<k} C(m,j)·p^(m−j)·(1−p)^j
    let fewer: f64 = (0..k.min(m + 1))
        .map(|j| binomial(m, j) * p.powi((m - j) as i32) * (1.0 - p).powi(j as i32))
        .sum();
    1.0 - fewer
}

/// P_A(RTO) = 1 − equation (4), for `m` dummy packets and loss probability `p`.
pub fn p_rto(p: f64, m: u32) -> f64 {
    let q = 1.0 - p;
    let (p1, p2, p3) = (
        p_at_least(1, m, p),
        p_at_least(2, m, p),
        p_at_least(3, m, p),
    );
    let no_rto =
        p * q * q * (p1 + p2 + p3) + p * p * q * (2.0 * p2 + p3) + p.powi(3) * p3 + q.powi(3);
    (1.0 - no_rto).max(0.0)
}

/// The smallest m with P_A(RTO) ≤ ε (equation (5)), at most [`MAX_DUMMIES`].
pub fn dummy_count(p: f64, epsilon: f64) -> u32 {
    let p = p.clamp(0.0, 0.999);
    (0..=MAX_DUMMIES)
        .find(|&m| p_rto(p, m) <= epsilon)
        .unwrap_or(MAX_DUMMIES)
}

/// One connection's RTL state (the sender's side of §3.2): how many dummies the current
/// trailing-ACKs phase may still send, and which duplicate ACKs are echoes of dummies.
///
/// In the trailing-ACKs phase (the chunk is all sent, not all acknowledged), one dummy packet
/// per ACK until m are sent. The dummy is a 1-byte retransmission of the chunk's last byte: any
/// receiver answers it with a duplicate ACK (out of order if that byte is missing, a duplicate
/// otherwise), so it needs no receiver change and costs 53 bytes on the wire. The loss rate in
/// m's equations is estimated as (packets marked lost + 1) / (segments sent + 100): a 1 % prior
/// that the connection's own losses take over.
#[derive(Clone, Debug, Default)]
pub struct TailLoss {
    /// ε of equation (5).
    epsilon: f64,
    /// Dummies left to send in this trailing phase (None before the phase starts: the count
    /// is computed from the loss rate when the phase's first ACK arrives).
    quota: Option<u32>,
    /// End of the chunk whose dummies may still be echoed, and how many may be: a dummy that
    /// reaches a receiver holding the whole chunk comes back as a duplicate ACK of the chunk's
    /// end, which must not count towards a fast retransmit of the next chunk.
    echo_end: u64,
    echoes: u32,
}

impl TailLoss {
    /// RTL aiming at a tail-RTO probability of `epsilon`.
    pub fn new(epsilon: f64) -> TailLoss {
        TailLoss {
            epsilon,
            ..TailLoss::default()
        }
    }

    /// Takes one dummy from this phase's quota (computed by `count` the first time); false
    /// when the quota is spent. `chunk_end` is the chunk the dummy follows.
    pub fn take_dummy(&mut self, chunk_end: u64, count: impl FnOnce() -> u32) -> bool {
        let quota = *self.quota.get_or_insert_with(count);
        if quota == 0 {
            return false;
        }
        self.quota = Some(quota - 1);
        if self.echo_end != chunk_end {
            self.echo_end = chunk_end;
            self.echoes = 0;
        }
        self.echoes += 1;
        true
    }

    /// Whether a pure duplicate ACK of `ack` (= snd_una) is the echo of a dummy, and if so
    /// counts it.
    pub fn take_echo(&mut self, ack: u64) -> bool {
        let echo = ack == self.echo_end && self.echoes > 0;
        if echo {
            self.echoes -= 1;
        }
        echo
    }
}

impl SenderHook for TailLoss {
    fn name(&self) -> &'static str {
        "rtl"
    }

    /// A new chunk starts: its trailing phase will compute its own count.
    fn on_chunk_written(&mut self) {
        self.quota = None;
    }

    fn is_echo(&mut self, ack: u64) -> bool {
        self.take_echo(ack)
    }

    /// A retransmission went out: a dummy sent before it reaches the receiver before it (one
    /// FIFO path), while the hole is still open, so its duplicate ACK is a loss signal, not an
    /// echo of a complete chunk. Only dummies sent after the last retransmission can echo.
    fn on_retransmission(&mut self) {
        self.echoes = 0;
    }

    /// One dummy per ACK in the trailing-ACKs phase, outside loss recovery.
    fn extra_packet(
        &mut self,
        chunk: ChunkView,
        tp: &CcState,
        segments_sent: u64,
    ) -> Option<ExtraPacket> {
        let trailing = chunk.snd_nxt >= chunk.end
            && chunk.snd_una < chunk.end
            && chunk.end > chunk.start
            && tp.ca_state <= CaState::Disorder;
        if !trailing {
            return None;
        }
        let (lost, epsilon) = (tp.lost_pkts, self.epsilon);
        let count = || {
            let p = (lost + 1) as f64 / (segments_sent + 100) as f64;
            dummy_count(p, epsilon)
        };
        self.take_dummy(chunk.end, count).then_some(ExtraPacket {
            offset: chunk.end - 1,
            len: 1,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equations_one_to_three_for_three_dummies() {
        // m = 3, p = 0.1, by hand: P(1) = 1 − 0.001 = 0.999;
        // P(2) = 0.999 − 3·0.01·0.9 = 0.972; P(3) = 0.972 − 3·0.1·0.81 = 0.729 = 0.9³
        assert!((p_at_least(1, 3, 0.1) - 0.999).abs() < 1e-12);
        assert!((p_at_least(2, 3, 0.1) - 0.972).abs() < 1e-12);
        assert!((p_at_least(3, 3, 0.1) - 0.729).abs() < 1e-12);
        // fewer dummies than needed: P(3) with m = 2 is 0
        assert!(p_at_least(3, 2, 0.1).abs() < 1e-12);
    }

    #[test]
    fn equation_four_by_hand() {
        // m = 3, p = 0.1 (q = 0.9), with the P(k) above:
        // 0.1·0.81·(0.999 + 0.972 + 0.729) = 0.2187
        // 0.01·0.9·(2·0.972 + 0.729)       = 0.024057
        // 0.001·0.729                       = 0.000729
        // 0.9³                              = 0.729
        // P_A(¬RTO) = 0.972486, P_A(RTO) = 0.027514
        assert!((p_rto(0.1, 3) - 0.027514).abs() < 1e-9);
        // without dummies an RTO follows any loss of the last three: 1 − q³
        assert!((p_rto(0.1, 0) - (1.0 - 0.729)).abs() < 1e-12);
        assert_eq!(p_rto(0.0, 0), 0.0);
    }

    #[test]
    fn m_is_the_smallest_count_meeting_epsilon() {
        for &(p, eps) in &[(0.01, 1e-6), (0.03, 1e-6), (0.1, 1e-6), (0.05, 1e-3)] {
            let m = dummy_count(p, eps);
            assert!(p_rto(p, m) <= eps, "p {p}: m = {m} misses ε");
            assert!(
                m == 0 || p_rto(p, m - 1) > eps,
                "p {p}: m = {m} is not minimal"
            );
        }
        // the paper's setting (1 % loss, ε = 10⁻⁶) needs 5 dummies; more loss, more dummies
        assert_eq!(dummy_count(0.01, 1e-6), 5);
        assert!(dummy_count(0.1, 1e-6) > dummy_count(0.01, 1e-6));
        assert_eq!(dummy_count(0.0, 1e-6), 0);
    }
}
