//! `haslab._core`: the thin Python binding of haslab-core.
//!
//! Everything user-facing (path handling, DataFrames, progress bars, the CLI) lives in the
//! pure-Python package `haslab`; this module only parses scenarios, steps a [`World`] with the
//! GIL released, and hands the result over: the summary as a JSON string and each trace table
//! as a dict of NumPy arrays that take ownership of the Rust vectors (no copy), or written as
//! Parquet files (`parquet_out`, for `haslab run`, which then needs neither NumPy nor pyarrow).

mod parquet_out;

use std::path::PathBuf;
use std::sync::Mutex;

use haslab_core::has::driver::{Next, PlayerDriver};
use haslab_core::metrics::{ColumnData, SimResult};
use haslab_core::scenario::{self as scn};
use haslab_core::scenario::{Describer, Plan, FLOW_OPTION_KEYS};
use haslab_core::world::{RunOptions, World};
use numpy::IntoPyArray;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

/// Parses a scenario; `fmt` is `"toml"` or `"json"`; relative file names in it (Mahimahi
/// traces) are resolved against `base_dir`. Errors become `ValueError("path: message")`.
fn parse_plan(text: &str, fmt: &str, base_dir: Option<&std::path::Path>) -> PyResult<Plan> {
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
            // keys are interned: a description of 100,000 flows repeats the same few dozen keys
            // in every flow (one string object each instead of one per dict)
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(PyString::intern(py, k), to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// A fresh copy of a converted JSON value: new dicts and lists, the same (immutable) strings,
/// numbers, booleans and None.
fn fresh_copy<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(d) = x.cast::<PyDict>() {
        let out = d.copy()?;
        for (k, v) in d.iter() {
            if v.is_instance_of::<PyDict>() || v.is_instance_of::<PyList>() {
                out.set_item(k, fresh_copy(py, &v)?)?;
            }
        }
        Ok(out.into_any())
    } else if let Ok(l) = x.cast::<PyList>() {
        let out = PyList::empty(py);
        for v in l.iter() {
            out.append(fresh_copy(py, &v)?)?;
        }
        Ok(out.into_any())
    } else {
        Ok(x.clone())
    }
}

/// The description of a plan as Python objects (the dict `describe(plan)` converts to), built
/// part by part: each link direction's and each flow's JSON value is converted and dropped
/// before the next is built, and a flow whose `tcp` or `cc_config` equals the previous flow's
/// gets a fresh copy of the dict made for that one (its own dict, sharing the immutable values)
/// instead of a conversion. Python's cyclic garbage collector is paused meanwhile: the new
/// objects hold no cycles, and collections while millions of them are made would take a third
/// of the time.
fn describe_to_py<'py>(py: Python<'py>, plan: &Plan) -> PyResult<Bound<'py, PyAny>> {
    let gc = py.import("gc")?;
    let enabled = gc.call_method0("isenabled")?.is_truthy()?;
    if enabled {
        gc.call_method0("disable")?;
    }
    let out = describe_parts_to_py(py, plan);
    if enabled {
        gc.call_method0("enable")?;
    }
    out
}

fn describe_parts_to_py<'py>(py: Python<'py>, plan: &Plan) -> PyResult<Bound<'py, PyAny>> {
    let mut d = Describer::new(plan);
    let Value::Object(top) = d.skeleton() else {
        unreachable!("a plan is described as an object")
    };
    let out = PyDict::new(py);
    for (k, v) in &top {
        let x = match k.as_str() {
            "links" => {
                let list = PyList::empty(py);
                for at in d.link_dirs() {
                    list.append(to_py(py, &d.link_dir(at))?)?;
                }
                list.into_any()
            }
            "flows" => {
                let list = PyList::empty(py);
                let mut last: [Option<Bound<'py, PyAny>>; 2] = [None, None];
                for f in &plan.flows {
                    let (Value::Object(flow), same) = d.flow_sharing(f) else {
                        unreachable!("a flow is described as an object")
                    };
                    let fd = PyDict::new(py);
                    for (fk, fv) in &flow {
                        let x = match FLOW_OPTION_KEYS.iter().position(|o| o == fk) {
                            Some(i) => match (&last[i], same[i]) {
                                (Some(obj), true) => fresh_copy(py, obj)?,
                                _ => {
                                    let obj = to_py(py, fv)?;
                                    last[i] = Some(obj.clone());
                                    obj
                                }
                            },
                            None => to_py(py, fv)?,
                        };
                        fd.set_item(PyString::intern(py, fk), x)?;
                    }
                    list.append(fd)?;
                }
                list.into_any()
            }
            _ => to_py(py, v)?,
        };
        out.set_item(PyString::intern(py, k), x)?;
    }
    Ok(out.into_any())
}

/// validate(text, fmt="toml", base_dir=None) -> dict
///
/// Parses and checks a scenario and returns a description of the resolved plan (seed,
/// duration, nodes, link directions with queues, flows, players, traffic, loss events, the
/// preset and its player slots, paths with their RTT and BDP, traces). Relative file names
/// (MPD files, Mahimahi traces) are resolved against base_dir (default: the working
/// directory). Raises ValueError with the message "field.path: what is wrong" when the
/// scenario is invalid.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", base_dir = None))]
fn validate<'py>(
    py: Python<'py>,
    text: &str,
    fmt: &str,
    base_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let plan = parse_plan(text, fmt, base_dir.as_deref())?;
    describe_to_py(py, &plan)
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
    haslab_core::scenario::catalog::catalog_json().to_string()
}

/// Simulation(text, fmt="toml", out_dir=None, pcap=True, base_dir=None)
///
/// A running simulation of one scenario. Advance it with run_until(t_ns) (the GIL is released
/// while it runs), then call finish() once. pcap files requested by the scenario are written
/// into out_dir (and skipped when out_dir is None); pcap=False drops them from the plan.
/// Relative file names in the scenario are resolved against base_dir.
#[pyclass(module = "haslab._core")]
struct Simulation {
    /// None once finished. The mutex makes the class Sync (a World is only Send) and keeps two
    /// Python threads from stepping the same simulation at once.
    world: Mutex<Option<World>>,
    duration_ns: u64,
    /// The resolved plan, described when `plan` is read: its description (a JSON value per flow
    /// with the flow's TCP and congestion-control options) is neither built nor held while the
    /// simulation is set up and runs.
    plan: Plan,
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
        let world = World::new(
            &plan,
            &RunOptions {
                out_dir,
                // a diagnostic switch: both forms of the links give the same run (net::link)
                event_form_links: std::env::var_os("HASLAB_EVENT_FORM_LINKS")
                    .is_some_and(|v| v == "1"),
            },
        )
        .map_err(PyValueError::new_err)?;
        Ok(Simulation {
            duration_ns: plan.duration_ns,
            plan,
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

    /// The description of the resolved plan (as returned by validate()), built on each read.
    #[getter]
    fn plan<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        describe_to_py(py, &self.plan)
    }

    /// Runs to the end if needed, flushes pcap files and returns
    /// {"summary": JSON str, "tables": {name: {column: numpy array}}, "written": [file name]}.
    /// With traces_dir, every trace is written there as `<name>.parquet` (the files
    /// `Result.save` writes; "written" names them, in name order); tables=False leaves
    /// "tables" empty (and NumPy unimported).
    #[pyo3(signature = (traces_dir = None, tables = true))]
    fn finish<'py>(
        &self,
        py: Python<'py>,
        traces_dir: Option<PathBuf>,
        tables: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let world = self
            .world
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the simulation panicked earlier"))?
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the simulation has already finished"))?;
        let result: SimResult = py.detach(|| world.finish()).map_err(PyOSError::new_err)?;
        let summary = serde_json::to_string(&result)
            .map_err(|e| PyRuntimeError::new_err(format!("cannot serialise the summary: {e}")))?;
        let written = match traces_dir {
            Some(dir) => py
                .detach(|| parquet_out::write_traces(&result, &dir))
                .map_err(PyOSError::new_err)?,
            None => Vec::new(),
        };
        let out = PyDict::new(py);
        out.set_item("summary", summary)?;
        if tables {
            out.set_item("tables", tables_to_py(py, result.tables)?)?;
        } else {
            out.set_item("tables", PyDict::new(py))?;
        }
        out.set_item("written", written)?;
        Ok(out)
    }
}

/// LivePlayers(text, fmt="toml", base_dir=None)
///
/// The scenario's HAS players without a network, for live mode's real HTTP client: each one is
/// the simulator's player logic, playback model and scheduler (haslab_core::has::driver). Times
/// are ns on the scenario's clock. slots(i) → connection slots; open_at_start(i) → slots to
/// open before the first request; abandons(i) → whether to report progress (every
/// PROGRESS_EVERY_NS); next(i, now) → ("request", segment, level, slot, new_connection) |
/// ("wait", t) | ("idle",) | ("done",); first_byte(i, slot, segment, level, now);
/// progress(i, slot, segment, level, bytes_loaded, now, flow) → True when the player abandons
/// the request (close its connection, ask next at once); completed(i, slot, segment, level,
/// now, flow, first_byte_ns=None) → None | (close, close_all, earliest next request time);
/// sample(i, now); connection_opened(i); stop(i, now); video(i) → dict (ladder, durations, sizes);
/// finish(end_ns, paths) → {"players": JSON str, "has": JSON str, "tables": {...}} with the same
/// metrics and tables as a simulation (paths[i] = (link direction name, rate) or None).
#[pyclass(module = "haslab._core")]
struct LivePlayers {
    drivers: Mutex<Vec<Option<PlayerDriver>>>,
    node_names: Vec<String>,
}

impl LivePlayers {
    fn with<T>(&self, i: usize, f: impl FnOnce(&mut PlayerDriver) -> T) -> PyResult<T> {
        let mut g = self
            .drivers
            .lock()
            .map_err(|_| PyRuntimeError::new_err("a player panicked earlier"))?;
        match g.get_mut(i) {
            Some(Some(d)) => Ok(f(d)),
            Some(None) => Err(PyRuntimeError::new_err("the players have finished")),
            None => Err(PyValueError::new_err(format!("no player {i}"))),
        }
    }
}

#[pymethods]
impl LivePlayers {
    #[new]
    #[pyo3(signature = (text, fmt = "toml", base_dir = None))]
    fn new(text: &str, fmt: &str, base_dir: Option<PathBuf>) -> PyResult<Self> {
        let plan = parse_plan(text, fmt, base_dir.as_deref())?;
        let drivers = plan
            .players
            .iter()
            .map(|p| Some(PlayerDriver::new(std::sync::Arc::new(p.clone()), plan.seed)))
            .collect();
        Ok(LivePlayers {
            drivers: Mutex::new(drivers),
            node_names: plan.nodes.iter().map(|n| n.name.clone()).collect(),
        })
    }

    fn __len__(&self) -> usize {
        self.drivers.lock().map(|g| g.len()).unwrap_or(0)
    }

    /// Connection slots of player i (N for parallel/rotate, else 1).
    fn slots(&self, i: usize) -> PyResult<usize> {
        self.with(i, |d| d.slots())
    }

    /// The slots whose connections player i opens before its first request.
    fn open_at_start(&self, i: usize) -> PyResult<Vec<usize>> {
        self.with(i, |d| d.open_at_start())
    }

    /// Whether player i abandons requests (then report progress every PROGRESS_EVERY_NS).
    fn abandons(&self, i: usize) -> PyResult<bool> {
        self.with(i, |d| d.abandons())
    }

    /// The next step of player i at now_ns.
    fn next<'py>(&self, py: Python<'py>, i: usize, now_ns: u64) -> PyResult<Bound<'py, PyAny>> {
        let n = self.with(i, |d| d.next(now_ns))?;
        Ok(match n {
            Next::Request {
                segment,
                level,
                slot,
                new_connection,
            } => ("request", segment, level, slot, new_connection)
                .into_pyobject(py)?
                .into_any(),
            Next::WaitUntil(t) => ("wait", t).into_pyobject(py)?.into_any(),
            Next::Idle => ("idle",).into_pyobject(py)?.into_any(),
            Next::Done => ("done",).into_pyobject(py)?.into_any(),
        })
    }

    /// The first byte of the response to (segment, level) on slot arrived at now_ns.
    fn first_byte(
        &self,
        i: usize,
        slot: usize,
        segment: usize,
        level: usize,
        now_ns: u64,
    ) -> PyResult<()> {
        self.with(i, |d| d.first_byte(slot, segment, level, now_ns))
    }

    /// bytes_loaded media bytes of the response to (segment, level) on slot are in at now_ns:
    /// True when player i abandons the request.
    #[allow(clippy::too_many_arguments)]
    fn progress(
        &self,
        i: usize,
        slot: usize,
        segment: usize,
        level: usize,
        bytes_loaded: u64,
        now_ns: u64,
        flow: u32,
    ) -> PyResult<bool> {
        self.with(i, |d| {
            d.progress(slot, segment, level, bytes_loaded, now_ns, flow)
        })
    }

    /// The response to (segment, level) on slot arrived whole at now_ns over flow `flow`, its
    /// first byte at first_byte_ns (None: as reported by first_byte, else now_ns). Returns
    /// None (no such request in flight) or (close this connection, close every connection,
    /// earliest time of the next request).
    #[pyo3(signature = (i, slot, segment, level, now_ns, flow, first_byte_ns = None))]
    #[allow(clippy::too_many_arguments)]
    fn completed(
        &self,
        i: usize,
        slot: usize,
        segment: usize,
        level: usize,
        now_ns: u64,
        flow: u32,
        first_byte_ns: Option<u64>,
    ) -> PyResult<Option<(bool, bool, u64)>> {
        self.with(i, |d| {
            d.completed(slot, segment, level, now_ns, flow, first_byte_ns)
                .map(|c| (c.close, c.close_all, c.wake_ns))
        })
    }

    fn sample(&self, i: usize, now_ns: u64) -> PyResult<()> {
        self.with(i, |d| d.sample(now_ns))
    }

    fn stop(&self, i: usize, now_ns: u64) -> PyResult<()> {
        self.with(i, |d| d.stop(now_ns))
    }

    fn connection_opened(&self, i: usize) -> PyResult<()> {
        self.with(i, |d| d.connection_opened())
    }

    /// Player i's video: {"name", "bitrates_bps", "durations_ns", "sizes_bytes" ([level][segment])}.
    fn video<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Bound<'py, PyAny>> {
        let v = self.with(i, |d| {
            let v = &d.plan().video;
            serde_json::json!({
                "name": v.name,
                "bitrates_bps": v.bitrates_bps,
                "durations_ns": v.durations_ns,
                "sizes_bytes": v.sizes_bytes,
            })
        })?;
        to_py(py, &v)
    }

    /// Ends every session at end_ns and computes the simulator's QoE metrics and tables.
    fn finish<'py>(
        &self,
        py: Python<'py>,
        end_ns: u64,
        paths: Vec<Option<(String, u64)>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let logs: Vec<_> = {
            let mut g = self
                .drivers
                .lock()
                .map_err(|_| PyRuntimeError::new_err("a player panicked earlier"))?;
            g.iter_mut()
                .map(|d| d.take().map(|mut d| d.take_log(end_ns)))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| PyRuntimeError::new_err("the players have finished"))?
        };
        let names = self.node_names.clone();
        let qoe = haslab_core::metrics::qoe::evaluate(&logs, &paths, |n| {
            names.get(n as usize).cloned().unwrap_or_default()
        });
        let err = |e: serde_json::Error| PyRuntimeError::new_err(format!("cannot serialise: {e}"));
        let out = PyDict::new(py);
        out.set_item("players", serde_json::to_string(&qoe.players).map_err(err)?)?;
        out.set_item("has", serde_json::to_string(&qoe.has).map_err(err)?)?;
        out.set_item("tables", tables_to_py(py, qoe.tables)?)?;
        Ok(out)
    }
}

/// Trace tables as {name: {column: numpy array}} (the arrays take the vectors, no copy).
fn tables_to_py<'py>(
    py: Python<'py>,
    tables: Vec<haslab_core::metrics::Table>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for table in tables {
        let cols = PyDict::new(py);
        for (name, data) in table.columns {
            let arr = match data {
                ColumnData::U64(v) => v.into_pyarray(py).into_any(),
                ColumnData::U32(v) => v.into_pyarray(py).into_any(),
                ColumnData::F64(v) => v.into_pyarray(py).into_any(),
            };
            cols.set_item(name, arr)?;
        }
        out.set_item(table.name, cols)?;
    }
    Ok(out)
}

/// haslab._core: the compiled simulator. Use the `haslab` package instead.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_class::<Simulation>()?;
    m.add_class::<LivePlayers>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MODEL_ID", haslab_core::MODEL_ID)?;
    // every registered congestion control and player algorithm, in registry order
    m.add("CC_NAMES", haslab_core::tcp::cc::CcConfig::NAMES.to_vec())?;
    m.add(
        "ABR_NAMES",
        haslab_core::has::players::AbrConfig::NAMES.to_vec(),
    )?;
    m.add(
        "PROGRESS_EVERY_NS",
        haslab_core::has::driver::PROGRESS_EVERY_NS,
    )?;
    // the simulated HTTP's message sizes, which live mode's player and origin send too
    m.add("HTTP_REQUEST_BYTES", haslab_core::has::http::REQUEST_BYTES)?;
    m.add(
        "HTTP_RESPONSE_HEADER_BYTES",
        haslab_core::has::http::RESPONSE_HEADER_BYTES,
    )?;
    Ok(())
}
