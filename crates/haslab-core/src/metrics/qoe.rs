//! QoE metrics of HAS players (each with its paper below), computed at the end of a run from each
//! session's segment log and per-second samples ([`crate::has::PlayerLog`]).
//!
//! Per player ([`PlayerSummary`]):
//! - startup delay (first request → playback), stalls (count, time, per minute), rebuffering
//!   ratio Σ stall / (Σ stall + played), startup excluded;
//! - average bitrate (of downloaded segments, weighted by media duration), average buffer
//!   (per-second samples), media goodput;
//! - switches between consecutive segments, their mean magnitude (bps and levels), and the QoE
//!   paper's *stability*: the share of consecutive requests at an unchanged bitrate (§V-A);
//! - **instability, TcpHas paper (reconstructed: the paper gives no formula):** the level is sampled once per second,
//!   IS = 100 % × (number of seconds whose level differs from the previous second's) / (number
//!   of consecutive pairs): 0 % = constant level, 100 % = a change every second;
//! - **instability, FESTIVE (Jiang, Sekar, Zhang, CoNEXT 2012):** with k = 20 s and weight w(d) = k − d,
//!   Σ_{d=0}^{k−1} |b_{t−d} − b_{t−d−1}|·w(d) / Σ_{d=1}^{k} b_{t−d}·w(d), averaged over the seconds
//!   t that have k seconds of history;
//! - **infidelity and convergence (TcpHas paper, reconstructed):** the optimal level L_opt(t) is the
//!   highest level whose bitrate fits the fair share C/N(t), C the rate of the slowest link
//!   direction on the player's server → client path and N(t) the players active at t with the
//!   same bottleneck (no protocol-overhead factor is applied). Infidelity = share of seconds with
//!   L ≠ L_opt; convergence time = from the player's start to the first second from which
//!   L = L_opt until the end of its window (None if it never holds);
//! - **QoE score** (a MOS stand-in: ITU-T P.1203 cannot be installed here): the linear model of
//!   Yin, Jindal, Sekar, Sinopoli (SIGCOMM 2015, "balanced" weights, recalled, not re-checked):
//!   (Σ_n q(R_n) − λ·Σ_n |q(R_n) − q(R_{n−1})| − μ·T_rebuffer − μ_s·T_startup) / N, with q(R) = R in
//!   Mbps, λ = 1, μ = μ_s = 3 per second (their 3000 for kbps), N = segments downloaded.
//!
//! Across players ([`HasSummary`]): Jain's index of average bitrates and of goodputs,
//! FESTIVE unfairness sqrt(1 − Jain(b_{1,t}..b_{N,t})) averaged over seconds with at least two
//! active players, FESTIVE inefficiency |Σ_x b_{x,t} − W|/W (FESTIVE, when all players share one
//! bottleneck of rate W), and utilisation: the players' media bits over the bottlenecks' capacity
//! × observation window.
//!
//! Bitrates in the per-second metrics are those of the latest *request* (the level a player
//! selects, as the TcpHas paper's Fig. 2 plots); the played bitrate is also in the samples.

use super::{ColumnData, Table};
use crate::has::{PlayerLog, SampleRecord};
use serde::Serialize;

/// FESTIVE instability window, seconds (CoNEXT 2012).
pub const FESTIVE_K: usize = 20;
/// QoE weights (Yin et al. 2015, balanced), with q in Mbps: λ per Mbps of change, μ and μ_s per
/// second.
pub const QOE_LAMBDA: f64 = 1.0;
pub const QOE_MU: f64 = 3.0;
pub const QOE_MU_STARTUP: f64 = 3.0;

/// QoE metrics of one player.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PlayerSummary {
    pub name: String,
    pub algorithm: String,
    /// Node running the player.
    pub client: String,
    /// Node running the HTTP server.
    pub server: String,
    pub video: String,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    /// End of the observation window (stop time or end of run).
    pub end_ns: u64,
    pub segments: u64,
    /// Media (body) bytes downloaded.
    pub media_bytes: u64,
    pub connections: u32,
    pub startup_delay_ns: Option<u64>,
    pub stalls: u64,
    pub stall_ns: u64,
    pub stalls_per_minute: f64,
    pub rebuffering_ratio: f64,
    pub downloaded_ns: u64,
    pub played_ns: u64,
    pub buffered_ns: u64,
    pub discarded_ns: u64,
    pub avg_bitrate_bps: f64,
    pub avg_level: f64,
    pub avg_buffer_ns: f64,
    /// Mean of the per-segment download throughputs.
    pub avg_throughput_bps: f64,
    /// Media bits / (end − start).
    pub goodput_bps: f64,
    pub switches: u64,
    pub switch_magnitude_bps: f64,
    pub switch_magnitude_levels: f64,
    /// QoE paper's stability: share of consecutive requests at the same bitrate.
    pub stability: Option<f64>,
    /// TcpHas-paper instability (reconstructed), percent.
    pub instability_pct: Option<f64>,
    /// FESTIVE instability, time average.
    pub festive_instability: Option<f64>,
    /// The slowest link direction on the server → client path, and its rate.
    pub bottleneck: Option<String>,
    pub bottleneck_bps: Option<u64>,
    /// Mean fair share C/N over the samples.
    pub fair_share_bps: Option<f64>,
    /// Optimal level at the last sample.
    pub optimal_level: Option<u32>,
    /// Share of seconds not at the optimal level (TcpHas paper, reconstructed), percent.
    pub infidelity_pct: Option<f64>,
    /// Start → the level holds at the optimal one until the end (TcpHas paper, reconstructed).
    pub convergence_ns: Option<u64>,
    /// Linear QoE score (Yin et al. 2015), per segment.
    pub qoe_score: Option<f64>,
}

/// Metrics across all players.
#[derive(Clone, Debug, Default, Serialize)]
pub struct HasSummary {
    pub players: u64,
    pub jain_bitrate: Option<f64>,
    pub jain_goodput: Option<f64>,
    pub festive_unfairness: Option<f64>,
    pub festive_inefficiency: Option<f64>,
    pub utilization: Option<f64>,
}

pub struct QoeOutput {
    pub players: Vec<PlayerSummary>,
    pub has: Option<HasSummary>,
    /// `segments` and `players` tables.
    pub tables: Vec<Table>,
}

/// Jain's fairness index (Σx)² / (n·Σx²); None when empty or all zero.
pub fn jain(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    (n > 0.0 && s2 > 0.0).then(|| s * s / (n * s2))
}

/// TcpHas-paper instability: percent of consecutive samples whose level changed.
pub fn instability_pct(levels: &[u32]) -> Option<f64> {
    if levels.len() < 2 {
        return None;
    }
    let changes = levels.windows(2).filter(|w| w[0] != w[1]).count();
    Some(100.0 * changes as f64 / (levels.len() - 1) as f64)
}

/// FESTIVE instability of per-second bitrates, averaged over seconds with `k` of history.
pub fn festive_instability(b: &[f64], k: usize) -> Option<f64> {
    if b.len() <= k {
        return None;
    }
    let mut sum = 0.0;
    let mut n = 0usize;
    for t in k..b.len() {
        let num: f64 = (0..k)
            .map(|d| (b[t - d] - b[t - d - 1]).abs() * (k - d) as f64)
            .sum();
        let den: f64 = (1..=k).map(|d| b[t - d] * (k - d) as f64).sum();
        if den > 0.0 {
            sum += num / den;
            n += 1;
        }
    }
    (n > 0).then(|| sum / n as f64)
}

/// Infidelity (percent of samples off the optimal level) and the index of the first sample
/// from which the level stays optimal (None if the last sample is off).
pub fn infidelity_and_convergence(levels: &[u32], optimal: &[u32]) -> (Option<f64>, Option<usize>) {
    if levels.is_empty() {
        return (None, None);
    }
    let off = levels.iter().zip(optimal).filter(|(l, o)| l != o).count();
    let mut conv = None;
    for i in (0..levels.len()).rev() {
        if levels[i] == optimal[i] {
            conv = Some(i);
        } else {
            break;
        }
    }
    (Some(100.0 * off as f64 / levels.len() as f64), conv)
}

/// Linear QoE (Yin et al. 2015) of a sequence of segment bitrates, per segment.
pub fn qoe_linear(bitrates_bps: &[u64], rebuffer_s: f64, startup_s: f64) -> Option<f64> {
    if bitrates_bps.is_empty() {
        return None;
    }
    let q: Vec<f64> = bitrates_bps.iter().map(|&b| b as f64 / 1e6).collect();
    let quality: f64 = q.iter().sum();
    let var: f64 = q.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
    Some(
        (quality - QOE_LAMBDA * var - QOE_MU * rebuffer_s - QOE_MU_STARTUP * startup_s)
            / q.len() as f64,
    )
}

fn active(log: &PlayerLog, t: u64) -> bool {
    log.start_ns <= t && t < log.end_ns
}

/// Computes every metric. `paths[i]` is player i's bottleneck (link direction name, rate);
/// `node_name` names a node index.
pub fn evaluate(
    logs: &[PlayerLog],
    paths: &[Option<(String, u64)>],
    node_name: impl Fn(u32) -> String,
) -> QoeOutput {
    let mut players = Vec::with_capacity(logs.len());
    // per-player optimal levels per sample, for the table
    let mut optimal_cols: Vec<Vec<(u32, f64)>> = Vec::with_capacity(logs.len());
    for (i, log) in logs.iter().enumerate() {
        let path = paths.get(i).cloned().flatten();
        let session_ns = log.end_ns.saturating_sub(log.start_ns);
        let stall_ns: u64 = log
            .stalls
            .iter()
            .map(|s| {
                s.duration_ns
                    .unwrap_or(log.end_ns.saturating_sub(s.start_ns))
            })
            .sum();
        let segs = &log.segments;
        let media_ns: u64 = segs.iter().map(|s| s.media_ns).sum();
        let media_bytes: u64 = segs.iter().map(|s| s.bytes).sum();
        let avg_bitrate = if media_ns > 0 {
            segs.iter()
                .map(|s| s.bitrate_bps as f64 * s.media_ns as f64)
                .sum::<f64>()
                / media_ns as f64
        } else {
            0.0
        };
        let avg_level = if media_ns > 0 {
            segs.iter()
                .map(|s| s.level as f64 * s.media_ns as f64)
                .sum::<f64>()
                / media_ns as f64
        } else {
            0.0
        };
        let mut switches = 0u64;
        let (mut mag_bps, mut mag_lv) = (0.0, 0.0);
        for w in segs.windows(2) {
            if w[0].level != w[1].level {
                switches += 1;
                mag_bps += (w[1].bitrate_bps as f64 - w[0].bitrate_bps as f64).abs();
                mag_lv += (w[1].level as f64 - w[0].level as f64).abs();
            }
        }
        let pairs = segs.len().saturating_sub(1);
        let samples: Vec<&SampleRecord> = log
            .samples
            .iter()
            .filter(|s| active(log, s.time_ns))
            .collect();
        let levels: Vec<u32> = samples.iter().map(|s| s.level).collect();
        let rates: Vec<f64> = samples.iter().map(|s| s.bitrate_bps as f64).collect();
        // fair share and optimal level per sample
        let mut opt: Vec<(u32, f64)> = Vec::with_capacity(log.samples.len());
        for s in &log.samples {
            match &path {
                Some((link, rate)) => {
                    let n = logs
                        .iter()
                        .enumerate()
                        .filter(|(j, l)| {
                            active(l, s.time_ns)
                                && paths
                                    .get(*j)
                                    .cloned()
                                    .flatten()
                                    .is_some_and(|(k, _)| &k == link)
                        })
                        .count()
                        .max(1);
                    let share = *rate as f64 / n as f64;
                    let lv = crate::has::video::highest_at_most(&log.bitrates_bps, share) as u32;
                    opt.push((lv, share));
                }
                None => opt.push((0, f64::NAN)),
            }
        }
        let opt_active: Vec<(u32, f64)> = log
            .samples
            .iter()
            .zip(&opt)
            .filter(|(s, _)| active(log, s.time_ns))
            .map(|(_, o)| *o)
            .collect();
        let (infidelity, conv_idx) = if path.is_some() {
            let o: Vec<u32> = opt_active.iter().map(|o| o.0).collect();
            infidelity_and_convergence(&levels, &o)
        } else {
            (None, None)
        };
        let startup_s = log.startup_delay_ns.map_or(0.0, |d| d as f64 / 1e9);
        let br: Vec<u64> = segs.iter().map(|s| s.bitrate_bps).collect();
        players.push(PlayerSummary {
            name: log.name.clone(),
            algorithm: log.algorithm.clone(),
            client: node_name(log.client),
            server: node_name(log.server),
            video: log.video.clone(),
            start_ns: log.start_ns,
            stop_ns: log.stop_ns,
            end_ns: log.end_ns,
            segments: segs.len() as u64,
            media_bytes,
            connections: log.connections_opened,
            startup_delay_ns: log.startup_delay_ns,
            stalls: log.stalls.len() as u64,
            stall_ns,
            stalls_per_minute: if session_ns > 0 {
                log.stalls.len() as f64 * 60e9 / session_ns as f64
            } else {
                0.0
            },
            rebuffering_ratio: if stall_ns + log.played_ns > 0 {
                stall_ns as f64 / (stall_ns + log.played_ns) as f64
            } else {
                0.0
            },
            downloaded_ns: log.downloaded_ns,
            played_ns: log.played_ns,
            buffered_ns: log.buffered_ns,
            discarded_ns: log.discarded_ns,
            avg_bitrate_bps: avg_bitrate,
            avg_level,
            avg_buffer_ns: if samples.is_empty() {
                0.0
            } else {
                samples.iter().map(|s| s.buffer_ns as f64).sum::<f64>() / samples.len() as f64
            },
            avg_throughput_bps: if segs.is_empty() {
                0.0
            } else {
                segs.iter().map(|s| s.throughput_bps()).sum::<f64>() / segs.len() as f64
            },
            goodput_bps: if session_ns > 0 {
                media_bytes as f64 * 8e9 / session_ns as f64
            } else {
                0.0
            },
            switches,
            switch_magnitude_bps: if switches > 0 {
                mag_bps / switches as f64
            } else {
                0.0
            },
            switch_magnitude_levels: if switches > 0 {
                mag_lv / switches as f64
            } else {
                0.0
            },
            stability: (pairs > 0).then(|| (pairs as u64 - switches) as f64 / pairs as f64),
            instability_pct: instability_pct(&levels),
            festive_instability: festive_instability(&rates, FESTIVE_K),
            bottleneck: path.as_ref().map(|p| p.0.clone()),
            bottleneck_bps: path.as_ref().map(|p| p.1),
            fair_share_bps: (path.is_some() && !opt_active.is_empty())
                .then(|| opt_active.iter().map(|o| o.1).sum::<f64>() / opt_active.len() as f64),
            optimal_level: opt_active.last().filter(|_| path.is_some()).map(|o| o.0),
            infidelity_pct: infidelity,
            convergence_ns: conv_idx.map(|k| samples[k].time_ns - log.start_ns),
            qoe_score: qoe_linear(&br, stall_ns as f64 / 1e9, startup_s),
        });
        optimal_cols.push(opt);
    }

    let has = (!logs.is_empty()).then(|| across(logs, paths, &players));
    let mut tables = vec![segment_table(logs), sample_table(logs, &optimal_cols)];
    // only when a player abandoned a request (players that never abandon add nothing)
    if logs.iter().any(|l| !l.abandoned.is_empty()) {
        tables.push(abandon_table(logs));
    }
    QoeOutput {
        tables,
        players,
        has,
    }
}

fn across(
    logs: &[PlayerLog],
    paths: &[Option<(String, u64)>],
    players: &[PlayerSummary],
) -> HasSummary {
    let bitrates: Vec<f64> = players.iter().map(|p| p.avg_bitrate_bps).collect();
    let goodputs: Vec<f64> = players.iter().map(|p| p.goodput_bps).collect();
    // per-second requested bitrates of active players, by time
    let mut by_time: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for log in logs {
        for s in &log.samples {
            if active(log, s.time_ns) {
                by_time
                    .entry(s.time_ns)
                    .or_default()
                    .push(s.bitrate_bps as f64);
            }
        }
    }
    let unf: Vec<f64> = by_time
        .values()
        .filter(|v| v.len() >= 2)
        .filter_map(|v| jain(v).map(|j| (1.0 - j).max(0.0).sqrt()))
        .collect();
    let shared = paths.first().cloned().flatten().filter(|first| {
        paths
            .iter()
            .all(|p| p.as_ref().is_some_and(|p| p.0 == first.0))
    });
    let ineff = shared.as_ref().and_then(|(_, w)| {
        let v: Vec<f64> = by_time
            .values()
            .map(|b| (b.iter().sum::<f64>() - *w as f64).abs() / *w as f64)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    });
    // utilisation: media bits over Σ (bottleneck rate × window of the players that use it)
    let mut groups: std::collections::BTreeMap<String, (u64, u64, u64, f64)> = Default::default();
    for (i, log) in logs.iter().enumerate() {
        if let Some(Some((link, rate))) = paths.get(i) {
            let bits = players[i].media_bytes as f64 * 8.0;
            let e = groups
                .entry(link.clone())
                .or_insert((*rate, log.start_ns, log.end_ns, 0.0));
            e.1 = e.1.min(log.start_ns);
            e.2 = e.2.max(log.end_ns);
            e.3 += bits;
        }
    }
    let cap: f64 = groups
        .values()
        .map(|(r, s, e, _)| *r as f64 * e.saturating_sub(*s) as f64 / 1e9)
        .sum();
    let bits: f64 = groups.values().map(|g| g.3).sum();
    HasSummary {
        players: logs.len() as u64,
        jain_bitrate: jain(&bitrates),
        jain_goodput: jain(&goodputs),
        festive_unfairness: (!unf.is_empty()).then(|| unf.iter().sum::<f64>() / unf.len() as f64),
        festive_inefficiency: ineff,
        utilization: (cap > 0.0).then(|| bits / cap),
    }
}

fn segment_table(logs: &[PlayerLog]) -> Table {
    let mut c: [Vec<u64>; 10] = Default::default();
    let (mut player, mut index, mut level, mut flow) = (vec![], vec![], vec![], vec![]);
    let (mut thr, mut est) = (vec![], vec![]);
    for (i, log) in logs.iter().enumerate() {
        for s in &log.segments {
            player.push(i as u32);
            index.push(s.index);
            level.push(s.level);
            flow.push(s.conn);
            c[0].push(s.bitrate_bps);
            c[1].push(s.bytes);
            c[2].push(s.media_ns);
            c[3].push(s.request_ns);
            c[4].push(s.done_ns);
            c[5].push(s.download_ns());
            c[6].push(s.buffer_before_ns);
            c[7].push(s.buffer_after_ns);
            c[8].push(s.first_byte_ns);
            c[9].push(s.ttfb_ns());
            thr.push(s.throughput_bps());
            est.push(s.estimate_bps);
        }
    }
    let [bitrate, bytes, media, req, done, dl, bb, ba, fb, ttfb] = c;
    Table {
        name: "segments".into(),
        columns: vec![
            ("player".into(), ColumnData::U32(player)),
            ("index".into(), ColumnData::U32(index)),
            ("level".into(), ColumnData::U32(level)),
            ("bitrate_bps".into(), ColumnData::U64(bitrate)),
            ("bytes".into(), ColumnData::U64(bytes)),
            ("media_ns".into(), ColumnData::U64(media)),
            ("request_ns".into(), ColumnData::U64(req)),
            ("first_byte_ns".into(), ColumnData::U64(fb)),
            ("done_ns".into(), ColumnData::U64(done)),
            ("ttfb_ns".into(), ColumnData::U64(ttfb)),
            ("download_ns".into(), ColumnData::U64(dl)),
            ("throughput_bps".into(), ColumnData::F64(thr)),
            ("estimate_bps".into(), ColumnData::F64(est)),
            ("buffer_before_ns".into(), ColumnData::U64(bb)),
            ("buffer_after_ns".into(), ColumnData::U64(ba)),
            ("flow".into(), ColumnData::U32(flow)),
        ],
    }
}

/// One row per abandoned request.
fn abandon_table(logs: &[PlayerLog]) -> Table {
    let (mut player, mut index, mut level, mut to, mut flow) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut req, mut at, mut loaded, mut total) = (vec![], vec![], vec![], vec![]);
    for (i, log) in logs.iter().enumerate() {
        for a in &log.abandoned {
            player.push(i as u32);
            index.push(a.index);
            level.push(a.level);
            to.push(a.to_level);
            flow.push(a.conn);
            req.push(a.request_ns);
            at.push(a.abandon_ns);
            loaded.push(a.bytes_loaded);
            total.push(a.bytes_total);
        }
    }
    Table {
        name: "abandons".into(),
        columns: vec![
            ("player".into(), ColumnData::U32(player)),
            ("index".into(), ColumnData::U32(index)),
            ("level".into(), ColumnData::U32(level)),
            ("to_level".into(), ColumnData::U32(to)),
            ("request_ns".into(), ColumnData::U64(req)),
            ("abandon_ns".into(), ColumnData::U64(at)),
            ("bytes_loaded".into(), ColumnData::U64(loaded)),
            ("bytes_total".into(), ColumnData::U64(total)),
            ("flow".into(), ColumnData::U32(flow)),
        ],
    }
}

fn sample_table(logs: &[PlayerLog], optimal: &[Vec<(u32, f64)>]) -> Table {
    let (mut time, mut player, mut level, mut bitrate) = (vec![], vec![], vec![], vec![]);
    let (mut played, mut buffer, mut phase, mut est) = (vec![], vec![], vec![], vec![]);
    let (mut opt, mut share) = (vec![], vec![]);
    for (i, log) in logs.iter().enumerate() {
        for (k, s) in log.samples.iter().enumerate() {
            time.push(s.time_ns);
            player.push(i as u32);
            level.push(s.level);
            bitrate.push(s.bitrate_bps);
            played.push(s.played_bitrate_bps);
            buffer.push(s.buffer_ns);
            phase.push(s.phase);
            est.push(s.estimate_bps);
            let o = optimal[i].get(k).copied().unwrap_or((0, f64::NAN));
            opt.push(o.0);
            share.push(o.1);
        }
    }
    Table {
        name: "players".into(),
        columns: vec![
            ("time_ns".into(), ColumnData::U64(time)),
            ("player".into(), ColumnData::U32(player)),
            ("level".into(), ColumnData::U32(level)),
            ("bitrate_bps".into(), ColumnData::U64(bitrate)),
            ("played_bitrate_bps".into(), ColumnData::F64(played)),
            ("buffer_ns".into(), ColumnData::U64(buffer)),
            ("phase".into(), ColumnData::U32(phase)),
            ("estimate_bps".into(), ColumnData::F64(est)),
            ("optimal_level".into(), ColumnData::U32(opt)),
            ("fair_share_bps".into(), ColumnData::F64(share)),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instability_is_0_for_a_constant_level_and_100_for_a_change_every_second() {
        assert_eq!(instability_pct(&[2, 2, 2, 2]), Some(0.0));
        assert_eq!(instability_pct(&[1, 2, 1, 2]), Some(100.0));
        assert_eq!(instability_pct(&[1, 1, 2, 2, 2]), Some(25.0));
        assert_eq!(instability_pct(&[1]), None);
    }

    #[test]
    fn festive_instability_weights_recent_changes_more() {
        let flat = vec![1.0; 30];
        assert_eq!(festive_instability(&flat, 20), Some(0.0));
        // one change of 1 → 2 at second 25: seen by t = 25..29 with weights 20, 19, ...
        let mut b = vec![1.0; 25];
        b.extend([2.0; 5]);
        let v = festive_instability(&b, 20).unwrap();
        assert!(v > 0.0);
        // the same change at second 21 weighs less at t = 29 than one at 29 does
        let recent = {
            let mut x = vec![1.0; 29];
            x.push(2.0);
            x
        };
        let old = {
            let mut x = vec![1.0; 21];
            x.extend([2.0; 9]);
            x
        };
        let last = |x: &[f64]| festive_instability(&x[x.len() - 21..], 20).unwrap();
        assert!(last(&recent) > last(&old));
    }

    #[test]
    fn convergence_is_the_start_of_the_final_optimal_run() {
        let (inf, conv) = infidelity_and_convergence(&[0, 1, 2, 1, 2, 2], &[2; 6]);
        assert!((inf.unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(conv, Some(4));
        assert_eq!(infidelity_and_convergence(&[2, 1], &[2, 2]).1, None);
    }

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert!((jain(&[3.0, 3.0, 3.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
    }

    #[test]
    fn linear_qoe_penalises_switches_and_rebuffering() {
        let steady = qoe_linear(&[2_000_000; 4], 0.0, 0.0).unwrap();
        assert!((steady - 2.0).abs() < 1e-12);
        let switching =
            qoe_linear(&[1_000_000, 3_000_000, 1_000_000, 3_000_000], 0.0, 0.0).unwrap();
        assert!(switching < steady, "same mean bitrate, 6 Mbps of switches");
        let stalled = qoe_linear(&[2_000_000; 4], 1.0, 0.0).unwrap();
        assert!((steady - stalled - 0.75).abs() < 1e-12);
    }
}
