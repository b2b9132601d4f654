//! Validation of the `[[player]]` tables and their resolution into [`PlayerPlan`]s: `count`
//! replication, node names, the video (preset, custom ladder or MPD), buffer thresholds,
//! connection policy, algorithm parameters, transport. Errors name `player[i].<field>`.

use super::plan::*;
use super::player_spec::*;
use super::spec::*;
use super::validate::{
    check_duration, check_start_stop, err, resolve_endpoints, resolve_transport, show_ns,
    Components, Net,
};
use super::ScenarioError;
use crate::has::mpd::{self, MpdOptions};
use crate::has::video::{preset_names, Video};
use crate::tcp::cc::CcConfig;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// Most players in a scenario after `count` replication.
pub const MAX_PLAYERS: u64 = 10_000;
/// Most connections of one player in parallel.
pub const MAX_PARALLEL: u64 = 64;

impl Scenario {
    /// The video of player entry `p` (`player[i]`).
    fn resolve_video(
        &self,
        v: &VideoChoice,
        p: &str,
        base: Option<&Path>,
    ) -> Result<Video, ScenarioError> {
        let spec = v.spec();
        let vp = match v {
            VideoChoice::Preset(_) => format!("{p}.video"),
            VideoChoice::Table(_) => format!("{p}.video.preset"),
        };
        let given = [
            spec.preset.is_some(),
            spec.bitrates.is_some(),
            spec.mpd.is_some(),
            spec.sabre.is_some(),
        ]
        .iter()
        .filter(|&&x| x)
        .count();
        if given != 1 {
            return Err(err(
                format!("{p}.video"),
                if given == 0 {
                    "give one of `preset`, `bitrates`, `mpd` or `sabre`".to_string()
                } else {
                    "give only one of `preset`, `bitrates`, `mpd` and `sabre`".to_string()
                },
            ));
        }
        for (key, d) in [("segment", spec.segment), ("duration", spec.duration)] {
            if let Some(d) = d {
                if d.0 == 0 {
                    return Err(err(format!("{p}.video.{key}"), "must be greater than zero"));
                }
                check_duration(&format!("{p}.video.{key}"), d.0)?;
            }
        }
        if spec.sizes.is_some() && spec.bitrates.is_none() {
            return Err(err(
                format!("{p}.video.sizes"),
                "only allowed with `bitrates` (presets, MPDs and Sabre movies have their own sizes)",
            ));
        }
        if let Some(name) = &spec.preset {
            if spec.segment.is_some() {
                return Err(err(
                    format!("{p}.video.segment"),
                    "a preset has 2 s segments; use `bitrates` for another segment duration",
                ));
            }
            return match Video::preset(name, spec.duration.map(|d| d.0)) {
                None => Err(err(
                    vp,
                    format!(
                        "unknown video preset {name:?}: expected one of {}",
                        preset_names()
                    ),
                )),
                Some(r) => r.map_err(|m| err(format!("{p}.video"), m)),
            };
        }
        if let Some(rates) = &spec.bitrates {
            let ladder: Vec<u64> = rates.iter().map(|r| r.0).collect();
            crate::has::video::check_ladder(&ladder)
                .map_err(|m| err(format!("{p}.video.bitrates"), m))?;
            let seg = spec.segment.ok_or_else(|| {
                err(
                    format!("{p}.video.segment"),
                    "required with `bitrates`: the segment duration, e.g. \"2s\"",
                )
            })?;
            return match &spec.sizes {
                Some(sizes) => {
                    if spec.duration.is_some() {
                        return Err(err(
                            format!("{p}.video.duration"),
                            "not allowed with `sizes`: the number of sizes gives the length",
                        ));
                    }
                    let n = sizes.first().map_or(0, |r| r.len());
                    let table: Vec<Vec<u64>> = sizes
                        .iter()
                        .map(|r| r.iter().map(|s| s.0).collect())
                        .collect();
                    Video::from_durations("custom", ladder, vec![seg.0; n], Some(table))
                        .map_err(|m| err(format!("{p}.video.sizes"), m))
                }
                None => {
                    let total = spec.duration.ok_or_else(|| {
                        err(
                            format!("{p}.video.duration"),
                            "required with `bitrates` (or give `sizes`): the video's length, e.g. \"10min\"",
                        )
                    })?;
                    Video::cbr("custom", ladder, seg.0, total.0)
                        .map_err(|m| err(format!("{p}.video"), m))
                }
            };
        }
        if let Some(file) = &spec.sabre {
            for (key, given) in [
                ("segment", spec.segment.is_some()),
                ("duration", spec.duration.is_some()),
            ] {
                if given {
                    return Err(err(
                        format!("{p}.video.{key}"),
                        "not allowed with `sabre`: the movie gives the segments",
                    ));
                }
            }
            let path = match base {
                Some(b) if Path::new(file).is_relative() => b.join(file),
                _ => Path::new(file).to_path_buf(),
            };
            let mut video =
                crate::sabre::read_movie(&path).map_err(|m| err(format!("{p}.video.sabre"), m))?;
            video.name = file.clone();
            return Ok(video);
        }
        let file = spec.mpd.as_deref().unwrap_or_default();
        if spec.duration.is_some() {
            return Err(err(
                format!("{p}.video.duration"),
                "not allowed with `mpd`: the MPD gives the length",
            ));
        }
        let path = match base {
            Some(b) if Path::new(file).is_relative() => b.join(file),
            _ => Path::new(file).to_path_buf(),
        };
        let mut video = mpd::load_file(
            &path,
            &MpdOptions {
                segment_ns: spec.segment.map(|d| d.0),
            },
        )
        .map_err(|m| err(format!("{p}.video.mpd"), m))?;
        // results name the MPD as the scenario does, not by where this machine found it
        // (an absolute path in summary.json would tie the results to one directory)
        video.name = file.to_string();
        for w in &mut video.warnings {
            *w = format!("{p}.video.mpd: {file}: {w}");
        }
        Ok(video)
    }

    /// Resolves every `[[player]]` entry; `flow_names` are the flows' names (a player may not
    /// reuse one).
    pub(super) fn resolve_players(
        &self,
        net: &Net,
        duration_ns: u64,
        flow_names: &HashSet<&str>,
        base: Option<&Path>,
    ) -> Result<Vec<PlayerPlan>, ScenarioError> {
        let mut total: u64 = 0;
        for (i, pl) in self.players.iter().enumerate() {
            if pl.count == 0 {
                return Err(err(format!("player[{i}].count"), "must be at least 1"));
            }
            total = total
                .checked_add(pl.count)
                .filter(|t| *t <= MAX_PLAYERS)
                .ok_or_else(|| {
                    err(
                        format!("player[{i}].count"),
                        format!("too many players: at most {MAX_PLAYERS} in all"),
                    )
                })?;
        }
        let default_cc = match &self.defaults.cc {
            Some(c) => c.0.clone(),
            None => CcConfig::default(),
        };
        let mut comps = Components::new(net.nodes.len(), &net.links);
        let mut out: Vec<PlayerPlan> = Vec::with_capacity(total as usize);
        let mut names: HashMap<String, usize> = HashMap::new();
        for (i, pl) in self.players.iter().enumerate() {
            let p = format!("player[{i}]");
            // algorithm
            if let Err((field, message)) = pl.abr.0.check() {
                return Err(err(format!("{p}.abr.{field}"), message));
            }
            // timing
            check_start_stop(
                &p,
                pl.start.0,
                pl.stop.map(|s| s.0),
                duration_ns,
                "a player",
            )?;

            let video = Arc::new(self.resolve_video(&pl.video, &p, base)?);
            let (buffer_ns, startup_ns, resume_ns) = buffer_levels(pl, &p, &video)?;
            let connection = connection_policy(pl, &p)?;
            // transport
            let (t_cc, t_tcp) = resolve_transport(pl.transport.as_deref(), &p)?;
            let tcp = self.resolve_tcp_over(&pl.tcp, &t_tcp, &p)?;
            let cc = match (&pl.cc, t_cc) {
                (Some(c), _) => c.0.clone(),
                (None, Some(c)) => c,
                (None, None) => default_cc.clone(),
            };
            if let Err((field, message)) = cc.check() {
                let at = if pl.cc.is_some() {
                    format!("{p}.cc")
                } else {
                    "defaults.cc".to_string()
                };
                return Err(err(format!("{at}.{field}"), message));
            }
            // replication
            if pl.count > 1 {
                if let Some(n) = &pl.name {
                    if !n.contains("{i}") {
                        return Err(err(
                            format!("{p}.name"),
                            format!(
                                "with count = {} the name must contain \"{{i}}\" (replaced by 0..{}), e.g. \"{n}{{i}}\"",
                                pl.count,
                                pl.count - 1
                            ),
                        ));
                    }
                }
            }
            for k in 0..pl.count {
                let ks = k.to_string();
                let subst = |s: &str| s.replace("{i}", &ks);
                let copy = if pl.count > 1 {
                    format!(" (copy i = {k})")
                } else {
                    String::new()
                };
                let name = match &pl.name {
                    Some(n) => subst(n),
                    None => format!("player{}", out.len()),
                };
                super::check_name(&name)
                    .map_err(|m| err(format!("{p}.name"), format!("{m}{copy}")))?;
                if let Some(prev) = names.get(&name) {
                    return Err(err(
                        format!("{p}.name"),
                        format!("duplicate player name {name:?} (already used by player entry {prev}){copy}"),
                    ));
                }
                if flow_names.contains(name.as_str()) {
                    return Err(err(
                        format!("{p}.name"),
                        format!("{name:?} is already the name of a flow; players and flows need distinct names{copy}"),
                    ));
                }
                let client_name = subst(&pl.client);
                let server_name = subst(&pl.server);
                let (client, server) = resolve_endpoints(
                    net,
                    &mut comps,
                    &p,
                    ("client", "server"),
                    (&client_name, &server_name),
                    false,
                    "a player",
                    &copy,
                )?;
                names.insert(name.clone(), i);
                out.push(PlayerPlan {
                    name,
                    client,
                    server,
                    abr: pl.abr.0.clone(),
                    video: video.clone(),
                    buffer_ns,
                    startup_ns,
                    resume_ns,
                    refill_low_ns: pl.refill.map(|r| r.0),
                    connection,
                    start_ns: pl.start.0,
                    stop_ns: pl.stop.map(|s| s.0),
                    tcp: tcp.clone(),
                    cc: cc.clone(),
                    transport: pl.transport.clone(),
                });
            }
        }
        Ok(out)
    }
}

/// The playback model's levels: the buffer holds a segment, start-up and resume fit in it, the
/// refill level is below it (and BBA's reservoir too). Returns (buffer, startup, resume) in ns.
fn buffer_levels(
    pl: &PlayerSpec,
    p: &str,
    video: &Video,
) -> Result<(u64, u64, u64), ScenarioError> {
    let longest = video.durations_ns.iter().copied().max().unwrap_or(0);
    // playback thresholds
    let buffer_ns = pl.buffer.map_or(30_000_000_000, |b| b.0);
    if buffer_ns < longest {
        return Err(err(
            format!("{p}.buffer"),
            format!(
                "{} cannot hold one segment of the video ({}): the buffer must be at least one segment long",
                show_ns(buffer_ns),
                show_ns(longest)
            ),
        ));
    }
    check_duration(&format!("{p}.buffer"), buffer_ns)?;
    if let crate::has::players::AbrConfig::Bba(c) = &pl.abr.0 {
        // BBA (Huang et al., SIGCOMM 2014, §4) maps the buffer between the reservoir and
        // reservoir + cushion onto the ladder: a reservoir the buffer cannot exceed
        // would pin the lowest level for the whole run.
        if c.reservoir.0 >= buffer_ns {
            return Err(err(
                format!("{p}.abr.reservoir"),
                format!(
                    "{} is not below the buffer ({}): BBA would never leave the lowest level",
                    show_ns(c.reservoir.0),
                    show_ns(buffer_ns)
                ),
            ));
        }
    }
    let startup_ns = pl.startup.map_or(video.segment_ns(), |d| d.0);
    for (key, v) in [
        ("startup", Some(startup_ns)),
        ("resume", pl.resume.map(|d| d.0)),
    ] {
        let Some(v) = v else { continue };
        if v == 0 {
            return Err(err(format!("{p}.{key}"), "must be greater than zero"));
        }
        if v > buffer_ns {
            return Err(err(
                format!("{p}.{key}"),
                format!(
                    "{} is more than the buffer ({})",
                    show_ns(v),
                    show_ns(buffer_ns)
                ),
            ));
        }
    }
    let resume_ns = pl.resume.map_or(startup_ns, |d| d.0);
    if let Some(r) = pl.refill {
        if r.0 >= buffer_ns {
            return Err(err(
                format!("{p}.refill"),
                format!(
                    "{} must be below the buffer ({}): it is the level the buffer drains to before refilling",
                    show_ns(r.0),
                    show_ns(buffer_ns)
                ),
            ));
        }
    }
    Ok((buffer_ns, startup_ns, resume_ns))
}

/// The connection policy and its parameters (`connections`, `renew_every`).
fn connection_policy(pl: &PlayerSpec, p: &str) -> Result<ConnectionPolicy, ScenarioError> {
    // connections
    let only = |key: &str, kind: &str| {
        err(
            format!("{p}.{key}"),
            format!(
                "only allowed with connection = \"{kind}\" (this player's is \"{}\")",
                pl.connection.name()
            ),
        )
    };
    if pl.connections.is_some()
        && !matches!(
            pl.connection,
            ConnectionKind::Parallel | ConnectionKind::Rotate
        )
    {
        return Err(only("connections", "parallel\" or \"rotate"));
    }
    if pl.renew_every.is_some() && pl.connection != ConnectionKind::Renew {
        return Err(only("renew_every", "renew"));
    }
    Ok(match pl.connection {
        ConnectionKind::Persistent => ConnectionPolicy::Persistent,
        ConnectionKind::PerRequest => ConnectionPolicy::PerRequest,
        ConnectionKind::Parallel | ConnectionKind::Rotate => {
            let n = pl.connections.unwrap_or(4);
            if !(1..=MAX_PARALLEL).contains(&n) {
                return Err(err(
                    format!("{p}.connections"),
                    format!("{n} is out of range: 1 to {MAX_PARALLEL} connections"),
                ));
            }
            if pl.connection == ConnectionKind::Rotate {
                ConnectionPolicy::Rotate(n as u32)
            } else {
                ConnectionPolicy::Parallel(n as u32)
            }
        }
        ConnectionKind::Renew => {
            let k = pl.renew_every.ok_or_else(|| {
                err(
                    format!("{p}.renew_every"),
                    "required with connection = \"renew\": segments per connection, e.g. 10",
                )
            })?;
            if k == 0 || k > u32::MAX as u64 {
                return Err(err(
                    format!("{p}.renew_every"),
                    format!("{k} is out of range: at least 1 segment per connection"),
                ));
            }
            ConnectionPolicy::Renew(k as u32)
        }
    })
}
