//! Validation and resolution of `[[traffic]]`, `[[loss_event]]` and `[[capacity]]` into the
//! [`Plan`]'s `traffic` and `dynamics`. Errors name the field as the file spells it
//! (`traffic[0].hurst`, `loss_event[1].stop`, `capacity[0].mahimahi`).

use super::plan::*;
use super::plan_traffic::*;
use super::spec::*;
use super::spec_traffic::*;
use super::validate::{
    check_duration, check_loss, check_name, check_rate, check_start_stop, err, resolve_dir_ref,
    resolve_endpoints, show_ns, Components, Net,
};
use super::ScenarioError;
use crate::net::mahimahi::MahimahiTrace;
use crate::tcp::cc::CcConfig;
use crate::traffic::UDP_IP_HEADER_BYTES;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Default IP size of a generator's datagrams.
pub const DEFAULT_PACKET_BYTES: u64 = 1500;
/// Largest datagram: the Ethernet MTU.
pub const MAX_PACKET_BYTES: u64 = 1500;
/// PPBP defaults: H, per-burst rate and mean burst length (Ammar's ns-3 PPBP application, one ns-3 PPBP
/// variant: r = 1 Mb/s, T_on = 0.2 s, H = 0.7).
pub const PPBP_DEFAULT_HURST: f64 = 0.7;
pub const PPBP_DEFAULT_BURST_RATE_BPS: u64 = 1_000_000;
pub const PPBP_DEFAULT_MEAN_BURST_NS: u64 = 200_000_000;
/// On/off defaults: the Enhancing-TCP paper's 500 ms / 500 ms.
pub const ONOFF_DEFAULT_MEAN_NS: u64 = 500_000_000;
/// Web defaults: mean 100 KB, shape 1.2, at most 100 MB.
pub const WEB_DEFAULT_MEAN_SIZE_BYTES: u64 = 100_000;
pub const WEB_DEFAULT_SHAPE: f64 = 1.2;
pub const WEB_DEFAULT_MAX_SIZE_BYTES: u64 = 100_000_000;

const LINK_FORMS: &str = "\"A->B\" (node names), \"LINK:ab\" or \"LINK:ba\", a link name alone (both directions), or \"*\"";

/// Link directions named by `r`: the forms of `trace.queues` plus a bare link name.
fn link_dirs(r: &str, path: &str, net: &Net) -> Result<Vec<LinkDirRef>, ScenarioError> {
    let s = r.trim();
    if let Some(&link) = net.link_index.get(s) {
        return Ok(vec![
            LinkDirRef {
                link,
                reverse: false,
            },
            LinkDirRef {
                link,
                reverse: true,
            },
        ]);
    }
    if !(s == "*" || s.contains("->") || s.contains(':')) {
        return Err(err(
            path,
            format!("unknown link {s:?}: expected {LINK_FORMS}"),
        ));
    }
    resolve_dir_ref(s, path, net)
}

fn dir_name(net: &Net, d: LinkDirRef) -> String {
    let l = &net.links[d.link];
    let (a, b) = if d.reverse { (l.b, l.a) } else { (l.a, l.b) };
    format!("{}->{}", net.nodes[a].name, net.nodes[b].name)
}

/// Refuses a key that does not belong to the generator's kind.
fn only_for<T>(
    v: &Option<T>,
    path: String,
    key: &str,
    kinds: &str,
    kind: &str,
) -> Result<(), ScenarioError> {
    if v.is_some() {
        return Err(err(
            path,
            format!("`{key}` is only for kind {kinds} (this generator is \"{kind}\")"),
        ));
    }
    Ok(())
}

fn positive_finite(path: String, v: f64, what: &str) -> Result<f64, ScenarioError> {
    if !(v.is_finite() && v > 0.0) {
        return Err(err(
            path,
            format!("must be a positive number ({what}), got {v}"),
        ));
    }
    Ok(v)
}

impl Scenario {
    pub(super) fn resolve_traffic(
        &self,
        net: &Net,
        duration_ns: u64,
    ) -> Result<Vec<TrafficPlan>, ScenarioError> {
        let mut comps = Components::new(net.nodes.len(), &net.links);
        let mut names: HashSet<String> = HashSet::new();
        let default_cc = match &self.defaults.cc {
            Some(c) => c.0.clone(),
            None => CcConfig::default(),
        };
        let mut out = Vec::with_capacity(self.traffic.len());
        for (i, t) in self.traffic.iter().enumerate() {
            let p = format!("traffic[{i}]");
            let kind = match t.kind {
                TrafficKind::Ppbp => "ppbp",
                TrafficKind::Onoff => "onoff",
                TrafficKind::Cbr => "cbr",
                TrafficKind::Web => "web",
            };
            let at = |k: &str| format!("{p}.{k}");

            let name = t.name.clone().unwrap_or_else(|| format!("traffic{i}"));
            check_name(&name).map_err(|m| err(at("name"), m))?;
            if !names.insert(name.clone()) {
                return Err(err(at("name"), format!("duplicate traffic name {name:?}")));
            }
            let (src, dst) = resolve_endpoints(
                net,
                &mut comps,
                &p,
                ("src", "dst"),
                (&t.src, &t.dst),
                true,
                "a generator",
                "",
            )?;
            check_start_stop(
                &p,
                t.start.0,
                t.stop.map(|s| s.0),
                duration_ns,
                "a generator",
            )?;
            check_rate(&at("rate"), t.rate.0)?;

            check_kind_keys(t, &p, kind)?;

            let packet = t.packet.map_or(DEFAULT_PACKET_BYTES, |s| s.0);
            if !(UDP_IP_HEADER_BYTES as u64 + 1..=MAX_PACKET_BYTES).contains(&packet) {
                return Err(err(
                    at("packet"),
                    format!(
                        "{packet} bytes is out of range: an IP datagram of {} to {MAX_PACKET_BYTES} bytes ({UDP_IP_HEADER_BYTES} of them IPv4 and UDP headers)",
                        UDP_IP_HEADER_BYTES + 1
                    ),
                ));
            }

            let gen = match t.kind {
                TrafficKind::Ppbp => ppbp_plan(t, &p)?,
                TrafficKind::Onoff => {
                    let on = t.mean_on.map_or(ONOFF_DEFAULT_MEAN_NS, |d| d.0);
                    let off = t.mean_off.map_or(ONOFF_DEFAULT_MEAN_NS, |d| d.0);
                    for (k, v) in [("mean_on", on), ("mean_off", off)] {
                        if v == 0 {
                            return Err(err(at(k), "must be greater than zero"));
                        }
                        check_duration(&at(k), v)?;
                    }
                    GeneratorPlan::OnOff {
                        rate_bps: t.rate.0,
                        mean_on_ns: on,
                        mean_off_ns: off,
                    }
                }
                TrafficKind::Cbr => GeneratorPlan::Cbr { rate_bps: t.rate.0 },
                TrafficKind::Web => {
                    let mean = t.mean_size.map_or(WEB_DEFAULT_MEAN_SIZE_BYTES, |s| s.0);
                    if mean == 0 {
                        return Err(err(at("mean_size"), "must be greater than zero"));
                    }
                    let shape = t.size_shape.unwrap_or(WEB_DEFAULT_SHAPE);
                    if !(shape.is_finite() && shape > 0.0 && shape <= 10.0) {
                        return Err(err(
                            at("size_shape"),
                            format!("{shape} is out of range: a Pareto shape greater than 0 and at most 10"),
                        ));
                    }
                    let max = t.max_size.map_or(WEB_DEFAULT_MAX_SIZE_BYTES, |s| s.0);
                    if max <= mean || max > super::MAX_APP_BYTES {
                        return Err(err(
                            at("max_size"),
                            format!("{max} bytes must be more than mean_size ({mean} bytes) and at most 1PB"),
                        ));
                    }
                    // at most ~1 transfer per µs on average
                    if t.rate.0 as f64 / (8.0 * mean as f64) > 1e6 {
                        return Err(err(
                            at("rate"),
                            "more than a million transfers per second: use a larger mean_size or a smaller rate",
                        ));
                    }
                    let tcp = self.resolve_tcp(&t.tcp, &p)?;
                    let cc = match &t.cc {
                        Some(c) => c.0.clone(),
                        None => default_cc.clone(),
                    };
                    GeneratorPlan::Web {
                        mean_rate_bps: t.rate.0,
                        mean_size_bytes: mean,
                        size_shape: shape,
                        max_size_bytes: max,
                        cc,
                        tcp: Box::new(tcp),
                    }
                }
            };
            let closed_form =
                t.private_links == Some(super::spec_traffic::PrivateLinks::ClosedForm);
            if closed_form && matches!(gen, GeneratorPlan::Web { .. }) {
                return Err(err(
                    at("private_links"),
                    "only for datagram generators (ppbp, onoff, cbr): a web transfer's packets are TCP's",
                ));
            }
            out.push(TrafficPlan {
                name,
                src,
                dst,
                start_ns: t.start.0,
                stop_ns: t.stop.map(|s| s.0),
                packet_bytes: packet as u32,
                kind: gen,
                closed_form_private_links: closed_form,
            });
        }
        Ok(out)
    }

    pub(super) fn resolve_dynamics(
        &self,
        net: &Net,
        duration_ns: u64,
    ) -> Result<DynamicsPlan, ScenarioError> {
        let mut loss_events: Vec<LossEventPlan> = Vec::new();
        let mut owner: Vec<usize> = Vec::new(); // entry index of each event
        for (i, e) in self.loss_events.iter().enumerate() {
            let p = format!("loss_event[{i}]");
            let dirs = link_dirs(&e.link, &format!("{p}.link"), net)?;
            check_loss(&format!("{p}.loss"), e.loss.0)?;
            if e.start.0 >= duration_ns {
                return Err(err(
                    format!("{p}.start"),
                    format!(
                        "{} is not before the end of the run (duration = {})",
                        show_ns(e.start.0),
                        show_ns(duration_ns)
                    ),
                ));
            }
            if e.stop.0 <= e.start.0 {
                return Err(err(
                    format!("{p}.stop"),
                    format!(
                        "{} must be after start ({})",
                        show_ns(e.stop.0),
                        show_ns(e.start.0)
                    ),
                ));
            }
            check_duration(&format!("{p}.stop"), e.stop.0)?;
            for at in dirs {
                if let Some(k) = loss_events
                    .iter()
                    .position(|o| o.at == at && o.start_ns < e.stop.0 && e.start.0 < o.stop_ns)
                {
                    return Err(err(
                        p.clone(),
                        format!(
                            "overlaps loss_event[{}] on {}: events on one link direction must not overlap",
                            owner[k],
                            dir_name(net, at)
                        ),
                    ));
                }
                loss_events.push(LossEventPlan {
                    at,
                    start_ns: e.start.0,
                    stop_ns: e.stop.0,
                    loss: e.loss.0,
                });
                owner.push(i);
            }
        }

        let mut capacity: Vec<CapacityPlan> = Vec::new();
        // the capacity entry that gave each direction its schedule
        let mut cap_owner: HashMap<LinkDirRef, usize> = HashMap::new();
        for (i, c) in self.capacity.iter().enumerate() {
            let p = format!("capacity[{i}]");
            let dirs = link_dirs(&c.link, &format!("{p}.link"), net)?;
            let given = [c.steps.is_some(), c.mahimahi.is_some(), c.sabre.is_some()];
            if given.iter().filter(|&&g| g).count() > 1 {
                let key = if c.sabre.is_some() {
                    "sabre"
                } else {
                    "mahimahi"
                };
                return Err(err(
                    format!("{p}.{key}"),
                    "give only one of `steps`, `mahimahi` and `sabre`",
                ));
            }
            if let Some(file) = &c.sabre {
                if c.once.is_some() {
                    return Err(err(format!("{p}.once"), "only allowed with `mahimahi`"));
                }
                let path = std::path::Path::new(file);
                let full = match &self.base_dir {
                    Some(b) if path.is_relative() => b.join(path),
                    _ => path.to_path_buf(),
                };
                let periods =
                    crate::sabre::read_network(&full).map_err(|m| err(format!("{p}.sabre"), m))?;
                let steps = crate::sabre::steps(&periods, duration_ns)
                    .map_err(|m| err(format!("{p}.sabre"), m))?;
                for (k, &(_, bps)) in steps.iter().enumerate() {
                    check_rate(&format!("{p}.sabre (step {k})"), bps)?;
                }
                push_capacity(
                    &mut capacity,
                    &mut cap_owner,
                    &dirs,
                    ServicePlan::Steps(steps),
                    i,
                    &p,
                    net,
                )?;
                continue;
            }
            let service = match (&c.steps, &c.mahimahi) {
                (Some(_), Some(_)) => unreachable!("refused above"),
                (None, None) => {
                    return Err(err(
                        p.clone(),
                        "missing `steps` (a list of { at, rate }), `mahimahi` (a trace file) or `sabre` (a Sabre network.json)",
                    ))
                }
                (Some(steps), None) => {
                    if c.once.is_some() {
                        return Err(err(format!("{p}.once"), "only allowed with `mahimahi`"));
                    }
                    if steps.is_empty() {
                        return Err(err(
                            format!("{p}.steps"),
                            "must hold at least one step { at, rate }",
                        ));
                    }
                    let mut out = Vec::with_capacity(steps.len());
                    for (k, s) in steps.iter().enumerate() {
                        let sp = format!("{p}.steps[{k}]");
                        check_rate(&format!("{sp}.rate"), s.rate.0)?;
                        check_duration(&format!("{sp}.at"), s.at.0)?;
                        if let Some(&(prev, _)) = out.last() {
                            if s.at.0 <= prev {
                                return Err(err(
                                    format!("{sp}.at"),
                                    format!(
                                        "{} is not after the previous step ({}): steps must be in strictly increasing time",
                                        show_ns(s.at.0),
                                        show_ns(prev)
                                    ),
                                ));
                            }
                        }
                        out.push((s.at.0, s.rate.0));
                    }
                    ServicePlan::Steps(out)
                }
                (None, Some(file)) => {
                    let path = std::path::Path::new(file);
                    let full = match &self.base_dir {
                        Some(b) if path.is_relative() => b.join(path),
                        _ => path.to_path_buf(),
                    };
                    let trace = MahimahiTrace::read(&full, c.once.unwrap_or(false))
                        .map_err(|m| err(format!("{p}.mahimahi"), m))?;
                    ServicePlan::Mahimahi {
                        file: file.clone(),
                        trace: Arc::new(trace),
                    }
                }
            };
            push_capacity(&mut capacity, &mut cap_owner, &dirs, service, i, &p, net)?;
        }
        Ok(DynamicsPlan {
            loss_events,
            capacity,
        })
    }
}

/// Adds the schedule of `capacity[i]` (path `p`) to each of its link directions, refusing a
/// direction that already has one.
fn push_capacity(
    capacity: &mut Vec<CapacityPlan>,
    cap_owner: &mut HashMap<LinkDirRef, usize>,
    dirs: &[LinkDirRef],
    service: ServicePlan,
    i: usize,
    p: &str,
    net: &Net,
) -> Result<(), ScenarioError> {
    for &at in dirs {
        if let Some(k) = cap_owner.get(&at) {
            return Err(err(
                format!("{p}.link"),
                format!(
                    "{} already has a capacity schedule (capacity[{k}]); give one per link direction",
                    dir_name(net, at),
                ),
            ));
        }
        capacity.push(CapacityPlan {
            at,
            service: service.clone(),
        });
        cap_owner.insert(at, i);
    }
    Ok(())
}

/// A key of another kind of generator is refused, naming the kinds it belongs to.
fn check_kind_keys(t: &TrafficSpec, p: &str, kind: &str) -> Result<(), ScenarioError> {
    let at = |k: &str| format!("{p}.{k}");
    let ppbp = "\"ppbp\"";
    let onoff = "\"onoff\"";
    let web = "\"web\"";
    if t.kind != TrafficKind::Ppbp {
        only_for(&t.hurst, at("hurst"), "hurst", ppbp, kind)?;
        only_for(&t.burst_rate, at("burst_rate"), "burst_rate", ppbp, kind)?;
        only_for(
            &t.burst_arrivals,
            at("burst_arrivals"),
            "burst_arrivals",
            ppbp,
            kind,
        )?;
        only_for(&t.mean_burst, at("mean_burst"), "mean_burst", ppbp, kind)?;
    }
    if t.kind != TrafficKind::Onoff {
        only_for(&t.mean_on, at("mean_on"), "mean_on", onoff, kind)?;
        only_for(&t.mean_off, at("mean_off"), "mean_off", onoff, kind)?;
    }
    if t.kind != TrafficKind::Web {
        only_for(&t.mean_size, at("mean_size"), "mean_size", web, kind)?;
        only_for(&t.size_shape, at("size_shape"), "size_shape", web, kind)?;
        only_for(&t.max_size, at("max_size"), "max_size", web, kind)?;
        only_for(&t.cc, at("cc"), "cc", web, kind)?;
        if !t.tcp.is_empty() {
            return Err(err(
                at("tcp"),
                format!("`tcp` is only for kind \"web\" (this generator is \"{kind}\")"),
            ));
        }
    } else {
        only_for(
            &t.packet,
            at("packet"),
            "packet",
            "\"ppbp\", \"onoff\" and \"cbr\" (web packets are TCP's)",
            kind,
        )?;
    }
    Ok(())
}

/// A PPBP generator's parameters: H in (0.5, 1), the burst rate, and either the burst
/// arrival rate or the mean burst length (each determines the other).
fn ppbp_plan(t: &TrafficSpec, p: &str) -> Result<GeneratorPlan, ScenarioError> {
    let at = |k: &str| format!("{p}.{k}");
    let hurst = t.hurst.unwrap_or(PPBP_DEFAULT_HURST);
    if !(hurst > 0.5 && hurst < 1.0) {
        return Err(err(
            at("hurst"),
            format!("{hurst} is out of range: the Hurst parameter must be strictly between 0.5 and 1 (burst lengths are Pareto with shape 3 − 2H, which must lie in (1, 2))"),
        ));
    }
    let burst_rate = t.burst_rate.map_or(PPBP_DEFAULT_BURST_RATE_BPS, |r| r.0);
    check_rate(&at("burst_rate"), burst_rate)?;
    let mean = t.rate.0 as f64;
    let burst_arrivals = match (t.burst_arrivals, t.mean_burst) {
        (Some(_), Some(_)) => {
            return Err(err(
                at("mean_burst"),
                "give either `burst_arrivals` or `mean_burst`, not both (each determines the other through rate = burst_arrivals × mean_burst × burst_rate)",
            ))
        }
        (Some(a), None) => positive_finite(at("burst_arrivals"), a, "bursts per second")?,
        (None, m) => {
            let m_ns = m.map_or(PPBP_DEFAULT_MEAN_BURST_NS, |d| d.0);
            if m_ns == 0 {
                return Err(err(at("mean_burst"), "must be greater than zero"));
            }
            check_duration(&at("mean_burst"), m_ns)?;
            mean / (burst_rate as f64 * m_ns as f64 / 1e9)
        }
    };
    let mean_burst_s = mean / (burst_arrivals * burst_rate as f64);
    if !(mean_burst_s.is_finite() && mean_burst_s > 1e-6 && mean_burst_s <= 86_400.0) {
        return Err(err(
            p.to_string(),
            format!("the mean burst length rate / (burst_arrivals × burst_rate) = {mean_burst_s} s is out of range: it must be between 1 µs and 1 day"),
        ));
    }
    if mean_burst_s * burst_arrivals > 1e6 {
        return Err(err(
            at("burst_rate"),
            format!("{:.0} bursts active on average is too many (at most 1000000): use a larger burst_rate", mean_burst_s * burst_arrivals),
        ));
    }
    Ok(GeneratorPlan::Ppbp {
        mean_rate_bps: t.rate.0,
        hurst,
        burst_rate_bps: burst_rate,
        burst_arrivals_per_s: burst_arrivals,
        mean_burst_ns: (mean_burst_s * 1e9).round() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::super::plan_from_toml;
    use super::*;

    fn ppbp(extra: &str) -> GeneratorPlan {
        let text = format!(
            "duration = \"10s\"\n[dumbbell]\npairs = 1\nbottleneck_rate = \"8Mbps\"\n\
             [[traffic]]\nkind = \"ppbp\"\nsrc = \"left0\"\ndst = \"right0\"\nrate = \"40Mbps\"\n{extra}"
        );
        plan_from_toml(&text).unwrap().traffic[0].kind.clone()
    }

    #[test]
    fn ppbp_burst_parameters_determine_each_other() {
        // defaults: 1 Mbps bursts of 200 ms → 200 bursts/s for 40 Mbps
        let GeneratorPlan::Ppbp {
            burst_arrivals_per_s,
            mean_burst_ns,
            hurst,
            ..
        } = ppbp("")
        else {
            panic!()
        };
        assert!((burst_arrivals_per_s - 200.0).abs() < 1e-9);
        assert_eq!((mean_burst_ns, hurst), (200_000_000, 0.7));
        // 100 bursts/s of 2 Mbps: T_on = 40e6 / (100 · 2e6) = 200 ms
        let GeneratorPlan::Ppbp { mean_burst_ns, .. } =
            ppbp("burst_arrivals = 100.0\nburst_rate = \"2Mbps\"\n")
        else {
            panic!()
        };
        assert_eq!(mean_burst_ns, 200_000_000);
        let g = ppbp("mean_burst = \"50ms\"\nhurst = 0.9\n");
        assert_eq!(g.mean_rate_bps(), 40e6);
        let GeneratorPlan::Ppbp {
            burst_arrivals_per_s,
            ..
        } = g
        else {
            panic!()
        };
        assert!((burst_arrivals_per_s - 800.0).abs() < 1e-9);
    }

    #[test]
    fn a_bare_link_name_means_both_directions() {
        let text = "duration = \"10s\"\n[dumbbell]\npairs = 1\nbottleneck_rate = \"8Mbps\"\n\
                    [[loss_event]]\nlink = \"bottleneck\"\nloss = 0.5\nstart = \"1s\"\nstop = \"2s\"\n\
                    [[capacity]]\nlink = \"r2->r1\"\nsteps = [{ at = \"1s\", rate = \"1Mbps\" }]\n";
        let p = plan_from_toml(text).unwrap();
        let dirs: Vec<bool> = p
            .dynamics
            .loss_events
            .iter()
            .map(|e| e.at.reverse)
            .collect();
        assert_eq!(dirs, [false, true]);
        assert_eq!(p.dynamics.capacity.len(), 1);
        assert!(p.dynamics.capacity[0].at.reverse);
    }
}
