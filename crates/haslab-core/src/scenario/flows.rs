//! Resolution of the scenario's `[[flow]]` tables into [`FlowPlan`]s: `count` replication,
//! `[defaults]` merged under each flow, named transports, endpoints, applications and their
//! limits. Every error names the field as the file spells it (`flow[2].tcp.min_rto`).

use super::plan::*;
use super::spec::*;
use super::validate::*;
use super::ScenarioError;
use crate::tcp::cc::CcConfig;
use std::collections::HashMap;

impl Scenario {
    pub(super) fn resolve_flows(
        &self,
        net: &Net,
        duration_ns: u64,
    ) -> Result<Vec<FlowPlan>, ScenarioError> {
        // Bound the expansion before doing any of it.
        let mut total: u64 = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.count == 0 {
                return Err(err(format!("flow[{i}].count"), "must be at least 1"));
            }
            total = total
                .checked_add(f.count)
                .filter(|t| *t <= MAX_FLOWS)
                .ok_or_else(|| {
                    err(
                        format!("flow[{i}].count"),
                        format!("too many flows: at most {MAX_FLOWS} in all"),
                    )
                })?;
        }

        let default_cc = match &self.defaults.cc {
            Some(c) => c.0.clone(),
            None => CcConfig::default(),
        };
        if let Err((field, message)) = default_cc.check() {
            return Err(err(format!("defaults.cc.{field}"), message));
        }
        let mut comps = Components::new(net.nodes.len(), &net.links);
        let mut flows: Vec<FlowPlan> = Vec::with_capacity(total as usize);
        let mut names: HashMap<String, usize> = HashMap::new();

        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("flow[{i}]");

            // Application.
            check_start_stop(&p, f.start.0, f.stop.map(|s| s.0), duration_ns, "a flow")?;
            let app = app_plan(f, &p, duration_ns)?;

            // Transport.
            let (t_cc, t_tcp) = resolve_transport(f.transport.as_deref(), &p)?;
            let tcp = self.resolve_tcp_over(&f.tcp, &t_tcp, &p)?;
            let cc = match (&f.cc, t_cc) {
                (Some(c), _) => c.0.clone(),
                (None, Some(c)) => c,
                (None, None) => default_cc.clone(),
            };
            if let Err((field, message)) = cc.check() {
                return Err(err(format!("{p}.cc.{field}"), message));
            }

            // Replication.
            if f.count > 1 {
                if let Some(n) = &f.name {
                    if !n.contains("{i}") {
                        return Err(err(
                            format!("{p}.name"),
                            format!(
                                "with count = {} the name must contain \"{{i}}\" (replaced by 0..{}), e.g. \"{n}{{i}}\"",
                                f.count,
                                f.count - 1
                            ),
                        ));
                    }
                }
            }
            for k in 0..f.count {
                let ks = k.to_string();
                let subst = |s: &str| s.replace("{i}", &ks);
                let copy = if f.count > 1 {
                    format!(" (copy i = {k})")
                } else {
                    String::new()
                };
                let name = match &f.name {
                    Some(n) => subst(n),
                    None => format!("flow{}", flows.len()),
                };
                check_name(&name).map_err(|m| err(format!("{p}.name"), format!("{m}{copy}")))?;
                let src_name = subst(&f.src);
                let dst_name = subst(&f.dst);
                let (src, dst) = resolve_endpoints(
                    net,
                    &mut comps,
                    &p,
                    ("src", "dst"),
                    (&src_name, &dst_name),
                    true,
                    "a flow",
                    &copy,
                )?;
                if let Some(prev) = names.get(&name) {
                    return Err(err(
                        format!("{p}.name"),
                        format!("duplicate flow name {name:?} (already used by flow entry {prev}){copy}"),
                    ));
                }
                names.insert(name.clone(), i);
                flows.push(FlowPlan {
                    name,
                    src,
                    dst,
                    app: app.clone(),
                    tcp: tcp.clone(),
                    cc: cc.clone(),
                    transport: f.transport.clone(),
                });
            }
        }
        Ok(flows)
    }
}

/// The flow's application (`app = "bulk"` or `"chunks"`) and the keys each accepts; at most
/// 1 PB written over the run.
fn app_plan(f: &FlowSpec, p: &str, duration_ns: u64) -> Result<AppPlan, ScenarioError> {
    let stop_ns = f.stop.map(|s| s.0);
    Ok(match f.app {
        AppKind::Bulk => {
            if f.chunk.is_some() {
                return Err(err(
                    format!("{p}.chunk"),
                    "only allowed with app = \"chunks\" (this flow is \"bulk\")",
                ));
            }
            if f.interval.is_some() {
                return Err(err(
                    format!("{p}.interval"),
                    "only allowed with app = \"chunks\" (this flow is \"bulk\")",
                ));
            }
            if let Some(b) = f.bytes {
                if b.0 == 0 {
                    return Err(err(
                        format!("{p}.bytes"),
                        "must be greater than zero (omit it to send without end)",
                    ));
                }
                if b.0 > MAX_APP_BYTES {
                    return Err(err(format!("{p}.bytes"), "must be at most 1PB"));
                }
            }
            AppPlan::Bulk {
                start_ns: f.start.0,
                stop_ns,
                bytes: f.bytes.map(|b| b.0),
            }
        }
        AppKind::Chunks => {
            if f.bytes.is_some() {
                return Err(err(
                    format!("{p}.bytes"),
                    "only allowed with app = \"bulk\"; a \"chunks\" flow uses `chunk` and `interval`",
                ));
            }
            let chunk = f.chunk.ok_or_else(|| {
                err(
                    format!("{p}.chunk"),
                    "required with app = \"chunks\": bytes per chunk, e.g. \"1MB\"",
                )
            })?;
            if chunk.0 == 0 {
                return Err(err(format!("{p}.chunk"), "must be greater than zero"));
            }
            let interval = f.interval.ok_or_else(|| {
                err(
                    format!("{p}.interval"),
                    "required with app = \"chunks\": time between chunks, e.g. \"2s\"",
                )
            })?;
            if interval.0 == 0 {
                return Err(err(format!("{p}.interval"), "must be greater than zero"));
            }
            check_duration(&format!("{p}.interval"), interval.0)?;
            let end = stop_ns.unwrap_or(duration_ns).min(duration_ns);
            let chunks = (end.saturating_sub(f.start.0) / interval.0).saturating_add(1);
            if chunk
                .0
                .checked_mul(chunks)
                .is_none_or(|t| t > MAX_APP_BYTES)
            {
                return Err(err(
                    format!("{p}.chunk"),
                    format!(
                        "{chunks} chunks of {} bytes would exceed 1PB over the run; \
                         use a smaller chunk or a longer interval",
                        chunk.0
                    ),
                ));
            }
            AppPlan::Chunks {
                start_ns: f.start.0,
                stop_ns,
                chunk_bytes: chunk.0,
                interval_ns: interval.0,
            }
        }
    })
}
