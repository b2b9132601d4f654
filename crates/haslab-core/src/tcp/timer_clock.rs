//! When a TCP timer of a Linux host fires (`[flow.tcp] timer_clock`, `hz`).
//!
//! Linux runs the timers of a TCP connection — the retransmission timer (RTO), the tail-loss
//! probe and RACK's reordering timer, which share it, and the delayed-ACK timer — on the
//! kernel's timer wheel, in jiffies of 1/HZ s. Each arming takes a timeout in whole jiffies,
//! rounded **up** from the microseconds it was computed in (`usecs_to_jiffies`: `__tcp_set_rto`,
//! `tcp_schedule_loss_probe`, `tcp_rack_mark_lost`; the delayed-ACK `ato` is kept in jiffies),
//! and sets `expires = jiffies + timeout` (`sk_reset_timer`, `inet_csk_reset_xmit_timer`,
//! `tcp_send_delayed_ack`). When the timer runs depends on the wheel:
//!
//! - **`exact`** (the default): no wheel; the timer fires `timeout` ns after it is armed, as in
//!   ns-3 and RFC 6298.
//! - **`linux`** (Linux 4.8 and later, so 6.18; kernel/time/timer.c): `calc_wheel_index` puts a
//!   timer `delta = expires − clk` jiffies ahead on level n, the first with delta below
//!   `LVL_START(n + 1)` = 63 << 3n (63, 504, 4032, …), whose buckets are 8ⁿ jiffies wide, and
//!   `calc_index` rounds the expiry up to the next bucket boundary so that it never fires early:
//!   `bucket_expiry = ((expires >> 3n) + 1) << 3n`. The timer fires on that tick: one jiffy
//!   after `expires` on level 0 (below 63 jiffies: 252 ms at HZ = 250), up to 8 jiffies after
//!   it on level 1 (below 504 jiffies), up to 64 on level 2. `clk` is taken as `jiffies` (the
//!   wheel forwards its clock to jiffies when a timer is added to an idle base,
//!   `forward_timer_base`).
//! - **`linux-3.19`** (the cascading wheel of Linux 2.6–4.7, kernel/timer.c): a timer fires on
//!   the tick `expires` itself (`__run_timers` runs the timers of `base->timer_jiffies` once
//!   jiffies reaches it; outer levels cascade down without rounding), or on the next tick if
//!   `expires` is not ahead (`internal_add_timer` with a negative index).
//!
//! Jiffies count from the start of the simulation: tick j is at ⌈j·10⁹/HZ⌉ ns (tcp/cc/jiffies.rs).
//! With a wheel, a timeout of d ns armed at t fires at the tick computed from ⌊t·HZ/10⁹⌋ +
//! ⌈d·HZ/10⁹⌉, so between d − 1 jiffy (`linux-3.19`) and d + 1 jiffy plus the level's rounding
//! (`linux`) after t. The pacing timer is an hrtimer in Linux (`tcp_pace_kick`) and stays exact.
//!
//! Simplifications, each stated: haslab computes each timeout in ns and rounds it up to jiffies
//! when it arms the timer, where Linux keeps some in jiffies (a backed-off RTO is the doubled
//! jiffies, ⌈2d⌉ here against 2⌈d⌉; the delayed-ACK `ato` adapts in whole milliseconds,
//! tcp/delack.rs); the delayed-ACK rule "send now if the armed timer is due within ato/4"
//! compares with the tick the timer fires on, where Linux compares with its `expires`, one
//! jiffy earlier on level 0; and the softirq runs the timers at the tick itself.

use crate::tcp::cc::jiffies::{jiffies, jiffies_to_ns, ns_to_jiffies};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which clock the connection's timers run on (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TimerClock {
    /// Nanoseconds: a timer fires exactly its timeout after it is armed (default).
    #[default]
    Exact,
    /// Linux 4.8+'s timer wheel (6.18): jiffies of `hz`, expiry rounded up to the level's
    /// bucket, one jiffy late at least.
    Linux,
    /// Linux 3.19's cascading timer wheel: jiffies of `hz`, fired on the expiry tick.
    #[serde(rename = "linux-3.19")]
    Linux319,
}

/// `LVL_CLK_SHIFT` (kernel/time/timer.c): each level's buckets are 8 times wider.
const LVL_CLK_SHIFT: u32 = 3;
/// `LVL_BITS`: 64 buckets per level.
const LVL_BITS: u32 = 6;
/// `LVL_DEPTH` for HZ > 100 (9; 8 at HZ = 100, whose last level is never reached by a TCP
/// timer: `TCP_RTO_MAX` is 120 s = 12,000 jiffies, level 3).
const LVL_DEPTH: u32 = 9;

/// `LVL_START(n)`: the smallest delta that goes on level n (n ≥ 1).
fn lvl_start(n: u32) -> u64 {
    ((1u64 << LVL_BITS) - 1) << ((n - 1) * LVL_CLK_SHIFT)
}

/// The jiffy on which a timer armed at `now_j` for `expires` runs on 4.8+'s wheel
/// (`calc_wheel_index`, `calc_index`).
pub fn wheel_fire_jiffy(now_j: u64, expires: u64) -> u64 {
    let delta = expires.saturating_sub(now_j);
    let lvl = (1..LVL_DEPTH)
        .find(|&n| delta < lvl_start(n))
        .map_or(LVL_DEPTH - 1, |n| n - 1);
    let shift = lvl * LVL_CLK_SHIFT;
    ((expires >> shift) + 1) << shift
}

/// When a timer armed at `now_ns` for `timeout_ns` fires under `clock` (module doc).
#[inline]
pub fn fires_at(clock: TimerClock, hz: u32, now_ns: u64, timeout_ns: u64) -> u64 {
    if clock == TimerClock::Exact {
        return now_ns + timeout_ns;
    }
    let now_j = jiffies(now_ns, hz);
    // usecs_to_jiffies of the timeout, taken from ns (the same for whole µs)
    let expires = now_j + ns_to_jiffies(timeout_ns, hz);
    let fire_j = match clock {
        TimerClock::Linux => wheel_fire_jiffy(now_j, expires),
        _ => expires.max(now_j + 1),
    };
    jiffies_to_ns(fire_j, hz)
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: u64 = 1_000_000;

    /// HZ = 250 (4 ms jiffies). A 200 ms RTO (50 jiffies, level 0) armed at 10.001 s (tick
    /// 2,500): expires 2,550, fires on tick 2,551 with the 4.8+ wheel (10.204 s, 203 ms
    /// later), on tick 2,550 with 3.19's (10.200 s, 199 ms later). A 300 ms RTO (75 jiffies,
    /// level 1, 8-jiffy buckets): expires 2,575, bucket (2,575 >> 3) + 1 = 322, tick 2,576
    /// (10.304 s). A 42 ms probe timeout rounds up to 11 jiffies.
    #[test]
    fn the_wheels_fire_on_the_ticks_timer_c_gives() {
        let t = 10_001 * MS;
        assert_eq!(fires_at(TimerClock::Exact, 250, t, 200 * MS), t + 200 * MS);
        assert_eq!(fires_at(TimerClock::Linux, 250, t, 200 * MS), 10_204 * MS);
        assert_eq!(
            fires_at(TimerClock::Linux319, 250, t, 200 * MS),
            10_200 * MS
        );
        assert_eq!(fires_at(TimerClock::Linux, 250, t, 300 * MS), 10_304 * MS);
        assert_eq!(
            fires_at(TimerClock::Linux319, 250, t, 300 * MS),
            10_300 * MS
        );
        assert_eq!(fires_at(TimerClock::Linux, 250, t, 42 * MS), 10_048 * MS);
        assert_eq!(fires_at(TimerClock::Linux319, 250, t, 42 * MS), 10_044 * MS);
        // HZ = 1000: 200 ms is 200 jiffies, level 1: expires 10,201, bucket 1,276, tick 10,208
        assert_eq!(fires_at(TimerClock::Linux, 1000, t, 200 * MS), 10_208 * MS);
        // one jiffy at HZ = 300 (3,333,333 ns, as the 3.19 probe's timeout gives it) is one
        // jiffy, not two: tick 3,001 is the expiry
        assert_eq!(
            fires_at(TimerClock::Linux319, 300, t, 3_333_333),
            jiffies_to_ns(3_001, 300)
        );
        // a zero timeout still waits for the next tick
        assert_eq!(fires_at(TimerClock::Linux319, 250, t, 0), 10_004 * MS);
        // HZ = 300: ticks at ⌈j·10⁹/300⌉ ns; 10.001 s is tick 3,000; 40 ms is 12 jiffies
        assert_eq!(
            fires_at(TimerClock::Linux, 300, t, 40 * MS),
            jiffies_to_ns(3_013, 300)
        );
    }

    /// `calc_wheel_index`'s levels: the first delta of level n is 63 << 3(n − 1), and a timer
    /// never fires before its expiry, nor later than one bucket of its level after it.
    #[test]
    fn a_timer_fires_after_its_expiry_and_within_one_bucket_of_its_level() {
        assert_eq!((lvl_start(1), lvl_start(2), lvl_start(3)), (63, 504, 4032));
        for now in [0u64, 5, 1_000, 123_457] {
            for delta in [0u64, 1, 62, 63, 64, 503, 504, 4031, 4032, 30_000] {
                let fire = wheel_fire_jiffy(now, now + delta);
                let gran = match delta {
                    0..=62 => 1,
                    63..=503 => 8,
                    504..=4031 => 64,
                    _ => 512,
                };
                assert!(fire > now + delta, "now {now} delta {delta}");
                assert!(fire <= now + delta + gran, "now {now} delta {delta}");
                assert_eq!(fire % gran, 0);
            }
        }
    }
}
