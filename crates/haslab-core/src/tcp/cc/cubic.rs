//! CUBIC, as Linux net/ipv4/tcp_cubic.c (RFC 9438 with Linux's constants and fixed-point
//! arithmetic), with the original HyStart (Ha & Rhee 2011) in slow start.
//!
//! Window growth in congestion avoidance follows the cubic curve of wall-clock time since the
//! start of the epoch (the first ACK after a reduction):
//! `W(t) = W_max + C·(t − K)³`, `K = ∛((W_max − cwnd_epoch)/C)`, with `t` = time since the
//! epoch start + `delay_min` (Linux adds the minimum RTT; RFC 9438 uses SRTT).
//!
//! Constants (Linux module parameters and their defaults):
//! - `beta` = 717/1024 ≈ 0.7 (multiplicative decrease: ssthresh = max(cwnd·β, 2)).
//! - `bic_scale` = 41 → `cube_rtt_scale` = 410 → C = 410/1024 ≈ 0.4004 segments/s³. Here the
//!   parameter is `c` = 0.4, quantised as Linux does to round(1024·C)/1024.
//! - `fast_convergence` = on: a loss below the previous W_max sets W_max = cwnd·(1 + β)/2.
//! - `tcp_friendliness` = on: a Reno estimate W_est grows by 1 per cwnd·`beta_scale`/8 acked
//!   packets, `beta_scale` = 8·(1024 + 717)/3/(1024 − 717) = 15 (integer), i.e. α ≈ 8/15;
//!   when W_est > cwnd, CUBIC grows at least as fast as Reno would.
//! - The ACK count per +1 cwnd, `cnt`, is capped at 20 before any W_max is known (≥ 5 % growth
//!   per RTT) and floored at 2 (at most 1.5× per RTT).
//! - `cnt` is recomputed at most once per jiffy, and not at all while cwnd is unchanged and at
//!   most HZ/32 jiffies have passed (Linux `bictcp_update`). Linux keeps CUBIC's epoch, its
//!   `last_time`, the idle time of `CA_EVENT_TX_START` (`lsndtime`) and the 1 s after an epoch
//!   start in jiffies (`tcp_jiffies32`), and adds `usecs_to_jiffies(delay_min)`, rounded up to a
//!   jiffy, to the curve's time. `hz` is the kernel's CONFIG_HZ: 250 (the default) is
//!   Kconfig's default (kernel/Kconfig.hz), Ubuntu's and Debian's generic kernels' and the live
//!   testbed's; 100, 300 and 1000 are Kconfig's other choices. The simulation starts on a tick.
//! - `initial_ssthresh` = 0 (use the stack's "infinite" ssthresh); applies only with HyStart off.
//! - HyStart (`hystart` = on, `hystart_detect` = ack-train + delay): its rounds run through the
//!   whole slow start — every RTT sample in slow start starts a new round when snd_una has
//!   passed the end of the last one (`end_seq`, snd_nxt when that round began) — while the
//!   detectors sample and fire only once cwnd ≥ `hystart_low_window` = 16. So the round that
//!   is under way when cwnd reaches 16 began at a flight boundary (the initial window's first
//!   ACK). This is the order of Linux since the 2025 fix "tcp_cubic: fix incorrect HyStart
//!   round start detection" (it fixes 4e1fddc98d25, which had put the reset behind the
//!   low-window test, so that the first round began mid-flight at the ACK that took cwnd to
//!   16); Linux 6.18 runs it, measured on the live testbed: the kernel's own `cubictcp_acked`,
//!   wrapped in a struct_ops program, moves `end_seq` to snd_nxt at the first ACK (cwnd 10)
//!   and starts sampling at cwnd 16 without a new round.
//!   - ACK train: ACKs no more than `hystart_ack_delta` = 2 ms apart extend the train; when the
//!     train is longer than delay_min plus a cushion, ssthresh = cwnd. The cushion
//!     (`hystart_ack_delay`) is min(1 ms, 4 × `GSO_MAX_SIZE` (65,536 bytes) / sk_pacing_rate),
//!     with sk_pacing_rate as Linux computes it on every ACK, paced or not (200 % or 120 % of
//!     cwnd/SRTT, `tcp_update_pacing_rate`); without pacing (SK_PACING_NONE) the threshold is
//!     halved: (delay_min + cushion)/2.
//!   - Delay: the minimum of the first `hystart_min_samples` = 8 RTT samples of a round; when
//!     it exceeds delay_min + clamp(delay_min/8, `hystart_delay_min` = 4 ms,
//!     `hystart_delay_max` = 16 ms), ssthresh = cwnd. (ns-3's TcpCubic uses 1000 ms as max.)
//!   - RTT samples within 1 s after the epoch start are ignored (right after fast recovery).
//! - `hystart_variant` = `"linux"` is that HyStart, Linux 6.18's; `"linux-3.19"` is the 3.19
//!   tree's (the QoE paper's servers ran Ubuntu 15.04's 3.19): its clock in milliseconds
//!   (`bictcp_clock`, `ktime_to_ms` for HZ < 1000), delays and delay_min in 1/8 ms, the ACK
//!   train's threshold half the minimum in whole ms without the pacing cushion, the delay
//!   detector's minimum of the round's first 8 samples only, and rounds started in
//!   `bictcp_cong_avoid` after the ACK's samples ([`HystartVariant`]).
//!
//! Events:
//! - Loss (fast retransmit or RTO, the `ssthresh` hook): the epoch ends; W_max as above.
//! - RTO (`set_state(Loss)`): all CUBIC state is zeroed, W_max and delay_min included, and
//!   HyStart restarts — after an RTO Linux CUBIC forgets W_max.
//! - `TxStart` after idle (`cwnd_event`): the epoch start moves forward by the idle time, never
//!   past now, so the curve does not jump after an OFF period (RFC 9438 §5.8; Linux 4.2+,
//!   "tcp_cubic: better follow cubic curve after idle period"). With `idle_shift` = false the
//!   epoch stays where it was, as in Linux before 4.2 (3.19): the curve's time runs on through
//!   the OFF period, so afterwards the target is far above cwnd and CUBIC grows as fast as it
//!   may (`cnt` at its floor, 1.5× per round trip) until the next loss.
//! - Undo (`undo_cwnd`): max(cwnd, cwnd before the reduction), its own in every kernel modelled
//!   here: 3.19's `bictcp_undo_cwnd`, max(cwnd, `loss_cwnd`), where `loss_cwnd` is cwnd when
//!   `bictcp_recalc_ssthresh` last ran (the reduction), and 6.18's `tcp_reno_undo_cwnd`. So the
//!   sender's `undo_cwnd = "linux-3.19"` (3.19's fallback for algorithms without one) leaves it
//!   as it is.
//!
//! Differences from Linux: time is the simulator's ns clock, read as jiffies of `hz` where
//! Linux reads jiffies, as µs where it reads µs (6.18's HyStart clock, the RTT samples) and as
//! ms where 3.19 reads its real-time ms (whose phase the simulation starts on); K is an
//! exact integer cube root where Linux uses a table and one Newton step (within 0.2 %); the
//! pacing cushion of the ACK-train threshold uses 64 KiB (GSO max size).

use super::{AckSample, CaEvent, CaState, CcState, CongestionControl};
use crate::sim::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Parameters of CUBIC (Linux module parameters; defaults are Linux's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// Multiplicative decrease factor β, in (0, 1); quantised to 1/1024 (Linux beta = 717).
    pub beta: f64,
    /// Cubic scaling constant C in segments/s³, in (0, 100]; quantised to 1/1024 (Linux
    /// bic_scale = 41 gives 410/1024).
    pub c: f64,
    /// Fast convergence: release bandwidth sooner when W_max shrinks.
    pub fast_convergence: bool,
    /// TCP-friendly region: never grow slower than the Reno estimate.
    pub tcp_friendliness: bool,
    /// HyStart in slow start.
    pub hystart: bool,
    /// HyStart's ACK-train detector.
    pub hystart_ack_train: bool,
    /// HyStart's delay-increase detector.
    pub hystart_delay: bool,
    /// HyStart's detectors sample and fire only when cwnd ≥ this many segments (its rounds are
    /// counted from the first ACK).
    pub hystart_low_window: u32,
    /// Largest ACK spacing that extends an ACK train.
    pub hystart_ack_delta: Duration,
    /// RTT samples per round for the delay detector (1 to 255).
    pub hystart_min_samples: u32,
    /// Lower clamp of the delay threshold delay_min/8.
    pub hystart_delay_min: Duration,
    /// Upper clamp of the delay threshold delay_min/8 (ns-3: 1000 ms).
    pub hystart_delay_max: Duration,
    /// Initial ssthresh in segments when HyStart is off (0: the stack default, "infinite").
    pub initial_ssthresh: u32,
    /// After an idle period, move the epoch start forward by the idle time (Linux 4.2+);
    /// false keeps it (Linux before 4.2, e.g. 3.19).
    pub idle_shift: bool,
    /// Jiffies per second of the kernel's clock (CONFIG_HZ), which times CUBIC's epoch: 100,
    /// 250 (default: Kconfig's default, Ubuntu's generic kernels' and the live testbed's), 300
    /// or 1000.
    pub hz: u32,
    /// Which kernel's HyStart and delay bookkeeping: `"linux"` (6.18: µs) or `"linux-3.19"`
    /// (a millisecond clock, delays in 1/8 ms; see [`HystartVariant`]).
    pub hystart_variant: HystartVariant,
}

/// The HyStart of a kernel's tcp_cubic.c, with the unit of CUBIC's delay minimum, which HyStart
/// and the curve's time share.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HystartVariant {
    /// Linux 6.18: the RTT samples and delay_min in µs, HyStart on the µs clock of the ACK
    /// (`tcp_mstamp`); a round starts in `hystart_update` when snd_una has passed `end_seq`
    /// (before the detectors); the ACK train must exceed (delay_min + `hystart_ack_delay`)/2
    /// unpaced; the delay detector keeps the minimum of every sample of the round and tests it
    /// on each sample after the first `hystart_min_samples`.
    Linux,
    /// Linux 3.19 (net/ipv4/tcp_cubic.c of the 3.19 tree): `bictcp_clock()` in milliseconds
    /// (`ktime_to_ms(ktime_get_real())` for HZ < 1000, `jiffies_to_msecs` otherwise), so the
    /// ACK train extends while two ACKs are at most `hystart_ack_delta` = 2 *clock
    /// milliseconds* apart (up to 3 ms less a nanosecond) and fires when the train is longer
    /// than `delay_min >> 4` = half the minimum RTT in whole ms, with no pacing cushion;
    /// `bictcp_acked` keeps delays in 1/8 ms (`(rtt_us << 3) / USEC_PER_MSEC`, at least 1);
    /// the delay detector takes the minimum of the first `hystart_min_samples` samples of a
    /// round and, from then on, compares that minimum (later samples no longer lower it) with
    /// delay_min + clamp(delay_min/8, 4 ms, 16 ms); a new round starts in
    /// `bictcp_cong_avoid`, in slow start and cwnd-limited, when the ACK passes `end_seq` —
    /// after that ACK's `pkts_acked` has run the detectors on the old round; the curve adds
    /// `msecs_to_jiffies(delay_min >> 3)`, the minimum in whole ms rounded up to a jiffy.
    #[serde(rename = "linux-3.19")]
    Linux319,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            beta: 717.0 / 1024.0,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_ack_delta: Duration(2_000_000),
            hystart_min_samples: 8,
            hystart_delay_min: Duration(4_000_000),
            hystart_delay_max: Duration(16_000_000),
            initial_ssthresh: 0,
            idle_shift: true,
            hz: 250,
            hystart_variant: HystartVariant::Linux,
        }
    }
}

impl CubicConfig {
    pub fn check(&self) -> Result<(), (String, String)> {
        let err = |f: &str, m: &str| Err((f.to_string(), m.to_string()));
        if !(self.beta > 0.0 && self.beta < 1.0) || (self.beta * 1024.0).round() < 1.0 {
            return err(
                "beta",
                "must be greater than 0 and less than 1 (Linux: 717/1024)",
            );
        }
        if !(self.c > 0.0 && self.c <= 100.0) || (self.c * 1024.0).round() < 1.0 {
            return err("c", "must be greater than 0 and at most 100 (Linux: 0.4)");
        }
        super::jiffies::check_hz(self.hz)?;
        if !(1..=255).contains(&self.hystart_min_samples) {
            return err("hystart_min_samples", "must be between 1 and 255");
        }
        if self.hystart_delay_min > self.hystart_delay_max {
            return err(
                "hystart_delay_min",
                "must not be larger than hystart_delay_max",
            );
        }
        if self.hystart_delay_max.0 > 10_000_000_000 || self.hystart_ack_delta.0 > 1_000_000_000 {
            return err(
                "hystart_delay_max",
                "must be at most 10s (and hystart_ack_delta at most 1s)",
            );
        }
        Ok(())
    }
}

const BICTCP_BETA_SCALE: u64 = 1024;
/// BIC time unit: 2^10 per second.
const BICTCP_HZ: u32 = 10;
/// `sk_gso_max_size` of the device, bytes: `GSO_LEGACY_MAX_SIZE` (veth, most drivers without
/// BIG TCP), what `hystart_ack_delay` divides by the pacing rate.
const GSO_MAX_SIZE_BYTES: u64 = 65_536;

/// ⌊∛a⌋, exact.
fn cube_root(a: u128) -> u64 {
    if a == 0 {
        return 0;
    }
    let mut x = (a as f64).cbrt() as u128;
    while x * x * x > a {
        x -= 1;
    }
    while (x + 1) * (x + 1) * (x + 1) <= a {
        x += 1;
    }
    x as u64
}

pub struct Cubic {
    cfg: CubicConfig,
    /// β·1024.
    beta: u64,
    /// C·1024 (Linux bic_scale·10).
    cube_rtt_scale: u64,
    /// 2^40 / cube_rtt_scale: K³ = cube_factor·(W_max − cwnd) in (1/1024 s)³.
    cube_factor: u64,
    /// 8·(1024 + β)/3/(1024 − β): Reno-estimate step (×8).
    beta_scale: u64,

    // struct bictcp
    /// ACKs per +1 cwnd.
    cnt: u32,
    /// W_max.
    last_max_cwnd: u32,
    last_cwnd: u32,
    /// Jiffies of the last `cnt` computation.
    last_time: u64,
    bic_origin_point: u32,
    /// K in 1/1024 s.
    bic_k: u64,
    /// Minimum RTT (0: none yet), in µs or, with `hystart_variant = "linux-3.19"`, in 1/8 ms.
    delay_min: u64,
    /// Start of the epoch in jiffies (None: no epoch).
    epoch_start: Option<u64>,
    ack_cnt: u64,
    /// Reno estimate W_est.
    tcp_cwnd: u32,
    // HyStart
    sample_cnt: u32,
    found: bool,
    /// The round's start and the train's last ACK, on HyStart's clock (µs, or ms for 3.19).
    round_start: u64,
    end_seq: u64,
    last_ack: u64,
    /// The round's minimum RTT, in the unit of `delay_min` (3.19: 0 for none yet).
    curr_rtt: u64,
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        let beta = ((cfg.beta * 1024.0).round() as u64).clamp(1, 1023);
        let cube_rtt_scale = ((cfg.c * 1024.0).round() as u64).max(1);
        Cubic {
            beta,
            cube_rtt_scale,
            cube_factor: (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale,
            beta_scale: 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta),
            cfg,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: u64::MAX,
        }
    }

    /// W_max (Linux `last_max_cwnd`).
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }
    /// K in seconds.
    pub fn k_seconds(&self) -> f64 {
        self.bic_k as f64 / 1024.0
    }
    /// The curve's origin (W_max, or cwnd when cwnd ≥ W_max at the epoch start).
    pub fn origin(&self) -> u32 {
        self.bic_origin_point
    }
    /// HyStart found the exit point.
    pub fn hystart_found(&self) -> bool {
        self.found
    }
    /// Minimum RTT seen (µs), as CUBIC tracks it (3.19: a multiple of 125 µs).
    pub fn delay_min_us(&self) -> u64 {
        match self.cfg.hystart_variant {
            HystartVariant::Linux => self.delay_min,
            HystartVariant::Linux319 => self.delay_min * 125,
        }
    }

    /// Linux `bictcp_reset`.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// Linux `bictcp_hystart_reset`: a new HyStart round.
    fn hystart_reset(&mut self, tp: &CcState) {
        let now = self.hystart_clock(tp.now_ns);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt_bytes;
        self.curr_rtt = match self.cfg.hystart_variant {
            HystartVariant::Linux => u64::MAX,
            HystartVariant::Linux319 => 0,
        };
        self.sample_cnt = 0;
    }

    /// HyStart's clock: 6.18's `bictcp_clock_us` (`tcp_mstamp`, µs) or 3.19's `bictcp_clock`
    /// (ms).
    #[inline]
    fn hystart_clock(&self, t_ns: u64) -> u64 {
        match self.cfg.hystart_variant {
            HystartVariant::Linux => t_ns / 1000,
            HystartVariant::Linux319 => t_ns / 1_000_000,
        }
    }

    /// `tcp_jiffies32` at `t_ns`.
    #[inline]
    fn jiffies(&self, t_ns: u64) -> u64 {
        super::jiffies::jiffies(t_ns, self.cfg.hz)
    }

    /// Linux `usecs_to_jiffies` (rounds up).
    #[inline]
    fn usecs_to_jiffies(&self, us: u64) -> u64 {
        super::jiffies::usecs_to_jiffies(us, self.cfg.hz)
    }

    /// The cubic curve: origin + C·(t − K)³ packets, t in 1/1024 s since the epoch start
    /// (plus delay_min), in Linux's fixed point.
    fn bic_target(&self, t: u64) -> u32 {
        let offs = t.abs_diff(self.bic_k) as u128;
        let delta = ((self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ))
            .min(u32::MAX as u128) as u32;
        if t < self.bic_k {
            self.bic_origin_point.saturating_sub(delta)
        } else {
            self.bic_origin_point.saturating_add(delta)
        }
    }

    /// Linux `bictcp_update`: computes `cnt` from the cubic curve and the Reno estimate.
    fn update(&mut self, cwnd: u32, acked: u32, now_j: u64) {
        self.ack_cnt += acked as u64;
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= self.cfg.hz as u64 / 32
        {
            return;
        }
        // at most once per jiffy; a reduction clears epoch_start and forces a recomputation
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            let epoch_start = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now_j);
                    self.ack_cnt = acked as u64;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.bic_k = 0;
                        self.bic_origin_point = cwnd;
                    } else {
                        self.bic_k = cube_root(
                            self.cube_factor as u128 * (self.last_max_cwnd - cwnd) as u128,
                        );
                        self.bic_origin_point = self.last_max_cwnd;
                    }
                    now_j
                }
            };
            // t in 1/1024 s, including the minimum RTT
            let delay_min_j = match self.cfg.hystart_variant {
                HystartVariant::Linux => self.usecs_to_jiffies(self.delay_min),
                // msecs_to_jiffies(delay_min >> 3)
                HystartVariant::Linux319 => self.usecs_to_jiffies((self.delay_min >> 3) * 1000),
            };
            let t_j = now_j - epoch_start + delay_min_j;
            let bic_target = self.bic_target((t_j << BICTCP_HZ) / self.cfg.hz as u64);
            self.cnt = if bic_target > cwnd {
                cwnd / (bic_target - cwnd)
            } else {
                100u32.saturating_mul(cwnd) // very small increment
            };
            // the initial growth may be too conservative while W_max is unknown
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP-friendly region
        if self.cfg.tcp_friendliness {
            let delta = ((cwnd as u64 * self.beta_scale) >> 3).max(1);
            if self.ack_cnt > delta {
                let n = (self.ack_cnt - 1) / delta; // while (ack_cnt > delta)
                self.ack_cnt -= n * delta;
                self.tcp_cwnd = self.tcp_cwnd.saturating_add(n as u32);
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        // at most +1 per 2 packets acked (1.5× per RTT)
        self.cnt = self.cnt.max(2);
    }

    /// Linux 6.18 `hystart_update`.
    fn hystart_update(&mut self, tp: &mut CcState, delay_us: u64) {
        if tp.snd_una_bytes > self.end_seq {
            self.hystart_reset(tp);
        }
        // the detectors trigger only once cwnd is large enough; the round above is counted
        // whatever cwnd is
        if tp.cwnd_pkts < self.cfg.hystart_low_window {
            return;
        }
        if self.cfg.hystart_ack_train {
            let now_us = self.hystart_clock(tp.now_ns);
            if now_us.saturating_sub(self.last_ack) <= self.cfg.hystart_ack_delta.0 / 1000 {
                self.last_ack = now_us;
                // a cushion for TSO/GRO of at most 1 ms (`hystart_ack_delay`) from
                // sk_pacing_rate, which Linux computes on every ACK whether or not it paces
                // (`tcp_update_pacing_rate`); unpaced (SK_PACING_NONE), the train must exceed
                // half of delay_min plus the cushion, paced the whole of it (pacing may have
                // spread the window over up to an RTT)
                let paced = tp.pacing_rate_bps.is_some_and(|r| r > 0);
                let rate = if paced {
                    tp.pacing_rate_bps
                } else {
                    crate::tcp::pacing::pacing_rate_bps(
                        crate::tcp::config::PacingMode::Linux,
                        None,
                        tp,
                        tp.in_flight_pkts,
                    )
                };
                let ack_delay_us = rate
                    .filter(|&r| r > 0)
                    .map_or(0, |r| (GSO_MAX_SIZE_BYTES * 8 * 4 * 1_000_000 / r).min(1000));
                let mut threshold = self.delay_min + ack_delay_us;
                if !paced {
                    threshold >>= 1;
                }
                if now_us.saturating_sub(self.round_start) > threshold {
                    self.found = true;
                    tp.ssthresh_pkts = tp.cwnd_pkts;
                }
            }
        }
        if self.cfg.hystart_delay {
            self.curr_rtt = self.curr_rtt.min(delay_us);
            if self.sample_cnt < self.cfg.hystart_min_samples {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(
                    self.cfg.hystart_delay_min.0 / 1000,
                    self.cfg.hystart_delay_max.0 / 1000,
                );
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                    tp.ssthresh_pkts = tp.cwnd_pkts;
                }
            }
        }
    }

    /// Linux 3.19 `hystart_update` (net/ipv4/tcp_cubic.c of the 3.19 tree), `delay` in 1/8 ms:
    /// no round start here (`bictcp_cong_avoid` starts rounds), the clock in ms, the train's
    /// threshold `delay_min >> 4` (half the minimum in ms), and the delay detector's minimum
    /// taken over the first `hystart_min_samples` samples only. `HYSTART_DELAY_MIN` and
    /// `_MAX` are `4U<<3` and `16U<<3`, in 1/8 ms.
    fn hystart_update_319(&mut self, tp: &mut CcState, delay: u64) {
        if self.cfg.hystart_ack_train {
            let now_ms = self.hystart_clock(tp.now_ns);
            if now_ms.saturating_sub(self.last_ack) <= self.cfg.hystart_ack_delta.0 / 1_000_000 {
                self.last_ack = now_ms;
                if now_ms.saturating_sub(self.round_start) > self.delay_min >> 4 {
                    self.found = true;
                    tp.ssthresh_pkts = tp.cwnd_pkts;
                }
            }
        }
        // 3.19 tests `found` once, on entry: the delay detector still runs on the ACK whose
        // train fired (setting ssthresh = cwnd again)
        if self.cfg.hystart_delay {
            if self.sample_cnt < self.cfg.hystart_min_samples {
                if self.curr_rtt == 0 || self.curr_rtt > delay {
                    self.curr_rtt = delay;
                }
                self.sample_cnt += 1;
            } else {
                let eighths = |d: Duration| d.0 * 8 / 1_000_000;
                let thresh = (self.delay_min >> 3).clamp(
                    eighths(self.cfg.hystart_delay_min),
                    eighths(self.cfg.hystart_delay_max),
                );
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                    tp.ssthresh_pkts = tp.cwnd_pkts;
                }
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, tp: &mut CcState) {
        self.reset();
        if self.cfg.hystart {
            self.hystart_reset(tp);
        }
        if !self.cfg.hystart && self.cfg.initial_ssthresh > 0 {
            tp.ssthresh_pkts = self.cfg.initial_ssthresh;
        }
    }

    fn ssthresh(&mut self, tp: &CcState) -> u32 {
        let cwnd = tp.cwnd_pkts;
        self.epoch_start = None; // end of epoch
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            ((cwnd as u64 * (BICTCP_BETA_SCALE + self.beta)) / (2 * BICTCP_BETA_SCALE)) as u32
        } else {
            cwnd
        };
        (((cwnd as u64 * self.beta) / BICTCP_BETA_SCALE) as u32).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcState, acked_pkts: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        let mut acked = acked_pkts;
        if tp.growth_in_slow_start() {
            // 3.19 starts HyStart's rounds here (`after(ack, ca->end_seq)`), 6.18 in
            // `hystart_update`
            if self.cfg.hystart_variant == HystartVariant::Linux319
                && self.cfg.hystart
                && tp.snd_una_bytes > self.end_seq
            {
                self.hystart_reset(tp);
            }
            acked = tp.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tp.cwnd_pkts, acked, self.jiffies(tp.now_ns));
        tp.cong_avoid_ai(self.cnt, acked);
    }

    fn set_state(&mut self, tp: &mut CcState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcState, event: CaEvent) {
        if event == CaEvent::TxStart && self.cfg.idle_shift {
            // application-limited (idle) for a while: shift the epoch to keep to the curve
            let now = self.jiffies(tp.now_ns);
            let delta = now.saturating_sub(self.jiffies(tp.last_send_ns));
            if let Some(e) = self.epoch_start {
                if delta > 0 {
                    self.epoch_start = Some((e + delta).min(now));
                }
            }
        }
    }

    /// Linux 3.19 `bictcp_undo_cwnd` (net/ipv4/tcp_cubic.c: `max(tcp_sk(sk)->snd_cwnd,
    /// ca->loss_cwnd)`, `loss_cwnd` being cwnd at the reduction, `prior_cwnd_pkts` here) and
    /// 6.18's `tcp_reno_undo_cwnd`, the same value: CUBIC never takes the 3.19 fallback.
    fn undo_cwnd(&mut self, tp: &CcState) -> u32 {
        tp.cwnd_pkts.max(tp.prior_cwnd_pkts)
    }

    fn pkts_acked(&mut self, tp: &mut CcState, sample: &AckSample) {
        let Some(rtt_ns) = sample.rtt_ns else {
            return;
        };
        // discard delay samples right after fast recovery
        if let Some(e) = self.epoch_start {
            if self.jiffies(tp.now_ns).saturating_sub(e) < self.cfg.hz as u64 {
                return;
            }
        }
        // in µs, or in 3.19 `(rtt_us << 3) / USEC_PER_MSEC` (1/8 ms); at least 1
        let delay = match self.cfg.hystart_variant {
            HystartVariant::Linux => rtt_ns / 1000,
            HystartVariant::Linux319 => rtt_ns / 1000 * 8 / 1000,
        }
        .max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.found || !tp.growth_in_slow_start() || !self.cfg.hystart {
            return;
        }
        match self.cfg.hystart_variant {
            HystartVariant::Linux => self.hystart_update(tp, delay),
            // 3.19 calls hystart_update only from the low window on (no round start in it)
            HystartVariant::Linux319 if tp.cwnd_pkts >= self.cfg.hystart_low_window => {
                self.hystart_update_319(tp, delay)
            }
            HystartVariant::Linux319 => {}
        }
    }
}

impl crate::sim::registry::Algorithm for CubicConfig {
    type Config = CubicConfig;
    const NAME: &'static str = "cubic";
    const SOURCE: &'static str =
        "Linux net/ipv4/tcp_cubic.c (RFC 9438 with Linux constants, HyStart)";
    const SUMMARY: &'static str = "CUBIC with HyStart, Linux net/ipv4/tcp_cubic.c (RFC 9438).";
    fn check(config: &CubicConfig) -> Result<(), (String, String)> {
        config.check()
    }
}

impl super::CcAlgorithm for CubicConfig {
    fn build(config: &CubicConfig, _rng: crate::sim::rng::Stream) -> Box<dyn CongestionControl> {
        Box::new(Cubic::new(config.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn ca_state(cwnd: u32, ssthresh: u32) -> CcState {
        let mut tp = CcState::new(10, 1448);
        tp.cwnd_pkts = cwnd;
        tp.ssthresh_pkts = ssthresh;
        tp.is_cwnd_limited = true;
        tp.max_packets_out = cwnd;
        tp
    }

    /// Drives congestion avoidance with one ACK of one packet every `rtt/cwnd` (a window per
    /// RTT) from `from_ns` to `to_ns`.
    fn run_ca(cc: &mut Cubic, tp: &mut CcState, from_ns: u64, to_ns: u64, rtt_ns: u64) {
        let mut t = from_ns;
        while t < to_ns {
            tp.now_ns = t;
            tp.max_packets_out = tp.cwnd_pkts;
            cc.cong_avoid(tp, 1);
            t += rtt_ns / tp.cwnd_pkts as u64;
        }
        tp.now_ns = to_ns;
    }

    #[test]
    fn linux_constants() {
        let cc = Cubic::new(Default::default());
        assert_eq!(cc.beta, 717);
        assert_eq!(cc.cube_rtt_scale, 410);
        assert_eq!(cc.cube_factor, (1u64 << 40) / 410);
        assert_eq!(cc.beta_scale, 15);
    }

    #[test]
    fn loss_sets_ssthresh_to_beta_cwnd_and_w_max_to_cwnd() {
        let mut cc = Cubic::new(Default::default());
        let tp = ca_state(100, 1000);
        assert_eq!(cc.ssthresh(&tp), 70); // 100·717/1024 = 70.02
        assert_eq!(cc.w_max(), 100);
        assert_eq!(cc.ssthresh(&ca_state(2, 1000)), 2);
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_the_previous_one() {
        let mut cc = Cubic::new(Default::default());
        cc.ssthresh(&ca_state(100, 1000));
        // the next loss comes at 90 < W_max = 100: W_max = 90·(1 + β)/2
        cc.ssthresh(&ca_state(90, 1000));
        assert_eq!(cc.w_max(), 90 * (1024 + 717) / 2048);
        // without fast convergence W_max is the cwnd at the loss
        let mut plain = Cubic::new(CubicConfig {
            fast_convergence: false,
            ..Default::default()
        });
        plain.ssthresh(&ca_state(100, 1000));
        plain.ssthresh(&ca_state(90, 1000));
        assert_eq!(plain.w_max(), 90);
    }

    #[test]
    fn window_follows_the_cubic_curve_after_a_loss() {
        // W_max = 100 at a loss; cwnd = ssthresh = 70. K = ∛((100 − 70)/C) ≈ 4.22 s. A long
        // RTT (1 s) keeps the TCP-friendly estimate below the curve.
        let mut cc = Cubic::new(Default::default());
        let mut tp = ca_state(100, 1000);
        let rtt = 1000 * MS;
        tp.now_ns = 10 * S;
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                bytes_acked: 1448,
                rtt_ns: Some(rtt),
                in_flight_pkts: 100,
            },
        );
        assert_eq!(cc.delay_min_us(), 1_000_000);
        tp.ssthresh_pkts = cc.ssthresh(&tp);
        tp.cwnd_pkts = tp.ssthresh_pkts;
        let start = 20 * S;
        run_ca(&mut cc, &mut tp, start, start + 1, rtt);
        let c: f64 = 410.0 / 1024.0;
        let k = ((100.0 - 70.0) / c).cbrt();
        assert!((cc.k_seconds() - k).abs() < 0.002, "K {}", cc.k_seconds());
        assert_eq!(cc.origin(), 100);
        let w = |t: f64| 100.0 + c * (t - k).powi(3);
        // the target is the curve W(t), t = time since the epoch + delay_min
        for t in [0.0, 1.0, 2.5, 4.0, 5.0, 6.5, 9.0] {
            let target = cc.bic_target((t * 1024.0) as u64) as f64;
            assert!(
                (target - w(t)).abs() <= 1.0,
                "W({t}) = {:.2}, target {target}",
                w(t)
            );
        }
        // cwnd follows it: cnt = cwnd/(target − cwnd) closes the gap to the target of one RTT
        // ahead within about an RTT
        for secs in [2u64, 4, 6, 8] {
            let from = tp.now_ns;
            run_ca(&mut cc, &mut tp, from, start + secs * S, rtt);
            let t = secs as f64 + 1.0;
            let got = tp.cwnd_pkts as f64;
            assert!(
                got <= w(t) + 1.0 && got >= w(t - 1.0) - 3.0,
                "t = {secs} s: cwnd {got}, W(t + RTT) {:.1}, W(t) {:.1}",
                w(t),
                w(t - 1.0)
            );
        }
        // concave below W_max, convex above: at t = K the window is at the plateau
        assert!(tp.cwnd_pkts > 100);
    }

    #[test]
    fn tcp_friendly_region_grows_at_least_like_reno_on_short_rtts() {
        // with a 10 ms RTT the cubic curve near its plateau is much slower than Reno's
        // +1 per RTT (α = 8/15 here): the Reno estimate takes over
        let mut cc = Cubic::new(Default::default());
        let mut tp = ca_state(100, 1000);
        tp.ssthresh_pkts = cc.ssthresh(&tp);
        tp.cwnd_pkts = 70;
        let rtt = 10 * MS;
        run_ca(&mut cc, &mut tp, 5 * S, 5 * S + 300 * rtt, rtt);
        // Reno with α = 8/15 gains 160 segments in 300 RTTs; plain cubic in 3 s stays < 100
        let cubic_only = 100.0 + 0.4 * (3.0f64 + 0.01 - (30.0f64 / 0.4).cbrt()).powi(3);
        assert!(cubic_only < 100.0);
        assert!(tp.cwnd_pkts >= 70 + 150, "cwnd {}", tp.cwnd_pkts);
        let mut unfriendly = Cubic::new(CubicConfig {
            tcp_friendliness: false,
            ..Default::default()
        });
        let mut tp2 = ca_state(100, 1000);
        tp2.ssthresh_pkts = unfriendly.ssthresh(&tp2);
        tp2.cwnd_pkts = 70;
        run_ca(&mut unfriendly, &mut tp2, 5 * S, 5 * S + 300 * rtt, rtt);
        // without it, the window stays on the curve's plateau at W_max
        assert!(tp2.cwnd_pkts <= 100, "cwnd {}", tp2.cwnd_pkts);
    }

    #[test]
    fn rto_forgets_w_max() {
        let mut cc = Cubic::new(Default::default());
        let mut tp = ca_state(100, 1000);
        cc.ssthresh(&tp);
        assert_eq!(cc.w_max(), 100);
        cc.set_state(&mut tp, CaState::Loss);
        assert_eq!(cc.w_max(), 0);
        assert_eq!(cc.delay_min_us(), 0);
    }

    #[test]
    fn idle_shifts_the_epoch_so_the_curve_resumes_where_it_was() {
        let rtt = 100 * MS;
        let run = |idle_ns: u64| {
            let mut cc = Cubic::new(Default::default());
            idle_run(&mut cc, idle_ns, rtt)
        };
        let (b0, a0) = run(0);
        let (b1, a1) = run(3 * S);
        assert_eq!(b0, b1);
        // after 3 s of idle the window grows as if the idle time had not passed
        assert!(a1.abs_diff(a0) <= 1, "no idle {a0}, 3 s idle {a1}");
    }

    /// CUBIC's clock is jiffies of `hz`, worked by hand: an epoch started at 10 s, the last
    /// send at 10.003 s and the next at 11.0 s. At HZ = 250 (a jiffy is 4 ms) the idle time is
    /// tick 2,750 − tick 2,500 = 250 jiffies, so the epoch moves 1.000 s; at HZ = 1000 it is
    /// 11,000 − 10,003 = 997 jiffies, 0.997 s. And `usecs_to_jiffies` rounds delay_min up:
    /// 20,300 µs is 6 jiffies at HZ = 250 and 21 at HZ = 1000.
    #[test]
    fn the_epoch_and_the_idle_time_count_in_jiffies_of_hz() {
        for (hz, epoch0, shifted, delay_j) in [(250, 2_500, 2_750, 6), (1000, 10_000, 10_997, 21)] {
            let mut cc = Cubic::new(CubicConfig {
                hz,
                ..Default::default()
            });
            let mut tp = ca_state(70, 70);
            cc.last_max_cwnd = 100;
            cc.update(70, 1, cc.jiffies(10 * S));
            assert_eq!(cc.epoch_start, Some(epoch0), "HZ {hz}");
            tp.last_send_ns = 10 * S + 3 * MS;
            tp.now_ns = 11 * S;
            cc.cwnd_event(&mut tp, CaEvent::TxStart);
            assert_eq!(cc.epoch_start, Some(shifted), "HZ {hz}");
            assert_eq!(cc.usecs_to_jiffies(20_300), delay_j, "HZ {hz}");
        }
        let err = CubicConfig {
            hz: 200,
            ..Default::default()
        }
        .check();
        assert_eq!(err.unwrap_err().0, "hz");
    }

    /// Linux before 4.2 (`idle_shift = false`): the epoch stays through the idle period, so the
    /// curve's time has run on: after 10 s of idle (K ≈ 4.2 s for W_max 100 from 70) the
    /// target is far above cwnd and CUBIC grows at its fastest, one packet per two acked
    /// (`cnt` floor 2), where the shifted epoch resumes the concave approach to W_max.
    #[test]
    fn before_linux_4_2_the_epoch_runs_on_through_idle() {
        let rtt = 100 * MS;
        let cfg = CubicConfig {
            idle_shift: false,
            ..Default::default()
        };
        let (b_keep, a_keep) = idle_run(&mut Cubic::new(cfg), 10 * S, rtt);
        let (b_shift, a_shift) = idle_run(&mut Cubic::new(Default::default()), 10 * S, rtt);
        assert_eq!(b_keep, b_shift);
        // 0.5 s at 100 ms: five rounds; 1.5x per round from b_keep would be far past W_max
        assert!(
            a_keep > a_shift + 10 && a_keep > 100,
            "kept epoch {a_keep}, shifted {a_shift} (from {b_keep})"
        );
    }

    /// Congestion avoidance from cwnd 70 (W_max 100) for 1 s, an idle period of `idle_ns`,
    /// then 0.5 s more: (cwnd before the idle period, cwnd at the end).
    fn idle_run(cc: &mut Cubic, idle_ns: u64, rtt: u64) -> (u32, u32) {
        {
            let mut tp = ca_state(100, 1000);
            tp.ssthresh_pkts = cc.ssthresh(&tp);
            tp.cwnd_pkts = 70;
            run_ca(cc, &mut tp, 10 * S, 11 * S, rtt);
            let before = tp.cwnd_pkts;
            // idle: the last send was at 11 s; the next is idle_ns later
            tp.last_send_ns = 11 * S;
            tp.now_ns = 11 * S + idle_ns;
            cc.cwnd_event(&mut tp, CaEvent::TxStart);
            run_ca(cc, &mut tp, 11 * S + idle_ns, 11 * S + idle_ns + S / 2, rtt);
            (before, tp.cwnd_pkts)
        }
    }

    fn ack_with_rtt(cc: &mut Cubic, tp: &mut CcState, rtt_ns: u64) {
        cc.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 2,
                bytes_acked: 2896,
                rtt_ns: Some(rtt_ns),
                in_flight_pkts: tp.cwnd_pkts,
            },
        );
    }

    #[test]
    fn hystart_delay_detector_exits_slow_start_on_an_rtt_increase() {
        let mut cc = Cubic::new(CubicConfig {
            hystart_ack_train: false,
            ..Default::default()
        });
        let mut tp = ca_state(32, TCP_INF);
        cc.init(&mut tp);
        let base = 50 * MS;
        // round 1: RTTs at the base
        tp.snd_nxt_bytes = 100_000;
        for i in 0..10u64 {
            tp.now_ns = S + i * MS;
            tp.snd_una_bytes = 1 + i * 2896;
            ack_with_rtt(&mut cc, &mut tp, base);
        }
        assert!(!cc.hystart_found());
        assert_eq!(tp.ssthresh_pkts, TCP_INF);
        // round 2: RTTs 10 ms above delay_min > clamp(50/8 ms, 4, 16) = 6.25 ms
        tp.snd_una_bytes = 100_001;
        tp.snd_nxt_bytes = 200_000;
        for i in 0..10u64 {
            tp.now_ns = S + 50 * MS + i * MS;
            ack_with_rtt(&mut cc, &mut tp, base + 10 * MS);
            tp.snd_una_bytes += 2896;
        }
        assert!(cc.hystart_found());
        assert_eq!(tp.ssthresh_pkts, 32);
    }

    #[test]
    fn hystart_ignores_an_rtt_increase_within_the_threshold() {
        let mut cc = Cubic::new(CubicConfig {
            hystart_ack_train: false,
            ..Default::default()
        });
        let mut tp = ca_state(32, TCP_INF);
        cc.init(&mut tp);
        tp.snd_nxt_bytes = 100_000;
        for i in 0..40u64 {
            tp.now_ns = S + i * MS;
            tp.snd_una_bytes = 1 + i * 2896;
            // +3 ms < 4 ms (the lower clamp) above the 50 ms minimum
            ack_with_rtt(&mut cc, &mut tp, if i == 0 { 50 * MS } else { 53 * MS });
        }
        assert!(!cc.hystart_found());
    }

    /// Slow start at cwnd 64 with an ACK every 1 ms (< 2 ms: a train), every RTT sample
    /// `rtt_ns`; `prepare` sets SRTT or pacing. Returns the ACK (1, 2, …) at which HyStart's
    /// ACK-train detector exits, and ssthresh then.
    fn ack_train_exit(
        variant: HystartVariant,
        rtt_ns: u64,
        prepare: impl Fn(&mut CcState),
    ) -> (Option<u64>, u32) {
        let mut cc = Cubic::new(CubicConfig {
            hystart_delay: false,
            hystart_variant: variant,
            ..Default::default()
        });
        let mut tp = ca_state(64, TCP_INF);
        tp.now_ns = S;
        tp.snd_nxt_bytes = 1_000_000;
        prepare(&mut tp);
        cc.init(&mut tp);
        let mut exit_at = None;
        for i in 1..60u64 {
            tp.now_ns = S + i * MS;
            tp.snd_una_bytes = i * 2896;
            ack_with_rtt(&mut cc, &mut tp, rtt_ns);
            if cc.hystart_found() && exit_at.is_none() {
                exit_at = Some(i);
            }
        }
        (exit_at, tp.ssthresh_pkts)
    }

    #[test]
    fn hystart_ack_train_exits_when_the_train_spans_half_the_min_rtt() {
        // delay_min = 40 ms and no SRTT yet (no pacing rate: no cushion): the exit is after 20 ms
        assert_eq!(ack_train_exit(HystartVariant::Linux, 40 * MS, |_| {}), (Some(21), 64));
    }

    /// Linux `hystart_ack_delay`: a cushion of min(1 ms, 4 × 65,536 bytes / sk_pacing_rate),
    /// with the rate Linux computes whether it paces or not: with SRTT 41 ms and cwnd 64 in slow
    /// start, 200 % × 64 × 1448 × 8 bit / 41 ms = 36.2 Mbit/s, so the cushion is capped at
    /// 1 ms. Unpaced the train must exceed (41 + 1)/2 = 21 ms (the 22nd ACK; delay_min/2 alone
    /// would be 20.5 ms, the 21st), paced at that rate 41 + 1 = 42 ms (the 43rd).
    #[test]
    fn hystart_ack_train_adds_the_pacing_rate_cushion() {
        for (paced, want) in [(false, 22), (true, 43)] {
            let (exit_at, _) = ack_train_exit(HystartVariant::Linux, 41 * MS, |tp| {
                tp.srtt_ns = 41 * MS;
                if paced {
                    tp.pacing_rate_bps = Some(64 * 1448 * 8 * 2 * 1000 / 41);
                }
            });
            assert_eq!(exit_at, Some(want), "paced: {paced}");
        }
    }

    #[test]
    fn hystart_rounds_are_counted_from_the_first_ack_below_the_low_window() {
        // Linux "tcp_cubic: fix incorrect HyStart round start detection": the round reset runs
        // on every slow-start sample, the low-window test gates only the detectors. The initial
        // window's ten ACKs take cwnd from 10 to 19; the round began at the first of them, so
        // it ends when the eleventh segment is acknowledged, and the second flight's samples
        // (all 130 ms, delay_min 100 ms) fire the delay detector at its ninth ACK. Counted from
        // the ACK that took cwnd to 16 (the order before the fix), the round would run to the
        // 23rd segment and keep the first flight's 100 ms samples as its minimum.
        let mss = 1448u64;
        let mut cc = Cubic::new(CubicConfig {
            hystart_ack_train: false,
            ..Default::default()
        });
        let mut tp = ca_state(10, TCP_INF);
        // initialised when the handshake completes, before any data is sent
        tp.snd_una_bytes = 0;
        tp.snd_nxt_bytes = 0;
        cc.init(&mut tp);
        tp.snd_nxt_bytes = 10 * mss;
        let mut found_at = None;
        for k in 1..=30u64 {
            tp.now_ns = S + k * MS;
            tp.snd_una_bytes = k * mss;
            ack_with_rtt(&mut cc, &mut tp, if k <= 10 { 100 * MS } else { 130 * MS });
            if cc.hystart_found() {
                found_at = Some(k);
                break;
            }
            tp.cwnd_pkts += 1;
            tp.snd_nxt_bytes += 2 * mss;
        }
        assert_eq!(found_at, Some(19));
    }

    #[test]
    fn hystart_waits_for_the_low_window() {
        let mut cc = Cubic::new(Default::default());
        let mut tp = ca_state(10, TCP_INF);
        cc.init(&mut tp);
        for i in 0..40u64 {
            tp.now_ns = S + i * MS;
            ack_with_rtt(&mut cc, &mut tp, if i == 0 { 50 * MS } else { 90 * MS });
        }
        assert!(!cc.hystart_found());
    }

    /// Linux 3.19's `bictcp_acked`: `delay = (rtt_us << 3) / USEC_PER_MSEC`, at least 1.
    #[test]
    fn linux_3_19_keeps_delays_in_eighths_of_a_millisecond() {
        for (rtt_ns, want_319_us, want_us) in [(20_300_000, 20_250, 20_300), (50_000, 125, 50)] {
            for (variant, want) in [
                (HystartVariant::Linux319, want_319_us),
                (HystartVariant::Linux, want_us),
            ] {
                let mut cc = Cubic::new(CubicConfig {
                    hystart_variant: variant,
                    ..Default::default()
                });
                let mut tp = ca_state(32, TCP_INF);
                cc.init(&mut tp);
                ack_with_rtt(&mut cc, &mut tp, rtt_ns);
                assert_eq!(cc.delay_min_us(), want, "{variant:?}, RTT {rtt_ns} ns");
            }
        }
    }

    /// Slow start at cwnd 32, delay detector only: one ACK at 50 ms in the first round, then a
    /// second round whose ACKs (5 ms apart, each followed by `cong_avoid` as in `tcp_ack`)
    /// carry `rtts`. Returns the second round's ACK (1, 2, …) at which HyStart exits.
    fn delay_round(variant: HystartVariant, rtts: &[u64]) -> Option<usize> {
        let mut cc = Cubic::new(CubicConfig {
            hystart_ack_train: false,
            hystart_variant: variant,
            ..Default::default()
        });
        let mut tp = ca_state(32, TCP_INF);
        tp.now_ns = S;
        tp.snd_nxt_bytes = 100_000;
        cc.init(&mut tp);
        tp.snd_una_bytes = 2896;
        ack_with_rtt(&mut cc, &mut tp, 50 * MS);
        cc.cong_avoid(&mut tp, 2);
        tp.snd_una_bytes = 100_001;
        tp.snd_nxt_bytes = 300_000;
        for (k, &rtt) in rtts.iter().enumerate() {
            tp.now_ns = S + 50 * MS + k as u64 * 5 * MS;
            ack_with_rtt(&mut cc, &mut tp, rtt);
            if cc.hystart_found() {
                return Some(k + 1);
            }
            cc.cong_avoid(&mut tp, 2);
            tp.snd_una_bytes += 2896;
        }
        None
    }

    /// Linux 3.19's delay detector (net/ipv4/tcp_cubic.c of the 3.19 tree): the round starts in
    /// `bictcp_cong_avoid`, after the first ACK past `end_seq` has been sampled into the old
    /// round, and the minimum is that of the round's first 8 samples; 6.18 starts the round
    /// before sampling that ACK and lowers the minimum with every sample. The threshold is
    /// 50 ms + clamp(50/8, 4, 16) ms = 56.25 ms; 60 ms is above it.
    #[test]
    fn linux_3_19_delay_detector_rounds_and_minimum() {
        let (low, high) = (50 * MS, 60 * MS);
        // a low first ACK: 3.19 counts it in the old round, then samples 8 high ACKs and exits
        // at the next one; in 6.18 it is the new round's minimum, so the round never exits
        let mut rtts = vec![low];
        rtts.extend([high; 9]);
        assert_eq!(delay_round(HystartVariant::Linux319, &rtts), Some(10));
        assert_eq!(delay_round(HystartVariant::Linux, &rtts), None);
        // nine high ACKs, then a low one: 3.19's round has 8 high samples (ACKs 2-9) when the
        // low ACK arrives; it compares their minimum and exits there, the low sample unused
        let mut rtts = vec![high; 9];
        rtts.push(low);
        assert_eq!(delay_round(HystartVariant::Linux319, &rtts), Some(10));
        // 6.18 exits at the ninth (its round's ninth sample)
        assert_eq!(delay_round(HystartVariant::Linux, &rtts), Some(9));
    }

    /// Linux 3.19's ACK train: the clock in ms and the threshold `delay_min >> 4`, half the
    /// minimum in whole ms, with no pacing-rate cushion. With SRTT and delay_min 41 ms and an
    /// ACK every ms, 3.19 exits when the train exceeds 20 ms (the 21st ACK), 6.18 when it
    /// exceeds (41 + 1)/2 = 21 ms (the 22nd).
    #[test]
    fn linux_3_19_ack_train_has_no_cushion() {
        for (variant, want) in [(HystartVariant::Linux319, 21), (HystartVariant::Linux, 22)] {
            let (exit_at, _) = ack_train_exit(variant, 41 * MS, |tp| tp.srtt_ns = 41 * MS);
            assert_eq!(exit_at, Some(want), "{variant:?}");
        }
    }

    /// Linux 3.19 measures the ACK spacing on its millisecond clock: from a round begun on a
    /// whole ms, an ACK 2.5 ms later reads 2 clock ms and extends the train (6.18 measures
    /// 2,500 µs > 2 ms and does not); the next, at 5 ms, reads 3 ms after it and does not.
    #[test]
    fn linux_3_19_hystart_clock_is_in_milliseconds() {
        let mut cc = Cubic::new(CubicConfig {
            hystart_delay: false,
            hystart_variant: HystartVariant::Linux319,
            ..Default::default()
        });
        let mut tp = ca_state(64, TCP_INF);
        tp.now_ns = S;
        tp.snd_nxt_bytes = 1_000_000;
        cc.init(&mut tp);
        assert_eq!(cc.last_ack, 1000);
        tp.now_ns = S + 2_500_000;
        tp.snd_una_bytes = 2896;
        ack_with_rtt(&mut cc, &mut tp, 40 * MS);
        assert_eq!(cc.last_ack, 1002, "2.5 ms reads as 2 clock ms: the train extends");
        tp.now_ns = S + 5_000_000;
        ack_with_rtt(&mut cc, &mut tp, 40 * MS);
        assert_eq!(cc.last_ack, 1002, "3 clock ms: the train does not extend");
    }

    #[test]
    fn growth_before_any_loss_is_at_least_five_percent_per_rtt() {
        let mut cc = Cubic::new(Default::default());
        let mut tp = ca_state(100, 100);
        let rtt = 100 * MS;
        run_ca(&mut cc, &mut tp, S, S + rtt, rtt);
        assert!(tp.cwnd_pkts >= 105, "cwnd {}", tp.cwnd_pkts);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut cc = Cubic::new(Default::default());
        let mut tp = ca_state(100, 50);
        tp.is_cwnd_limited = false;
        for i in 0..1000 {
            tp.now_ns = S + i * MS;
            cc.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.cwnd_pkts, 100);
    }

    #[test]
    fn cube_root_is_exact() {
        for a in [0u128, 1, 7, 8, 26, 27, 1 << 40, (1u128 << 63) + 12345] {
            let r = cube_root(a) as u128;
            assert!(r * r * r <= a && (r + 1) * (r + 1) * (r + 1) > a, "a = {a}");
        }
    }

    #[test]
    fn out_of_range_parameters_are_named() {
        for (cfg, field) in [
            (
                CubicConfig {
                    beta: 1.0,
                    ..Default::default()
                },
                "beta",
            ),
            (
                CubicConfig {
                    beta: 0.0,
                    ..Default::default()
                },
                "beta",
            ),
            (
                CubicConfig {
                    c: -1.0,
                    ..Default::default()
                },
                "c",
            ),
            (
                CubicConfig {
                    hystart_min_samples: 0,
                    ..Default::default()
                },
                "hystart_min_samples",
            ),
        ] {
            assert_eq!(cfg.check().unwrap_err().0, field);
        }
        assert!(CubicConfig::default().check().is_ok());
    }

    const TCP_INF: u32 = super::super::TCP_INFINITE_SSTHRESH;
}
