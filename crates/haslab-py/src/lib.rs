//! `haslab._core`: the thin Python binding of haslab-core.
//!
//! Everything user-facing (path handling, DataFrames, Parquet, progress bars, the CLI) lives in
//! the pure-Python package `haslab`; this module only parses scenarios, steps a [`World`] with
//! the GIL released, and hands the result over: the summary as a JSON string and each trace
//! table as a dict of NumPy arrays that take ownership of the Rust vectors (no copy).

use std::path::PathBuf;
use std::sync::Mutex;

use haslab_core::metrics::{ColumnData, SimResult};
use haslab_core::scenario::{self as scn};
use haslab_core::scenario::{AppPlan, ConnectionPolicy, LinkDirRef, Plan, QueueLimit, QueuePlan};
use haslab_core::world::{RunOptions, World};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{json, Value};
use std::path::Path;

/// Parses a scenario; `fmt` is `"toml"` or `"json"`; relative file paths in it (a player's MPD)
/// are taken from `base_dir` when given. Errors become `ValueError("path: message")`.
fn parse_plan(text: &str, fmt: &str, base_dir: Option<&Path>) -> PyResult<Plan> {
    let parsed = match fmt {
        "toml" => scn::plan_from_toml_in(text, base_dir),
        "json" => scn::plan_from_json_in(text, base_dir),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown scenario format {other:?}: expected \"toml\" or \"json\""
            )))
        }
    };
    parsed.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// `"from->to"` for one link direction.
fn dir_name(plan: &Plan, d: LinkDirRef) -> String {
    let link = &plan.links[d.link];
    let (from, to) = if d.reverse {
        (link.b, link.a)
    } else {
        (link.a, link.b)
    };
    format!("{}->{}", plan.nodes[from].name, plan.nodes[to].name)
}

fn queue_limit(q: &QueuePlan) -> Value {
    match q {
        QueuePlan::DropTail {
            limit: QueueLimit::Packets(p),
        } => json!({"kind": "droptail", "limit_packets": p}),
        QueuePlan::DropTail {
            limit: QueueLimit::Bytes(b),
        } => json!({"kind": "droptail", "limit_bytes": b}),
    }
}

/// A JSON description of a resolved plan: what `validate` returns and `Simulation.plan` holds.
fn describe(plan: &Plan) -> Value {
    let links: Vec<Value> = plan
        .links
        .iter()
        .enumerate()
        .flat_map(|(i, l)| {
            [(false, &l.ab), (true, &l.ba)].map(|(reverse, d)| {
                json!({
                    "name": dir_name(plan, LinkDirRef { link: i, reverse }),
                    "link": l.name,
                    "rate_bps": d.rate_bps,
                    "delay_ns": d.delay_ns,
                    "loss": d.loss,
                    "queue": queue_limit(&d.queue),
                })
            })
        })
        .collect();
    let flows: Vec<Value> = plan
        .flows
        .iter()
        .map(|f| {
            let app = match &f.app {
                AppPlan::Bulk {
                    start_ns,
                    stop_ns,
                    bytes,
                } => json!({"kind": "bulk", "start_ns": start_ns, "stop_ns": stop_ns, "bytes": bytes}),
                AppPlan::Chunks {
                    start_ns,
                    stop_ns,
                    chunk_bytes,
                    interval_ns,
                } => json!({"kind": "chunks", "start_ns": start_ns, "stop_ns": stop_ns,
                            "chunk_bytes": chunk_bytes, "interval_ns": interval_ns}),
            };
            json!({
                "name": f.name,
                "src": plan.nodes[f.src].name,
                "dst": plan.nodes[f.dst].name,
                "cc": f.cc.name(),
                "mss": f.tcp.mss,
                "app": app,
                // the resolved options, for tools that reproduce the flow elsewhere (live mode)
                "tcp": serde_json::to_value(&f.tcp).unwrap_or(Value::Null),
                "cc_config": serde_json::to_value(&f.cc).unwrap_or(Value::Null),
            })
        })
        .collect();
    let players: Vec<Value> = plan
        .players
        .iter()
        .map(|p| {
            let connection = match p.connection {
                ConnectionPolicy::Persistent => json!({"kind": "persistent"}),
                ConnectionPolicy::PerRequest => json!({"kind": "per-request"}),
                ConnectionPolicy::Parallel(n) => json!({"kind": "parallel", "connections": n}),
                ConnectionPolicy::Renew(k) => json!({"kind": "renew", "renew_every": k}),
            };
            json!({
                "name": p.name,
                "client": plan.nodes[p.client].name,
                "server": plan.nodes[p.server].name,
                "abr": p.abr.name(),
                "video": p.video.name,
                "bitrates_bps": p.video.bitrates_bps,
                "segments": p.video.segments(),
                "segment_ns": p.video.segment_ns(),
                "buffer_ns": p.buffer_ns,
                "startup_ns": p.startup_ns,
                "refill_ns": p.refill_low_ns,
                "connection": connection,
                "start_ns": p.start_ns,
                "stop_ns": p.stop_ns,
                "cc": p.cc.name(),
            })
        })
        .collect();
    let t = &plan.trace;
    json!({
        "seed": plan.seed,
        "duration_ns": plan.duration_ns,
        "nodes": plan.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>(),
        "links": links,
        "flows": flows,
        "players": players,
        "trace": {
            "cwnd": t.cwnd,
            "cwnd_interval_ns": t.cwnd_interval_ns,
            "queues": t.queues.iter().map(|&d| dir_name(plan, d)).collect::<Vec<_>>(),
            "queue_interval_ns": t.queue_interval_ns,
            "goodput_window_ns": t.goodput_window_ns,
            "pcaps": t.pcaps.iter().map(|p| json!({
                "at": dir_name(plan, p.at), "file": p.file, "snaplen": p.snaplen,
            })).collect::<Vec<_>>(),
        },
    })
}

/// Converts a JSON value into the equivalent Python object.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(to_py(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// validate(text, fmt="toml", base_dir=None) -> dict
///
/// Parses and checks a scenario and returns a description of the resolved plan (seed,
/// duration, nodes, link directions, flows, players, traces). Relative paths in the scenario
/// (MPD files) are taken from base_dir (default: the working directory). Raises ValueError
/// with the message "field.path: what is wrong" when the scenario is invalid.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", base_dir = None))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    fmt: &str,
    base_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let plan = parse_plan(text, fmt, base_dir.as_deref())?;
    to_py(py, &describe(&plan))
}

/// schema() -> str
///
/// The JSON Schema of scenario files.
#[pyfunction]
fn schema() -> String {
    scn::json_schema()
}

/// catalog() -> str
///
/// JSON: every congestion-control algorithm (name, aliases, source, defaults, parameters) and
/// every `[flow.tcp]` option (name, default, accepts, description).
#[pyfunction]
fn catalog() -> String {
    haslab_core::tcp::catalog::catalog_json().to_string()
}

/// Simulation(text, fmt="toml", out_dir=None, pcap=True, base_dir=None)
///
/// A running simulation of one scenario. Advance it with run_until(t_ns) (the GIL is released
/// while it runs), then call finish() once. pcap files requested by the scenario are written
/// into out_dir (and skipped when out_dir is None); pcap=False drops them from the plan.
#[pyclass(module = "haslab._core")]
struct Simulation {
    /// None once finished. The mutex makes the class Sync (a World is only Send) and keeps two
    /// Python threads from stepping the same simulation at once.
    world: Mutex<Option<World>>,
    duration_ns: u64,
    plan: Value,
}

impl Simulation {
    fn with_world<T>(&self, f: impl FnOnce(&mut World) -> T) -> PyResult<T> {
        let mut guard = self
            .world
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the simulation panicked earlier"))?;
        match guard.as_mut() {
            Some(w) => Ok(f(w)),
            None => Err(PyRuntimeError::new_err(
                "the simulation has already finished",
            )),
        }
    }
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (text, fmt = "toml", out_dir = None, pcap = true, base_dir = None))]
    fn new(
        text: &str,
        fmt: &str,
        out_dir: Option<PathBuf>,
        pcap: bool,
        base_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let mut plan = parse_plan(text, fmt, base_dir.as_deref())?;
        if !pcap {
            plan.trace.pcaps.clear();
        }
        let world = World::new(&plan, &RunOptions { out_dir }).map_err(PyValueError::new_err)?;
        Ok(Simulation {
            duration_ns: plan.duration_ns,
            plan: describe(&plan),
            world: Mutex::new(Some(world)),
        })
    }

    /// Advances simulated time to t_ns (no-op past the end), without holding the GIL.
    fn run_until(&self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        py.detach(|| self.with_world(|w| w.run_until(t_ns)))
    }

    /// Current simulated time, ns.
    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        self.with_world(|w| w.now_ns())
    }

    /// Scenario duration, ns.
    #[getter]
    fn duration_ns(&self) -> u64 {
        self.duration_ns
    }

    /// Whether finish() has been called.
    #[getter]
    fn finished(&self) -> bool {
        self.world.lock().map(|g| g.is_none()).unwrap_or(true)
    }

    /// The description of the resolved plan (as returned by validate()).
    #[getter]
    fn plan<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.plan)
    }

    /// Runs to the end if needed, flushes pcap files and returns
    /// {"summary": JSON str, "tables": {name: {column: numpy array}}}.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let world = self
            .world
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the simulation panicked earlier"))?
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the simulation has already finished"))?;
        let result: SimResult = py.detach(|| world.finish()).map_err(PyOSError::new_err)?;
        let summary = serde_json::to_string(&result)
            .map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the summary: {e}")))?;
        let tables = PyDict::new(py);
        for table in result.tables {
            let cols = PyDict::new(py);
            for (name, data) in table.columns {
                let arr = match data {
                    ColumnData::U64(v) => v.into_pyarray(py).into_any(),
                    ColumnData::U32(v) => v.into_pyarray(py).into_any(),
                    ColumnData::F64(v) => v.into_pyarray(py).into_any(),
                };
                cols.set_item(name, arr)?;
            }
            tables.set_item(table.name, cols)?;
        }
        let out = PyDict::new(py);
        out.set_item("summary", summary)?;
        out.set_item("tables", tables)?;
        Ok(out)
    }
}

/// haslab._core: the compiled simulator. Use the `haslab` package instead.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_class::<Simulation>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
