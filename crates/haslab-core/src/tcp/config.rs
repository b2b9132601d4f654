//! Per-connection TCP options. This struct *is* the `[flow.tcp]` table of the scenario schema
//! (one definition for the CLI, Python and the simulator); its defaults model a current Linux
//! sender, and each field says where the ns-3 or RFC value differs.

use crate::sim::units::{Duration, Rate, Size};
use crate::tcp::rtt::RtoFormula;
use crate::tcp::timer_clock::TimerClock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Delayed-ACK policy of the receiver (RFC 5681 §4.2, RFC 1122 §4.2.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DelayedAckMode {
    /// ACK every segment.
    Off,
    /// ACK every second full-sized segment, or when `delayed_ack_timeout` expires.
    On,
    /// Linux 6.18's rules (tcp/delack.rs): at once while in quick-ACK mode (the first data,
    /// after a gap longer than the RTO, after data received twice, and on every segment that
    /// grows the receive window, so with `rcvbuf = "linux"` while the window opens), else every
    /// second full segment when the window advances, else after Linux's adaptive timeout
    /// (`delayed_ack_timeout` is its floor, `TCP_ATO_MIN`); interactive (ping-pong) mode turns
    /// quick ACKs off.
    Linux,
    /// Linux 3.19's rules (the receivers of Ubuntu 15.04): `linux` but for two rules that
    /// changed later (tcp/delack.rs): every segment sent with an ACK uses a quick-ACK credit,
    /// and the timeout outside interactive mode may reach 500 ms (at most SRTT).
    #[serde(rename = "linux-3")]
    Linux3,
}

/// What the sender does to cwnd when it starts sending after an idle period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IdleRestart {
    /// Keep cwnd (ns-3's TcpSocketBase behaviour; Linux with tcp_slow_start_after_idle = 0).
    Off,
    /// RFC 5681 §4.1: after an idle period longer than one RTO, cwnd = min(IW, cwnd).
    Rfc5681,
    /// Linux `tcp_cwnd_restart`: ssthresh = max(ssthresh, ¾·cwnd), then halve cwnd once per RTO
    /// of idle time beyond the first, not below min(IW, cwnd) (net/ipv4/tcp_output.c).
    Linux,
    /// RFC 7661 (newCWV) replaces restart after idle: cwnd is kept through idle and
    /// rate-limited periods, frozen while not validated, halved when the non-validated period
    /// expires (see tcp/newcwv.rs).
    Newcwv,
}

/// Sender pacing (Linux `sk_pacing_rate`, `tcp_update_pacing_rate` in net/ipv4/tcp_input.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PacingMode {
    /// No pacing (Linux with CUBIC/Reno over pfifo_fast or fq_codel; ns-3's default). A
    /// congestion control that paces itself (BBR) still does.
    Off,
    /// Linux `tcp_update_pacing_rate` enforced by the fq qdisc: rate = 200 % × cwnd·MSS/SRTT
    /// while cwnd < ssthresh/2, else 120 %.
    Linux,
    /// The window spread evenly over one RTT (rate = cwnd·MSS/SRTT): the Linux 3.12 FQ pacing
    /// of the newCWV paper §3 ("spreads out the bursts over a period of RTT").
    CwndPerRtt,
}

/// How cwnd evolves during fast recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryMode {
    /// Proportional Rate Reduction (RFC 6937), Linux's `tcp_cwnd_reduction` and ns-3's default
    /// `TcpPrrRecovery`: cwnd = pipe + sndcnt, converging to ssthresh, never inflated.
    Prr,
    /// RFC 5681 / RFC 6582 inflation: cwnd = ssthresh + 3, +1 per duplicate ACK, deflated by
    /// partial ACKs (ns-3's `TcpClassicRecovery`).
    Classic,
}

/// Which PRR (`recovery = "prr"`) the sender runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PrrVariant {
    /// Linux 6.x `tcp_cwnd_reduction` (net/ipv4/tcp_input.c; RFC 6937bis): RecoverFS is cwnd
    /// when recovery began (`prior_cwnd`); once pipe ≤ ssthresh, sndcnt = max(prr_delivered −
    /// prr_out, DeliveredData), +1 when the ACK advanced snd_una and marked nothing newly lost.
    Linux,
    /// Linux 3.2 to 4.2 (the original PRR-SSRB, before the 2015 change to CRB by default):
    /// once pipe ≤ ssthresh, sndcnt = max(prr_delivered − prr_out, DeliveredData) + 1 on
    /// every ACK.
    #[serde(rename = "linux-3")]
    Linux3,
    /// ns-3 3.37 `TcpPrrRecovery` (src/internet/model/tcp-prr-recovery.cc): RecoverFS is every
    /// outstanding byte when recovery began (`UnAckDataCount`, SACKed ones included); once pipe
    /// ≤ ssthresh, sndcnt = max(prr_delivered − prr_out, DeliveredData) + 1 only when the ACK
    /// acknowledged retransmitted data (`m_isRetransDataAcked`), else DeliveredData (SSRB as in
    /// Linux before 2020).
    Ns3,
}

/// What a partial ACK of a PRR fast recovery (`recovery = "prr"`) sends besides what PRR's
/// window allows. (`recovery = "classic"` always resends the new head at once, RFC 6582 §3.2
/// step 4.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PartialAckRetransmit {
    /// Nothing: the partial ACK marks the new head lost (without SACK, Linux
    /// `tcp_newreno_mark_lost`, called from `tcp_fastretrans_alert` before `tcp_cong_control`
    /// runs PRR), and it is resent only when cwnd − in_flight allows
    /// (`tcp_xmit_retransmit_queue`): in PRR's proportional phase an ACK may release nothing
    /// (net/ipv4/tcp_input.c `tcp_ack`). Linux.
    Window,
    /// One segment at once, whatever the window: ns-3 3.37 `TcpSocketBase::ProcessAck`
    /// (src/internet/model/tcp-socket-base.cc) calls `DoRetransmit` after PRR's
    /// `DoRecovery` unless the new head is a full segment already retransmitted
    /// (`TcpTxBuffer::IsRetransmittedDataAcked`). `DoRetransmit` sends what `NextSeg` without
    /// rule (3) returns (the first segment marked lost and not retransmitted, else new data
    /// the receive window allows), else the head again; without SACK the head was just marked
    /// lost, so it is the head.
    Forced,
}

/// How many packets an ACK of new data counts for when cwnd grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CwndGrowth {
    /// The packets the ACK counts for ([`GrowthCount`]: by default those it newly delivered,
    /// Linux `tcp_cong_avoid(sk, ack, acked_sacked)`; RFC 3465 byte counting): slow start
    /// doubles cwnd per RTT whatever the ACK ratio.
    PerPacket,
    /// One packet per ACK that advances snd_una, however many it covers: ns-3's
    /// `TcpNewReno::SlowStart` (+1 segment when segmentsAcked ≥ 1) and
    /// `CongestionAvoidance` (+MSS²/cwnd per call), src/internet/model/tcp-congestion-ops.cc;
    /// RFC 5681 §3.1 without byte counting. With delayed ACKs slow start grows ≈ 1.5× per RTT
    /// and congestion avoidance half a packet per RTT.
    PerAck,
    /// Linux 3.13-3.18: slow start counts the packets the ACK delivered
    /// (`tcp_slow_start(tp, acked)`, from 3.13) while cwnd ≤ ssthresh and stops at ssthresh + 1,
    /// handing nothing over; Reno's additive increase counts the ACK once, whatever it covers
    /// (`tcp_cong_avoid_ai(tp, w)`, one per call: w + 1 ACKs a packet). NewReno, Westwood+ and
    /// YeAH's Reno mode follow it; CUBIC (which then scaled its increase by an estimate of
    /// packets per ACK, not modelled), Illinois and YeAH's Scalable mode count packets. Source:
    /// net/ipv4/tcp_cong.c of 3.13-3.15 (`tcp_reno_cong_avoid(sk, ack, acked, in_flight)`).
    #[serde(rename = "linux-3")]
    Linux3,
    /// Linux 3.19: the stretch-ACK form of `tcp_cong_avoid_ai(tp, w, acked)` is in the 3.19
    /// tree, so Reno, Westwood+ and CUBIC count packets, with slow start's leftover handed to
    /// the increase; what is left of 3.x is the slow-start boundary (cwnd ≤ ssthresh, up to
    /// ssthresh + 1, for every algorithm) and YeAH's own rules: one per ACK in its Reno mode
    /// (`tcp_cong_avoid_ai(tp, tp->snd_cwnd, 1)`), a packet when the Scalable count exceeds
    /// min(cwnd, 100), and no leftover after slow start (nor for Illinois). Source: the 3.19
    /// tree's net/ipv4/tcp_cong.c, tcp_cubic.c, tcp_yeah.c, tcp_illinois.c.
    #[serde(rename = "linux-3.19")]
    Linux319,
}

/// Which ACKs grow cwnd, and how many segments each counts for (before [`CwndGrowth`] maps the
/// count to what the algorithm is given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GrowthCount {
    /// The packets the ACK newly delivered, each segment counted once, when first SACKed or
    /// else when cumulatively acknowledged (Linux 6.x `tcp_ack`: `tcp_cong_control` →
    /// `tcp_cong_avoid(sk, ack, acked_sacked)`, `acked_sacked = tcp_newly_delivered()`,
    /// net/ipv4/tcp_input.c). After an RTO, the ACK of the retransmission that fills the one
    /// hole below many SACKed segments counts 1: slow start restarts from 1.
    Delivered,
    /// ns-3's `TcpSocketBase::ProcessAck` (src/internet/model/tcp-socket-base.cc, 3.37 and
    /// later): `IncreaseWindow(segsAcked)` with `segsAcked` the bytes the cumulative ACK newly
    /// covers, SACKed before or not, in whole segments (the remainder carried to the next ACK,
    /// `m_bytesAckedNotProcessed`); on the ACK that ends a Loss episode only the segments
    /// above the recovery point (`(ackNumber - m_recover) / segmentSize`); on the ACK that
    /// ends a fast recovery all it covers (`(ackNumber - oldHeadSequence) / segmentSize`).
    /// Outside recovery an ACK that advances snd_una and also SACKs new data is a duplicate
    /// ACK to ns-3 (`isDupack = scoreboardUpdated`): it moves to, or stays in, Disorder and
    /// grows nothing. After an RTO the ACK that fills the one hole counts every segment up to
    /// the new snd_una, so slow start jumps to ssthresh at once.
    Cumulative,
    /// Linux 3.19's `tcp_ack` (net/ipv4/tcp_input.c of the 3.19 tree): `acked =
    /// tp->packets_out;` `tcp_clean_rtx_queue(...)`; `acked -= tp->packets_out;` then `if
    /// (tcp_may_raise_cwnd(sk, flag)) tcp_cong_avoid(sk, ack, acked);` and only after that
    /// `tcp_fastretrans_alert` (loss marking, entering and leaving recovery) and
    /// `tcp_process_tlp_ack`. So:
    /// - the count is the segments the cumulative ACK removed from the retransmission queue,
    ///   SACKed before or not (after an RTO, the ACK of the retransmission that fills the one
    ///   hole below the SACKed segments counts them all, so slow start can reach ssthresh in
    ///   one ACK; with `delivered` it counts 1);
    /// - `tcp_may_raise_cwnd` is false in CWR and Recovery (`tcp_in_cwnd_reduction`), and
    ///   otherwise needs `FLAG_DATA_ACKED` (a segment removed): growth in Open, Disorder and
    ///   Loss, on ACKs that remove data only;
    /// - the growth comes before the state machine: an ACK that starts a fast recovery grows
    ///   first, and ssthresh (and PRR's prior cwnd) then come from the grown cwnd; the ACK
    ///   that ends a fast recovery is seen in Recovery and grows nothing, cwnd = ssthresh
    ///   (`tcp_end_cwnd_reduction`) being all it gets; in Loss the growth comes before
    ///   `tcp_process_loss`, so an undo's `undo_cwnd` sees the grown cwnd and the ACK that
    ///   ends the Loss episode has grown it already.
    ///
    /// The growth is made here after the ACK's SACK blocks and cumulative ACK were applied and
    /// the congestion control heard `pkts_acked` and `in_ack_event`, before the tail loss
    /// probe's check, loss detection and the state machine. Not modelled: with a reordering
    /// degree above `sysctl_tcp_reordering` (3), 3.19 calls `tcp_cong_avoid` also on an ACK
    /// that only SACKs, with a count of 0 (`FLAG_FORWARD_PROGRESS`); haslab keeps no reordering
    /// degree, which is 3 on a path that does not reorder. The same `tcp_ack` sequence is in
    /// the 3.18.63 stable tree; earlier 3.x were not checked, hence the name.
    #[serde(rename = "linux-3.19")]
    Linux319,
}

/// Which kernel's tail-loss probe runs with `tlp = true` (see [`TcpConfig::tlp_variant`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TlpVariant {
    /// Linux 4.4+ (6.18) and RFC 8985: PTO = 2·SRTT + 2 ms (+ `min_rto` instead of 2 ms with
    /// one packet out), 1 s before an RTT sample; a probe of new data or a retransmission opens
    /// one episode at a time (default).
    #[default]
    Linux,
    /// Linux 3.10-3.19 (`tcp_schedule_loss_probe`, `tcp_send_loss_probe` in the 3.19 tree's
    /// net/ipv4/tcp_output.c): PTO = max(2·RTT, 10 ms), or max(2·RTT, 1.5·RTT + 200 ms
    /// (`TCP_DELACK_MAX`)) with one packet out, RTT being SRTT rounded up to jiffies of `hz`;
    /// no probe before an RTT sample, nor while cwnd has room and data waits unsent; a probe
    /// of new data opens no episode (only a retransmission sets `tlp_high_seq`), so such probes
    /// may follow one another, and at most one retransmission probe is outstanding.
    #[serde(rename = "linux-3.19")]
    Linux319,
}

/// When the sender counts as cwnd-limited, the test that gates the algorithms' growth (Linux
/// `tcp_is_cwnd_limited`, include/net/tcp.h) and the bookkeeping behind it (`tcp_cwnd_validate`,
/// net/ipv4/tcp_output.c). A send round is cwnd-limited when it stopped with data left to send
/// and cwnd full (`tcp_write_xmit`: `tcp_cwnd_test` gave no quota). A window ends when snd_una
/// reaches the snd_nxt recorded at the last update (`cwnd_usage_seq`, 3.x's `max_packets_seq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CwndLimited {
    /// Linux 5.18 and later's test and update rule: cwnd-limited if the flag is set, or in
    /// slow start (cwnd < ssthresh) while cwnd < 2 × `max_packets_out`; the flag,
    /// `max_packets_out` and the window end are overwritten when the window has ended, when
    /// the round was cwnd-limited, or when it was not, the flag is clear and more packets are
    /// out than `max_packets_out` (once set, the flag holds for the rest of the window).
    /// As in Linux 5.11 and later's `tcp_write_xmit`, the update runs after a send round that
    /// began with new data (or the FIN) unsent (`tcp_push_pending_frames` calls it only with a
    /// `tcp_send_head`), and then only if new data left or cwnd is full after the round
    /// (`is_cwnd_limited |= tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp); if
    /// (likely(sent_pkts || is_cwnd_limited))`), so a round that sends the last data and
    /// fills cwnd counts as cwnd-limited; a tail loss probe of new data too (through the same
    /// function). Rounds with nothing new to send (the ACKs of a chunk's tail, retransmissions
    /// alone, `tcp_xmit_retransmit_queue`) leave the flag and the window end as they were.
    Linux,
    /// Linux 3.16-3.19 (the same `tcp_is_cwnd_limited`, `tcp_cwnd_validate` and `tcp_write_xmit` in
    /// the 3.16, 3.18 and 3.19 trees; 3.13-3.15's `tcp_is_cwnd_limited(sk, in_flight)` is another
    /// rule): in slow start, 3.x's cwnd ≤ ssthresh (cwnd == ssthresh included), only cwnd < 2 ×
    /// `max_packets_out` counts and the flag is ignored; otherwise the flag. `tcp_cwnd_validate`
    /// runs only when new data left (`tcp_write_xmit`: `if (likely(sent_pkts))`; retransmissions,
    /// in `tcp_xmit_retransmit_queue`, and rounds that send nothing leave everything as it was), a
    /// tail loss probe's new segment included (`tcp_send_loss_probe` → `tcp_write_xmit` with
    /// `push_one = 2`, cwnd-limited when cwnd was full); and it overwrites the flag, the window end
    /// and `max_packets_out` whenever the window has ended or more packets are out than
    /// `max_packets_out` (`!before(snd_una, max_packets_seq) || packets_out > max_packets_out`), so
    /// a later send of a longer flight that found room in cwnd clears the flag, and a cwnd-limited
    /// send that does not raise the flight leaves it clear. Not modelled: TSO deferral
    /// (`tcp_tso_should_defer` also marks a round cwnd-limited; haslab sends one MSS per packet)
    /// and `tcp_push_one`'s one-skb sends from `tcp_sendmsg`.
    #[serde(rename = "linux-3.19")]
    Linux319,
}

/// How cwnd is compared with what is in flight before a segment leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WindowAccounting {
    /// In packets: a segment of any size may leave while pipe < cwnd (Linux `tcp_cwnd_test`:
    /// `tcp_packets_in_flight` against `snd_cwnd`, net/ipv4/tcp_output.c), so the short last
    /// segment of a write takes a whole packet of window.
    Packets,
    /// In bytes, as ns-3's `TcpSocketBase` (ns-3.17 and 3.37, src/internet/model/
    /// tcp-socket-base.cc): the available window is cwnd − BytesInFlight in bytes
    /// (`AvailableWindow`), and `SendPendingData` sends while it is positive, a full segment
    /// only if it is at least one MSS, the last data of a write if it fits (its silly-window
    /// check: stop when the window is under one MSS and the data left exceeds it). cwnd
    /// carries the bytes its per-ACK increase has added since the last whole segment: with
    /// `cwnd_growth = "per-ack"`, congestion avoidance adds ⌊MSS²/cwnd⌋ bytes per ACK
    /// (`TcpNewReno::CongestionAvoidance`, at least 1) and cwnd grows a packet per MSS of
    /// them; with `per-packet` cwnd stays whole segments (ns-3's `TcpLinuxReno` and
    /// `TcpCubic` add whole segments). A short segment in flight counts its own bytes.
    Bytes,
}

/// Whether partial ACKs in fast recovery restart the retransmission timer (RFC 6582 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PartialAckRto {
    /// Every partial ACK restarts it (RFC 6582 §4 "Slow-but-Steady"; Linux `tcp_ack` rearms
    /// on every ACK that acknowledges data): a recovery repairs one hole per RTT for as long
    /// as it takes.
    SlowButSteady,
    /// Only the first partial ACK of a recovery restarts it (RFC 6582 §4 "Impatient"; ns-3's
    /// `TcpSocketBase`, src/internet/model/tcp-socket-base.cc, `m_isFirstPartialAck`): a
    /// recovery with many holes ends in an RTO.
    Impatient,
}

/// cwnd at the end of a fast recovery (see [`TcpConfig::full_ack_exit`]), before the ACK's
/// ordinary increase in the Open state (which every stack modelled here makes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FullAckExit {
    /// cwnd = ssthresh (RFC 6582 §3.2 step 3 option 2; Linux; ns-3.37).
    Ssthresh,
    /// cwnd = min(ssthresh, packets in flight before the ACK + 1) (RFC 6582 option 1 as
    /// ns-3.17's `TcpNewReno::NewAck` computes it).
    Flight,
}

/// When a fast recovery without SACK ends (see [`TcpConfig::recovery_end`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryEnd {
    /// When the cumulative ACK reaches `recover`; a partial ACK below it resends the next hole
    /// and recovery goes on (NewReno, RFC 6582 §3.2; Linux; ns-3).
    Recover,
    /// At the first ACK of new data, partial or not (Reno, RFC 5681 §3.2 step 6): cwnd =
    /// ssthresh, the Open state, and the next hole waits for three new duplicate ACKs (or the
    /// RTO). ns-3.17's `TcpReno::NewAck` and `TcpWestwood::NewAck`
    /// (src/internet/model/tcp-reno.cc, tcp-westwood.cc at the ns-3.17 tag).
    NewAck,
}

/// What the cumulative ACK must cover before three duplicate ACKs may start a fast recovery
/// without SACK, under `recover_guard` (see [`TcpConfig::recover_covers`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecoverCovers {
    /// More than `recover`, one past the highest sequence number sent when the last recovery
    /// or RTO began (RFC 6582 §3.2 step 1: the ACK "covers more than recover", RFC 6582's
    /// recover being that highest number): an ACK that stops exactly at `recover` does not let
    /// a fast recovery start. Linux holds Reno's Recovery and Loss states while snd_una ==
    /// high_seq (net/ipv4/tcp_input.c, `tcp_is_non_sack_preventing_reopen`, "to prevent false
    /// fast retransmits"); NS-2's NewReno tests `highest_ack_ > recover_` (tcp-newreno.cc).
    More,
    /// `recover` itself: ns-3.37's `TcpSocketBase::DupAck`, `m_highRxAckMark >= m_recover`
    /// (src/internet/model/tcp-socket-base.cc).
    Reach,
}

/// cwnd when fast recovery begins without SACK (see [`TcpConfig::recovery_entry_cwnd`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryEntryCwnd {
    /// ssthresh + 3 (RFC 5681 §3.2 step 4, RFC 6582 §3.2 step 2: the three segments the
    /// duplicate ACKs say have left the network).
    Rfc,
    /// min(cwnd, ssthresh), not inflated: ns-3.17's `TcpWestwood::DupAck`
    /// (src/internet/model/tcp-westwood.cc at the ns-3.17 tag: `if (m_cWnd > m_ssThresh)
    /// m_cWnd = m_ssThresh`); each further duplicate ACK then adds one segment.
    Min,
}

/// When the congestion control's `pkts_acked` runs, and which RTT sample it gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CaSample {
    /// On each ACK that acknowledges new data, with the RTO estimator's sample
    /// ([`RttSampling`]: from the oldest segment it acknowledges).
    NewAck,
    /// Linux 6.x `tcp_clean_rtx_queue` (net/ipv4/tcp_input.c), which calls `pkts_acked` at its
    /// end for every ACK that finds data outstanding, also one that only SACKs (0 packets
    /// acknowledged), with `ca_rtt_us` (`tcp_ack_update_rtt`: "RTT of last (S)ACKed packet"):
    /// the send time of the highest segment this ACK newly SACKed that was never
    /// retransmitted; without one, of the highest segment the cumulative ACK newly covered,
    /// unless it covered any retransmitted segment (`FLAG_RETRANS_DATA_ACKED`); without
    /// either, the timestamp echo of an ACK that advanced `snd_una`; else no sample.
    Linux,
    /// ns-3.37's `TcpSocketBase::ProcessAck` (src/internet/model/tcp-socket-base.cc), which
    /// calls `PktsAcked` with `m_lastRtt` — the smoothed RTT (`EstimateRtt`: `m_lastRtt =
    /// m_rtt->GetEstimate()`), none before the first measurement — on every ACK that finds
    /// data outstanding and is not older than snd_una, counting: 1 for an ACK that does not
    /// advance snd_una ("after all, one segment has been ACKed") and for a partial ACK of a
    /// fast recovery (also the ACK that starts one); in Open and during an RTO's Loss episode
    /// the segments the cumulative ACK newly covers (`segsAcked`, the bytes short of a segment
    /// carried to the next ACK); in Disorder those less the duplicate ACKs counted before (no
    /// call if fewer); on the ACK that ends a fast recovery (ACK − old snd_una)/MSS and on the
    /// one that ends a Loss episode (ACK − recover)/MSS. It runs here before the ACK's recovery
    /// step (ns-3 calls it after `DupAck`, which may enter recovery), and after the RTO
    /// estimator has taken this ACK's sample.
    Ns3,
    /// Linux 3.19's `tcp_clean_rtx_queue` (net/ipv4/tcp_input.c of the 3.19 tree), which calls
    /// `pkts_acked(sk, pkts_acked, ca_seq_rtt_us)` only `if (flag & FLAG_ACKED)`: on an ACK
    /// whose cumulative ACK removed at least one segment, with the count of segments removed
    /// (SACKed before or not). `ca_seq_rtt_us` is `now − last_ackt`, `last_ackt` the send time
    /// of the last segment, in sequence order, that the loop removes without `TCPCB_RETRANS`
    /// (`TCPCB_SACKED_RETRANS | TCPCB_EVER_RETRANS | TCPCB_REPAIRED`: never retransmitted),
    /// including segments SACKed before: after a recovery, the ACK of a retransmission that
    /// fills a hole gives the age of the highest SACKed original above it. The sample is
    /// taken even when the same ACK also removes retransmitted segments
    /// (`FLAG_RETRANS_DATA_ACKED` only blanks the RTO estimator's sample, in
    /// `tcp_ack_update_rtt`); it is −1 (none here) when every removed segment was
    /// retransmitted, with no SACK or timestamp fallback. An ACK that only SACKs calls nothing.
    /// 3.19's algorithms read it as they do here: Illinois's base and maximum RTT (the maximum
    /// kept for the connection's life), Westwood+'s RTT, Vegas's and YeAH's minimum RTTs,
    /// CUBIC's delay minimum and HyStart (`tcp_illinois_acked`, `tcp_westwood_pkts_acked`,
    /// `tcp_vegas_pkts_acked`, `bictcp_acked`; none of them reads a negative sample).
    #[serde(rename = "linux-3.19")]
    Linux319,
}

/// Where RTT samples come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RttSampling {
    /// Linux `tcp_clean_rtx_queue` and `tcp_ack_update_rtt` (net/ipv4/tcp_input.c), on every
    /// ACK that finds data outstanding: the send time of the oldest segment the cumulative ACK
    /// acknowledges, at the simulator's nanosecond resolution, unless a segment it covers was
    /// ever retransmitted, SACKed before or not (`FLAG_RETRANS_DATA_ACKED`; Karn's rule, RFC
    /// 6298 §3); else the send time of the oldest segment the ACK newly SACKs that was never
    /// retransmitted (`first_sackt`; so an ACK that only SACKs also gives a sample); else, if
    /// the ACK acknowledges new data, the timestamp echo on the 1 ms timestamp clock (RFC 7323
    /// §4).
    SendTime,
    /// ns-3 3.37 `TcpSocketBase::EstimateRtt` (src/internet/model/tcp-socket-base.cc): a
    /// sample only when the ACK covers the oldest outstanding segment and that segment was
    /// never retransmitted (its `RttHistory` `retx` flag), even with timestamps; with
    /// timestamps on, the sample is the echo's age on the 1 ms timestamp clock
    /// (`TcpOptionTS::ElapsedTimeFromTsValue`: whole milliseconds, 1 µs when zero), without
    /// them the send time. Whole-millisecond samples keep RTTVAR from decaying to zero on a
    /// path whose RTT is steady to a fraction of a millisecond, which changes the RTO.
    TsEcho,
}

/// When an RTO recomputes ssthresh. The congestion control's `CA_EVENT_LOSS` (`cwnd_event`)
/// comes with the recomputation and only with it, as in Linux `tcp_enter_loss`; ns-3.37's
/// `ReTxTimeout` calls `CwndEvent(CA_EVENT_LOSS)` on every RTO, which is every recomputation
/// under `every-in-flight`. The state change to Loss (`set_state`) is announced on every RTO,
/// a repeated one too (Linux `tcp_set_ca_state`, ns-3.37 `CongestionStateSet`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RtoSsthresh {
    /// Linux `tcp_enter_loss` (net/ipv4/tcp_input.c, "Reduce ssthresh if it has not yet been
    /// made inside this window"): in Open or Disorder; once snd_una has reached the recovery
    /// point (`!after(high_seq, snd_una)`); or in Loss when the cumulative ACK advanced since
    /// the last RTO (`icsk_retransmits == 0`: `tcp_ack` zeroes it on every ACK that advances
    /// snd_una, `tcp_update_rto_stats` counts each RTO). Not during a fast recovery, and not on
    /// an RTO that repeats the last one with no progress in between.
    OncePerEpisode,
    /// On every RTO, with ns-3.37's `BytesInFlight()` before it as the flight (the pipe:
    /// sent − SACKed − lost + retransmitted). `TcpSocketBase::ReTxTimeout` tests "not in
    /// CA_LOSS or head not retransmitted" only after `TcpTxBuffer::SetSentListLost` has cleared
    /// every segment's retransmitted flag, so the test always passes (read at the ns-3.37 tag,
    /// src/internet/model/tcp-socket-base.cc and tcp-tx-buffer.cc).
    EveryInFlight,
    /// On every RTO, a repeated one too, with the flight taken as everything sent and not yet
    /// acknowledged: ns-3.17's `TcpNewReno::Retransmit` (ssthresh = max(2·MSS,
    /// BytesInFlight()/2), `BytesInFlight()` = highest sequence sent − snd.una, at the ns-3.17
    /// tag src/internet/model/tcp-newreno.cc and tcp-socket-base.cc) and
    /// `TcpWestwood::Retransmit` (from the current estimate).
    Every,
}

/// What cwnd an undo restores for a congestion control without an `undo_cwnd` of its own
/// (see [`TcpConfig::undo_cwnd`]). An undo (Linux `tcp_undo_cwnd_reduction`) restores cwnd
/// first, then ssthresh to max(ssthresh, `prior_ssthresh`) ([`PriorSsthresh`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UndoCwnd {
    /// max(cwnd, cwnd before the reduction): Linux 6.18's `tcp_reno_undo_cwnd`
    /// (net/ipv4/tcp_cong.c, `max(tcp_snd_cwnd(tp), tp->prior_cwnd)`), which every algorithm
    /// modelled here uses there (Reno, CUBIC, Westwood+, YeAH and Illinois name it as their
    /// `.undo_cwnd`).
    Linux,
    /// Linux 3.19, where `undo_cwnd` was optional: an algorithm without one gets
    /// `tcp_undo_cwnd_reduction`'s fallback (net/ipv4/tcp_input.c, `tp->snd_cwnd =
    /// max(tp->snd_cwnd, tp->snd_ssthresh << 1)`), computed before ssthresh is restored, so from
    /// the reduced ssthresh. Reno (`tcp_reno` in tcp_cong.c), Westwood+, YeAH and Illinois have
    /// none in the 3.19 tree (their `tcp_congestion_ops` tables), nor do TcpHas, TIBET and
    /// Trickle here; CUBIC has `bictcp_undo_cwnd`, max(cwnd, `loss_cwnd`), `loss_cwnd` being
    /// cwnd when its `ssthresh` last ran, i.e. the `linux` value; BBR keeps its own.
    #[serde(rename = "linux-3.19")]
    Linux319,
}

/// What an undo restores ssthresh to at least (see [`TcpConfig::prior_ssthresh`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PriorSsthresh {
    /// ssthresh as it was before the reduction, which no kernel modelled here saves (kept to
    /// measure what the kernel's rule changes).
    Ssthresh,
    /// Linux `tcp_current_ssthresh` when the reduction begins (include/net/tcp.h): outside a
    /// reduction state max(ssthresh, ¾·cwnd) (`(snd_cwnd >> 1) + (snd_cwnd >> 2)`), in fast
    /// recovery ssthresh. `tcp_enter_loss` (the RTO, when it reduces ssthresh) and
    /// `tcp_enter_recovery` save it as `prior_ssthresh` before calling the algorithm's
    /// `ssthresh` (net/ipv4/tcp_input.c), the same in Linux 3.19 and 6.18; an undo then sets
    /// ssthresh = max(ssthresh, prior_ssthresh). So an undo leaves ssthresh at ¾ of the
    /// pre-reduction cwnd or more, and cwnd grows on in slow start up to it. The default.
    Linux,
}

/// Which transmissions raise the congestion control's `CA_EVENT_TX_START` (see
/// [`TcpConfig::tx_start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TxStartEvent {
    /// New data sent with nothing outstanding: the first segment after an idle period (and at
    /// the start). The default, though Linux (3.19 and 6.18, `linux`) also raises the event
    /// for a retransmission sent with nothing in flight.
    NewData,
    /// Every data segment, new or retransmitted, that leaves while nothing is in flight (pipe,
    /// Linux `tcp_packets_in_flight`, is 0 before it): Linux 3.19 `tcp_transmit_skb`
    /// (net/ipv4/tcp_output.c, `if (tcp_packets_in_flight(tp) == 0) tcp_ca_event(sk,
    /// CA_EVENT_TX_START);`) and Linux 6.18 `tcp_event_data_sent` (the same test, for every
    /// segment `__tcp_transmit_skb` sends with data). So also the retransmission an RTO sends
    /// after marking every segment lost, and one sent in recovery when everything outstanding
    /// is SACKed or lost: YeAH (`tcp_vegas_cwnd_event`) then forgets its base RTT after each
    /// RTO. 3.19's `tcp_transmit_skb` also raises it for a pure ACK sent with nothing in flight
    /// (6.18 does not); that is not modelled: of the algorithms, only YeAH (and Vegas) react
    /// in 3.19 — CUBIC has no `cwnd_event` there, Westwood+ and Illinois ignore the event — and
    /// the state YeAH resets is reset again by the next data segment, which finds nothing in
    /// flight either, before anything reads it (an ACK with nothing outstanding calls neither
    /// `pkts_acked` nor `cong_avoid`). TcpHas and Trickle take the event for the end of an OFF
    /// period only with nothing outstanding (where Linux's restart after idle acts), so an
    /// RTO's retransmission does not run their OFF-period rule.
    Linux,
}

/// The receive window a receiver offers (see [`TcpConfig::rcvbuf`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RcvBufMode {
    /// Always `rwnd` (the right edge moves with every byte received): a receive buffer that is
    /// never the limit unless `rwnd` is small (ns-3's `RcvBufSize`, a socket with SO_RCVBUF).
    Fixed,
    /// Linux 6.18's receive-buffer autotuning (`tcp_rmem`, `tcp_moderate_rcvbuf = 1`): the
    /// window starts at 64 KiB and grows with what the application reads per receiver RTT and
    /// with the out-of-order data held, up to `tcp_rmem[2]` (see tcp/rcvbuf.rs for every rule
    /// and its kernel source). `rwnd` is not used.
    Linux,
}

fn d_ms(ms: u64) -> Duration {
    Duration(ms * 1_000_000)
}

/// TCP options of one flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Sender maximum segment size (payload bytes). Default 1448: a full segment with the
    /// timestamps option is a 1500-byte IP packet. ns-3's default is 536.
    pub mss: u32,
    /// Initial window in segments (RFC 6928: 10; Linux TCP_INIT_CWND = 10).
    pub initial_cwnd: u32,
    /// RFC 7323 timestamps option (RTTM): 12 bytes per segment. Default on, as in Linux.
    pub timestamps: bool,
    /// Delayed ACKs: `on` (every 2nd full segment, else the timeout; default), `off`,
    /// `linux` (Linux 6.18's quick-ACK and delayed-ACK rules, tcp/delack.rs) or `linux-3`
    /// (Linux 3.19's, which differ in two rules).
    pub delayed_ack: DelayedAckMode,
    /// Delayed-ACK timer. Default 40 ms (Linux TCP_ATO_MIN); ns-3 uses 200 ms. With
    /// `delayed_ack = "linux"`: the floor of Linux's adaptive timeout.
    pub delayed_ack_timeout: Duration,
    /// Lower bound of the RTO. Default 200 ms (Linux TCP_RTO_MIN); RFC 6298 and ns-3: 1 s.
    pub min_rto: Duration,
    /// Upper bound of the backed-off RTO. Default 120 s (Linux TCP_RTO_MAX); ns-3: 60 s.
    pub max_rto: Duration,
    /// RTT estimator and RTO formula: `linux` (default; Linux's `tcp_rtt_estimator`, RTO =
    /// SRTT + rttvar, rttvar the round trip's largest 4·mdev, never below min_rto),
    /// `rfc6298` (RFC 6298's estimator, max(min_rto, SRTT + max(G, 4·RTTVAR)), as ns-3) or
    /// `ns3.17`. See tcp/rtt.rs.
    pub rto_formula: RtoFormula,
    /// RTO before the first RTT sample, and the SYN retransmission timer (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// When the RTO, tail-loss-probe, RACK reordering and delayed-ACK timers fire: `exact`
    /// (default: their timeout after they are armed, as ns-3), `linux` (Linux 4.8+'s timer
    /// wheel, so 6.18: jiffies of `hz`, at least one jiffy late, up to 8 jiffies from 252 ms
    /// at HZ = 250) or `linux-3.19` (the cascading wheel before 4.8: on the expiry's tick).
    /// See tcp/timer_clock.rs.
    pub timer_clock: TimerClock,
    /// With `timer_clock` other than `exact`: the kernel's CONFIG_HZ, 100, 250, 300 or 1000.
    /// Default 250: Kconfig's default, the value of Debian's and Ubuntu's generic kernels and
    /// the live testbed's.
    pub hz: u32,
    /// Receive window advertised by the receiver. Default 64 MiB (large: never the limit
    /// unless set). Window scaling is negotiated whenever it exceeds 65535.
    pub rwnd: Size,
    /// The receive buffer: `fixed` (default: the window is always `rwnd`) or `linux` (Linux
    /// 6.18 autotuning from `tcp_rmem`, tcp/rcvbuf.rs).
    pub rcvbuf: RcvBufMode,
    /// With `rcvbuf = "linux"`: the sysctl net.ipv4.tcp_rmem, [min, default, max] in bytes of
    /// memory. Default `[4096, 131072, 33554432]` (Linux 6.16+: "tcp: increase tcp_rmem\[2\] to 32
    /// MB"). The buffer starts at `default` and autotuning never takes it past `max`; `min`
    /// applies only under memory pressure, which is not modelled.
    pub tcp_rmem: [Size; 3],
    /// With `rcvbuf = "linux"`: the payload-to-memory ratio of received packets in 1/256
    /// (Linux `tp->scaling_ratio`, include/net/tcp.h): the window a buffer of B bytes offers is
    /// B × ratio / 256. The kernel starts at 128 (`TCP_DEFAULT_SCALING_RATIO`) and measures it
    /// from the first full-sized segment as len × 256 / `skb->truesize`
    /// (`tcp_measure_rcv_mss`), which depends on the receiving driver; this is the measured
    /// value. Default 128 (the kernel's value before it measures).
    pub scaling_ratio: u8,
    /// cwnd during fast recovery: `classic` (RFC 6582 inflation, default) or `prr` (RFC 6937,
    /// the default of Linux and ns-3). Without SACK, PRR sends less during a long multi-loss
    /// recovery than classic inflation does (see docs/tcp.md).
    pub recovery: RecoveryMode,
    /// The PRR flavour: `linux` (default, 6.x), `linux-3` or `ns3` (see [`PrrVariant`]).
    pub prr_variant: PrrVariant,
    /// Partial ACKs in fast recovery restart the RTO timer every time (`slow-but-steady`,
    /// default, Linux) or only the first time (`impatient`, ns-3).
    pub partial_ack_rto: PartialAckRto,
    /// Restart the RTO timer when the first unacknowledged segment is retransmitted (Linux
    /// `tcp_xmit_retransmit_queue`). Default true; ns-3 keeps the running timer. Without it,
    /// on a path whose RTT is near the RTO (a full one-BDP queue, `rto_formula = "rfc6298"`,
    /// 200 ms minimum), the RTO races the fast retransmission's ACK.
    pub rto_restart_on_retransmit: bool,
    /// Restart the RTO timer on an ACK of new data that also SACKs new data outside
    /// recovery (RFC 6298 (5.3): every ACK of new data restarts it; Linux `tcp_ack`). Default
    /// true. ns-3 3.37 counts such an ACK as a duplicate ACK (RFC 6675 §5), moves to Disorder
    /// and skips `NewAck`, so its timer keeps running from an earlier ACK: `false` as ns-3.
    pub rto_restart_on_sack_advance: bool,
    /// Limited transmit (RFC 3042): the first two duplicate ACKs each let one new segment out.
    /// Default true (Linux, ns-3.37); ns-3.17's TcpNewReno has it off (`LimitedTransmit`
    /// false, src/internet/model/tcp-newreno.cc). Used by `recovery = "classic"` without SACK
    /// (with SACK, RFC 6675's pipe already counts the SACKed segments out).
    pub limited_transmit: bool,
    /// RFC 6582 §3.2 step 1 (the "careful" variant): three duplicate ACKs start a fast
    /// recovery only when the cumulative ACK reaches `recover` (one past the highest sequence
    /// sent when the last recovery or RTO began; without SACK, [`TcpConfig::recover_covers`]
    /// says whether it must go past it), and during the go-back-N after an RTO duplicate ACKs
    /// are not counted (Linux's Loss state; ns-3.37, RFC 6675 §5.1). Default true. `false`:
    /// ns-3.17's `TcpNewReno::DupAck`, which enters fast recovery on any third duplicate ACK
    /// when not already in one, also after an RTO (ssthresh from everything outstanding, cwnd =
    /// ssthresh + 3, the first unacknowledged segment resent by `DoRetransmit`).
    pub recover_guard: bool,
    /// Without SACK, under `recover_guard`: whether the cumulative ACK must cover `more` than
    /// `recover` (default; RFC 6582 §3.2 step 1, Linux) or only `reach` it (ns-3.37) before three
    /// duplicate ACKs start a fast recovery; see [`RecoverCovers`]. After a go-back-N that stops
    /// exactly at `recover`, the duplicate ACKs that follow are mostly the receiver's answers to
    /// retransmitted segments it already held: `reach` takes them for a new loss. With SACK,
    /// reaching `recover` is enough either way.
    pub recover_covers: RecoverCovers,
    /// RFC 6675 §4 NextSeg rule (3) with SACK, as ns-3 3.37 applies it
    /// (src/internet/model/tcp-tx-buffer.cc, `TcpTxBuffer::NextSeg`): in fast recovery, when no
    /// segment is marked lost and no new data is left to send, the first segment neither SACKed
    /// nor already retransmitted is sent again (ns-3 drops the rule's condition (1.b), that it lie
    /// below the highest SACK). It repairs a loss at the end of the data, which no SACK can
    /// mark, within the recovery, at the cost of resending segments still in flight. Default
    /// false: Linux retransmits only the segments it marked lost (`tcp_xmit_retransmit_queue`);
    /// the `ns3-newreno` transport sets it.
    pub nextseg_rule3: bool,
    /// What a partial ACK of a PRR fast recovery sends besides PRR's window: `window`
    /// (default, Linux) or `forced`: one segment at once (ns-3 3.37's `DoRetransmit`); see
    /// [`PartialAckRetransmit`].
    pub partial_ack_retransmit: PartialAckRetransmit,
    /// cwnd when the cumulative ACK reaches `recover` and a (non-SACK classic) fast recovery
    /// ends: `ssthresh` (default; RFC 6582 §3.2 step 3 option 2, Linux
    /// `tcp_end_cwnd_reduction`, ns-3.37) or `flight`: ns-3.17's `TcpNewReno::NewAck`
    /// (src/internet/model/tcp-newreno.cc at the ns-3.17 tag), RFC 6582 option 1: cwnd =
    /// min(ssthresh, BytesInFlight + SMSS), BytesInFlight counted before the ACK releases any
    /// data (highTxMark − the old snd.una), and then that same ACK's ordinary increase (it falls
    /// through to slow start / congestion avoidance).
    pub full_ack_exit: FullAckExit,
    /// When a fast recovery without SACK ends: `recover` (default; NewReno, RFC 6582: when the
    /// cumulative ACK reaches the recovery point) or `new-ack` (Reno, RFC 5681 §3.2 step 6: at
    /// the first ACK of new data, as ns-3.17's TcpReno and TcpWestwood); see [`RecoveryEnd`].
    /// `new-ack` needs `sack = false` and `recovery = "classic"`.
    pub recovery_end: RecoveryEnd,
    /// cwnd when a fast recovery without SACK begins: `rfc` (default, ssthresh + 3) or `min`
    /// (min(cwnd, ssthresh), ns-3.17's TcpWestwood); see [`RecoveryEntryCwnd`]. `min` needs
    /// `sack = false` and `recovery = "classic"`.
    pub recovery_entry_cwnd: RecoveryEntryCwnd,
    /// Where RTT samples come from: `send-time` (default, Linux) or `ts-echo` (ns-3 3.37:
    /// whole-millisecond timestamp echoes, none from a retransmitted segment).
    pub rtt_sampling: RttSampling,
    /// When the congestion control's `pkts_acked` runs and which RTT it gets: `new-ack`
    /// (default: on an ACK of new data, the RTO estimator's sample), `linux` (every ACK
    /// with data outstanding, the RTT of the newest segment it SACKed or acknowledged) or
    /// `ns3` (ns-3.37's `PktsAcked` calls, with the smoothed RTT) or `linux-3.19` (ACKs that
    /// remove data, the newest never-retransmitted removed segment's RTT, SACKed before or
    /// not); see [`CaSample`].
    pub ca_sample: CaSample,
    /// Undo an RTO found spurious by the timestamp echo (Eifel detection, RFC 3522; Linux
    /// `tcp_try_undo_loss`). Default true; ns-3 undoes nothing. Needs `timestamps`.
    pub rto_undo: bool,
    /// F-RTO (RFC 5682 §3.1, its SACK-enhanced form; Linux `tcp_frto`, default 2 since
    /// 2.6.24): after an RTO that did not come during a fast recovery or a Loss episode whose
    /// cumulative ACK advanced, the first ACK that advances snd_una below the recovery point
    /// sends new data instead of the next retransmission; an ACK that then (S)ACKs data never
    /// retransmitted shows the RTO spurious and undoes it, a duplicate ACK or a SACK of the
    /// new data shows the loss real (Linux `tcp_process_loss`). Default true, as Linux; ns-3
    /// (3.17 and 3.37) and NS-2's defaults have none (`false`). Works with or without SACK and
    /// timestamps.
    pub frto: bool,
    /// What cwnd an undo of a spurious RTO restores for an algorithm without an `undo_cwnd` of
    /// its own: `linux` (default; Linux 6.18's `tcp_reno_undo_cwnd`, max(cwnd, cwnd before the
    /// reduction)) or `linux-3.19` (3.19's fallback, max(cwnd, 2 × the reduced ssthresh), for
    /// Reno, Westwood+, YeAH and Illinois); see [`UndoCwnd`].
    pub undo_cwnd: UndoCwnd,
    /// The ssthresh an undo restores at least: `linux` (default; Linux 3.19 and 6.18,
    /// `tcp_current_ssthresh`: max(ssthresh, ¾·cwnd) outside fast recovery) or `ssthresh` (its
    /// value before the reduction); see [`PriorSsthresh`].
    pub prior_ssthresh: PriorSsthresh,
    /// Which transmissions raise `CA_EVENT_TX_START`: `new-data` (default: new data sent with
    /// nothing outstanding) or `linux` (every data segment sent with nothing in flight,
    /// retransmissions included: Linux 3.19 and 6.18); see [`TxStartEvent`].
    pub tx_start: TxStartEvent,
    /// When an RTO recomputes ssthresh: `once-per-episode` (default, Linux: not during a fast
    /// recovery, nor on a repeat without progress), `every-in-flight` (ns-3.37: every RTO, from
    /// the pipe) or `every` (ns-3.17: every RTO, from everything outstanding).
    pub rto_ssthresh: RtoSsthresh,
    /// What an ACK counts for in cwnd growth: `per-packet` (default, Linux: the packets
    /// `growth_count` counts), `per-ack` (ns-3's TcpNewReno: one packet per ACK of new data
    /// that counts any), `linux-3` (Linux 3.13-3.18: packets in slow start, one per ACK in
    /// Reno's additive increase) or `linux-3.19` (Linux 3.19: packets, 3.x's slow-start
    /// boundary, YeAH's per-ACK Reno mode).
    pub cwnd_growth: CwndGrowth,
    /// Which ACKs grow cwnd and what each counts: `delivered` (default, Linux: the packets it
    /// newly delivered), `cumulative` (ns-3's `ProcessAck`: the segments the cumulative ACK
    /// newly covers, SACKed before or not) or `linux-3.19` (the segments removed, SACKed before
    /// or not, counted before the state machine and not in Recovery); see [`GrowthCount`].
    pub growth_count: GrowthCount,
    /// When the sender counts as cwnd-limited, for the algorithms' growth: `linux` (default,
    /// Linux 5.18 and later) or `linux-3.19` (Linux 3.16-3.19: in slow start, cwnd ≤ ssthresh,
    /// only cwnd < 2 × the largest flight counts; the flag is updated only when new data
    /// leaves); see [`CwndLimited`].
    pub cwnd_limited: CwndLimited,
    /// How cwnd is compared with what is in flight: `packets` (default, Linux) or `bytes`
    /// (ns-3's `TcpSocketBase`: the short last segment of a write leaves on the bytes left in
    /// the window); see [`WindowAccounting`].
    pub window_accounting: WindowAccounting,
    /// Restart after idle: `off`, `rfc5681` or `linux` (default: `linux`, because the papers
    /// that measured real servers ran Linux with tcp_slow_start_after_idle = 1).
    pub idle_restart: IdleRestart,
    /// Initial sequence number of each direction; random (from the seed) when absent.
    pub isn: Option<u32>,
    /// Selective acknowledgements (RFC 2018; SACK-permitted on both SYNs) with RFC 6675 loss
    /// recovery, and D-SACK reports of duplicates (RFC 2883). Default off, as in the ns-2 /
    /// ns-3.17-era simulations of the papers; Linux and current ns-3 default to on.
    pub sack: bool,
    /// RACK-TLP (RFC 8985): a tail-loss probe at PTO = 2·SRTT (+ min_rto with one packet out)
    /// and RACK time-based loss detection. Requires `sack`. Default off (Linux: on with SACK;
    /// ns-3: not implemented).
    pub tlp: bool,
    /// With `tlp = true`: the probe's rules, `linux` (default: Linux 4.4+, RFC 8985) or
    /// `linux-3.19` (Linux 3.10-3.19: another timeout, no episode for a probe of new data; see
    /// [`TlpVariant`]). RACK's loss detection is the same in both.
    pub tlp_variant: TlpVariant,
    /// RACK time-based loss detection (RFC 8985 §6) on its own: `true` with `tlp = false` is
    /// RACK without the probe, which is what Linux 6.17 and later do with SACK and
    /// `tcp_early_retrans = 0` (RACK is their only SACK loss detection:
    /// net.ipv4.tcp_recovery's RACK bit no longer turns it off). Default: the same as `tlp`
    /// (RACK-TLP together, or neither: RFC 6675's DupThresh rule alone, as ns-3). Requires
    /// `sack`; `false` with `tlp = true` is refused (the probe relies on RACK to find the loss).
    pub rack: Option<bool>,
    /// Pacing: `off` (default), `linux` or `cwnd-per-rtt`.
    pub pacing: PacingMode,
    /// Upper bound of the pacing rate (Linux SO_MAX_PACING_RATE). With `pacing = "off"` the
    /// sender is paced at exactly this rate, as fq does for such a socket.
    pub max_pacing_rate: Option<Rate>,
    /// cwnd ≤ this rate × SRTT (the Trickle mechanism, Ghobadi et al., USENIX ATC 2012); an application can
    /// also set it while running. Absent: no clamp.
    pub cwnd_clamp_rate: Option<Rate>,
    /// newCWV's non-validated period (RFC 7661: 5 minutes); used with `idle_restart = "newcwv"`.
    pub newcwv_nvp: Duration,
    /// The Enhancing-TCP paper's novel pacing (§3.1): the first RTT of each chunk (a write
    /// that starts when everything before it was acknowledged) is paced at cwnd/RTT, or, after
    /// an RTO in the previous chunk's trailing ACKs, cwnd is restored to its pre-RTO value and
    /// paced over two RTTs; skipped when restart after idle decayed cwnd. Default off.
    pub novel_pacing: bool,
    /// The Enhancing-TCP paper's Reducing Tail Loss (§3.2): in a chunk's trailing-ACKs phase,
    /// one 1-byte retransmission of the chunk's last byte per ACK received, until m are sent
    /// (m from the paper's equations, see tcp/rtl.rs). Default off.
    pub rtl: bool,
    /// RTL's target probability of a tail RTO (ε in equation (5); the paper: 10⁻⁶).
    pub rtl_epsilon: f64,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            initial_cwnd: 10,
            timestamps: true,
            delayed_ack: DelayedAckMode::On,
            delayed_ack_timeout: d_ms(40),
            min_rto: d_ms(200),
            max_rto: d_ms(120_000),
            rto_formula: RtoFormula::Linux,
            initial_rto: d_ms(1000),
            timer_clock: TimerClock::Exact,
            hz: 250,
            rwnd: Size(64 << 20),
            rcvbuf: RcvBufMode::Fixed,
            tcp_rmem: [Size(4096), Size(131_072), Size(33_554_432)],
            scaling_ratio: crate::tcp::rcvbuf::TCP_DEFAULT_SCALING_RATIO,
            recovery: RecoveryMode::Classic,
            prr_variant: PrrVariant::Linux,
            cwnd_growth: CwndGrowth::PerPacket,
            growth_count: GrowthCount::Delivered,
            cwnd_limited: CwndLimited::Linux,
            window_accounting: WindowAccounting::Packets,
            partial_ack_rto: PartialAckRto::SlowButSteady,
            rto_ssthresh: RtoSsthresh::OncePerEpisode,
            rto_undo: true,
            undo_cwnd: UndoCwnd::Linux,
            prior_ssthresh: PriorSsthresh::Linux,
            tx_start: TxStartEvent::NewData,
            frto: true,
            rto_restart_on_retransmit: true,
            rto_restart_on_sack_advance: true,
            rtt_sampling: RttSampling::SendTime,
            ca_sample: CaSample::NewAck,
            limited_transmit: true,
            recover_guard: true,
            nextseg_rule3: false,
            partial_ack_retransmit: PartialAckRetransmit::Window,
            full_ack_exit: FullAckExit::Ssthresh,
            recovery_end: RecoveryEnd::Recover,
            recover_covers: RecoverCovers::More,
            recovery_entry_cwnd: RecoveryEntryCwnd::Rfc,
            idle_restart: IdleRestart::Linux,
            isn: None,
            sack: false,
            tlp: false,
            tlp_variant: TlpVariant::Linux,
            rack: None,
            pacing: PacingMode::Off,
            max_pacing_rate: None,
            cwnd_clamp_rate: None,
            newcwv_nvp: d_ms(300_000),
            novel_pacing: false,
            rtl: false,
            rtl_epsilon: 1e-6,
        }
    }
}

impl TcpConfig {
    /// TCP header bytes on a data or ACK segment (20, + 12 with timestamps).
    pub fn tcp_header_bytes(&self) -> u32 {
        if self.timestamps {
            32
        } else {
            20
        }
    }
    /// Whether RACK loss detection runs: `rack` if given, else `tlp`.
    pub fn rack_on(&self) -> bool {
        self.rack.unwrap_or(self.tlp)
    }
    /// Checks the ranges a type cannot express; errors name the field.
    pub fn check(&self) -> Result<(), (String, String)> {
        let err = |f: &str, m: &str| Err((f.to_string(), m.to_string()));
        if !(64..=65_495).contains(&self.mss) {
            return err("mss", "must be between 64 and 65495 bytes");
        }
        if self.initial_cwnd == 0 || self.initial_cwnd > 1000 {
            return err("initial_cwnd", "must be between 1 and 1000 segments");
        }
        if self.min_rto.0 == 0 {
            return err("min_rto", "must be greater than zero");
        }
        if self.max_rto < self.min_rto {
            return err("max_rto", "must not be smaller than min_rto");
        }
        if self.initial_rto.0 == 0 {
            return err("initial_rto", "must be greater than zero");
        }
        if self.initial_rto > self.max_rto {
            return err("initial_rto", "must not be larger than max_rto");
        }
        crate::tcp::cc::jiffies::check_hz(self.hz)?;
        if self.delayed_ack != DelayedAckMode::Off && self.delayed_ack_timeout.0 == 0 {
            return err(
                "delayed_ack_timeout",
                "must be greater than zero when delayed_ack is \"on\", \"linux\" or \"linux-3\"",
            );
        }
        if self.rwnd.0 < self.mss as u64 || self.rwnd.0 > (1u64 << 30) {
            return err(
                "rwnd",
                "must be at least one MSS and at most 1GiB (window scale 14)",
            );
        }
        let [rmin, rdef, rmax] = self.tcp_rmem.map(|s| s.0);
        let linux_rcvbuf = self.rcvbuf == RcvBufMode::Linux;
        if linux_rcvbuf && (rmin == 0 || rmin > rdef || rdef > rmax) {
            return err(
                "tcp_rmem",
                "must be three sizes [min, default, max] with 0 < min <= default <= max",
            );
        }
        if linux_rcvbuf && (rdef < 4 * self.mss as u64 || rmax > (1u64 << 30)) {
            return err(
                "tcp_rmem",
                "default must be at least 4 MSS (Linux's tcp_fixup_rcvbuf minimum, for fast retransmit) and max at most 1GiB (window scale 14)",
            );
        }
        if linux_rcvbuf && self.scaling_ratio == 0 {
            return err(
                "scaling_ratio",
                "must be between 1 and 255 (the payload share of received memory in 1/256)",
            );
        }
        let reno_needs = "requires sack = false and recovery = \"classic\" (a Reno fast recovery, RFC 5681 §3.2, which inflates cwnd by the duplicate ACKs)";
        if self.recovery_end == RecoveryEnd::NewAck
            && (self.sack || self.recovery != RecoveryMode::Classic)
        {
            return err("recovery_end", &format!("\"new-ack\" {reno_needs}"));
        }
        if self.recovery_entry_cwnd == RecoveryEntryCwnd::Min
            && (self.sack || self.recovery != RecoveryMode::Classic)
        {
            return err("recovery_entry_cwnd", &format!("\"min\" {reno_needs}"));
        }
        if self.tlp && !self.sack {
            return err(
                "tlp",
                "requires sack = true (RACK-TLP detects the repaired losses from SACK blocks, as Linux does)",
            );
        }
        if self.rack == Some(false) && self.tlp {
            return err(
                "rack",
                "must not be false with tlp = true (the probe relies on RACK to detect the loss it reveals, RFC 8985 §7)",
            );
        }
        if self.rack == Some(true) && !self.sack {
            return err(
                "rack",
                "requires sack = true (RACK orders deliveries by the SACK blocks)",
            );
        }
        if self.max_pacing_rate.is_some_and(|r| r.0 == 0) {
            return err("max_pacing_rate", "must be greater than zero");
        }
        if self.cwnd_clamp_rate.is_some_and(|r| r.0 == 0) {
            return err("cwnd_clamp_rate", "must be greater than zero");
        }
        if self.newcwv_nvp.0 == 0 {
            return err("newcwv_nvp", "must be greater than zero");
        }
        if !(self.rtl_epsilon > 0.0 && self.rtl_epsilon < 1.0) {
            return err(
                "rtl_epsilon",
                "must be a probability strictly between 0 and 1",
            );
        }
        Ok(())
    }
}
