//! PyO3 bindings of ztwin-core, compiled as `ztwin._core`.
//!
//! This crate only converts types and maps errors: JSON text in, JSON text out (results
//! cross as columns inside that document, never one Python object per event). Core
//! configuration errors become `ztwin.ScenarioError`, simulation failures
//! `ztwin.SimulationError`; both are defined in `python/ztwin/exceptions.py`. The GIL is
//! released while the core runs; a run takes it back only to check for signals (Ctrl-C)
//! and to call its progress callback, a few times a second at most.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use ztwin_core::Error;

/// Large simulator tables ask for transparent huge pages (see `ztwin_core::support::mem_hint`).
#[global_allocator]
static ALLOC: ztwin_core::support::mem_hint::HugePageAlloc = ztwin_core::support::mem_hint::HugePageAlloc;

/// The core's error as the typed Python exception, its parts as attributes
/// (`ScenarioError.field`; `SimulationError.component`, `.time_ns`).
fn to_py_err(py: Python<'_>, err: Error) -> PyErr {
    let message = err.to_string();
    let exc = py.import("ztwin.exceptions").and_then(|m| match &err {
        Error::Config { field, message } => {
            m.getattr("ScenarioError")?.call_method1("from_core", (field.as_str(), message.as_str()))
        }
        Error::Simulation { component, time_ns, message } => m
            .getattr("SimulationError")?
            .call_method1("from_core", (component.as_str(), *time_ns, message.as_str())),
        // `run_variant` raises what stopped the run; the core stops only when asked to.
        Error::Stopped { .. } => Err(PyRuntimeError::new_err(message.clone())),
    });
    match exc {
        Ok(exc) => PyErr::from_value(exc),
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// `every_s` as a duration (the observer's wall-time interval).
fn every(every_s: f64) -> PyResult<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(every_s).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err("every_s must be a number of seconds, 0 or more")
    })
}

/// A follower of `run_shared`: `("forked", document)`, `("cold", why)` or `("failed", exception)`.
type FollowerOutcome = (&'static str, Py<PyAny>);

/// The core's observer of a run: checks for signals (Ctrl-C) and calls `progress` (if
/// any) with the GIL taken; what either raised is kept in `raised` and stops the run.
fn observer<'a>(
    progress: &'a Option<Py<PyAny>>,
    raised: &'a mut Option<PyErr>,
) -> impl FnMut(ztwin_core::run::Progress) -> bool + 'a {
    move |p| {
        Python::attach(|py| {
            let called = py.check_signals().and_then(|()| match progress {
                Some(f) => f.call1(py, (p.simulated_ns, p.total_ns, p.phase, p.phases, p.finished)).map(drop),
                None => Ok(()),
            });
            match called {
                Ok(()) => true,
                Err(e) => {
                    raised.get_or_insert(e);
                    false
                }
            }
        })
    }
}

/// Runs one resolved variant (JSON of `VariantConfig`) and returns the result as JSON.
///
/// Every `every_s` seconds of wall time at most (and at most once per report interval of
/// simulated time) the run checks for signals and calls `progress(simulated_ns,
/// total_ns, phase, phases, finished)` if given; once more at the end with `finished`
/// true. An exception there (KeyboardInterrupt from Ctrl-C, or one the callback raises)
/// stops the run and is raised. The callback only observes: the result is the same.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, every_s=0.2))]
fn run_variant(
    py: Python<'_>,
    config_json: String,
    progress: Option<Py<PyAny>>,
    every_s: f64,
) -> PyResult<String> {
    let every = every(every_s)?;
    let mut raised: Option<PyErr> = None;
    let out = py.detach(|| {
        let mut observe = observer(&progress, &mut raised);
        ztwin_core::run::run_variant_json_observed(&config_json, every, &mut observe)
    });
    match (out, raised) {
        // The last call (finished) cannot stop the run: what it raised is raised after it.
        (_, Some(e)) => Err(e),
        (Ok(doc), None) => Ok(doc),
        (Err(e), None) => Err(to_py_err(py, e)),
    }
}

/// Runs `leader_json` and, from the same run, each of `followers_json` that can take its
/// first phases from it (the core's `run::share`: a fork after the shared phases, the
/// follower's devices and logbias set in the child), at most `jobs` processes at once;
/// `progress` (as for `run_variant`) watches the leader. Answers the leader's document
/// and, per follower, `("forked", document)`, `("cold", why)` (the caller runs it
/// itself) or `("failed", exception)`. The leader's own errors are raised.
#[pyfunction]
#[pyo3(signature = (leader_json, followers_json, jobs=1, progress=None, every_s=0.2))]
fn run_shared(
    py: Python<'_>,
    leader_json: String,
    followers_json: Vec<String>,
    jobs: usize,
    progress: Option<Py<PyAny>>,
    every_s: f64,
) -> PyResult<(String, Vec<FollowerOutcome>)> {
    let every = every(every_s)?;
    let mut raised: Option<PyErr> = None;
    let out = py.detach(|| {
        let mut observe = observer(&progress, &mut raised);
        ztwin_core::run::run_shared_json(&leader_json, &followers_json, jobs, every, Some(&mut observe))
    });
    let (doc, outcomes) = match (out, raised) {
        (_, Some(e)) => return Err(e),
        (Ok(x), None) => x,
        (Err(e), None) => return Err(to_py_err(py, e)),
    };
    let outcomes = outcomes
        .into_iter()
        .map(|o| -> PyResult<FollowerOutcome> {
            use pyo3::IntoPyObjectExt;
            Ok(match o {
                ztwin_core::run::Shared::Forked(d) => ("forked", d.into_py_any(py)?),
                ztwin_core::run::Shared::Cold(why) => ("cold", why.into_py_any(py)?),
                ztwin_core::run::Shared::Failed(e) => ("failed", to_py_err(py, e).into_value(py).into_any()),
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok((doc, outcomes))
}

/// Whether `other_json` can take its first phases from a run of `leader_json` (the core's
/// `run::share`): `(phases shared, None)` or `(0, why not)`.
#[pyfunction]
fn share_plan(py: Python<'_>, leader_json: String, other_json: String) -> PyResult<(usize, Option<String>)> {
    let a = ztwin_core::config::VariantConfig::from_json(&leader_json).map_err(|e| to_py_err(py, e))?;
    let b = ztwin_core::config::VariantConfig::from_json(&other_json).map_err(|e| to_py_err(py, e))?;
    Ok(match ztwin_core::run::share_plan(&a, &b) {
        Ok(p) => (p.phases, None),
        Err(why) => (0, Some(why)),
    })
}

/// Checks one resolved variant as a run would (the stack is built, not run); raises the
/// run's ScenarioError if it would fail.
#[pyfunction]
fn check_variant(py: Python<'_>, config_json: String) -> PyResult<()> {
    py.detach(|| ztwin_core::run::check_variant_json(&config_json)).map_err(|e| to_py_err(py, e))
}

/// The estimated peak memory of running one resolved variant (JSON of `VariantConfig`),
/// as JSON `{"total": bytes, "parts": {name: bytes}}` (see `ztwin_core::run::estimate_memory`);
/// raises the ScenarioError of a config the core refuses. Builds nothing.
#[pyfunction]
fn estimate_memory(py: Python<'_>, config_json: String) -> PyResult<String> {
    ztwin_core::run::estimate_memory_json(&config_json).map_err(|e| to_py_err(py, e))
}

/// Block-pointer tree geometry (JSON request, JSON answer); see `ztwin_core::fs::zfs::geometry`.
#[pyfunction]
fn geometry(py: Python<'_>, request_json: String) -> PyResult<String> {
    ztwin_core::fs::zfs::geometry::geometry_json(&request_json).map_err(|e| to_py_err(py, e))
}

/// Size in bytes of one sysbench table's .ibd file (`TableLayout::sysbench(rows, page_size)`).
#[pyfunction]
fn sysbench_table_bytes(rows: u64, page_size: u32) -> PyResult<u64> {
    if !(1..=i32::MAX as u64).contains(&rows) || ![4096, 8192, 16384, 32768, 65536].contains(&page_size) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "rows must be 1 to 2147483647 (sysbench's 32-bit id) and page_size one of 4K, 8K, 16K, 32K, 64K",
        ));
    }
    Ok(ztwin_core::db::innodb::btree::TableLayout::sysbench(rows, page_size).file_size())
}

/// Trace replay (JSON of `ztwin_core::replay::ReplaySpec`), answer as JSON; see `ztwin_core::replay`.
#[pyfunction]
fn replay(py: Python<'_>, spec_json: String) -> PyResult<String> {
    py.detach(|| ztwin_core::replay::replay_json(&spec_json)).map_err(|e| to_py_err(py, e))
}

/// One policy at one size on one thread (the replay benchmark), JSON in and out.
#[pyfunction]
fn replay_simulate(py: Python<'_>, request_json: String) -> PyResult<String> {
    py.detach(|| ztwin_core::replay::simulate_json(&request_json)).map_err(|e| to_py_err(py, e))
}

/// Writes any trace as libCacheSim's oracleGeneral binary; returns the requests written.
#[pyfunction]
#[pyo3(signature = (src, dst, format=None, max_requests=None))]
fn trace_to_oracle(
    py: Python<'_>,
    src: String,
    dst: String,
    format: Option<String>,
    max_requests: Option<u64>,
) -> PyResult<u64> {
    py.detach(|| {
        let fmt = format.as_deref().map(ztwin_core::workload::trace::Format::parse).transpose()?;
        ztwin_core::replay::convert_to_oracle(
            std::path::Path::new(&src),
            fmt,
            std::path::Path::new(&dst),
            max_requests,
        )
    })
    .map_err(|e| to_py_err(py, e))
}

/// The format of a trace as detected from its content ("lis", "csv", "oracle", "vscsi", "blkparse", "txt").
#[pyfunction]
fn trace_format(py: Python<'_>, path: String) -> PyResult<String> {
    ztwin_core::workload::trace::open(std::path::Path::new(&path), None)
        .map(|(f, _)| f.name().to_string())
        .map_err(|e| to_py_err(py, e))
}

/// Version of the core crate.
/// Mean wall nanoseconds of one dependent random read over `bytes` of memory (see
/// ztwin_core::support::mem_probe), `reads` times.
#[pyfunction]
fn memory_read_ns(py: Python<'_>, bytes: usize, reads: u64) -> PyResult<f64> {
    if !(128..=(1usize << 36)).contains(&bytes) || reads == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "memory_read_ns: bytes must be 128 B to 64 GiB and reads at least 1",
        ));
    }
    Ok(py.detach(|| ztwin_core::support::mem_probe::random_read_ns(bytes, reads)))
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_variant, m)?)?;
    m.add_function(wrap_pyfunction!(check_variant, m)?)?;
    m.add_function(wrap_pyfunction!(run_shared, m)?)?;
    m.add_function(wrap_pyfunction!(share_plan, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add_function(wrap_pyfunction!(geometry, m)?)?;
    m.add_function(wrap_pyfunction!(sysbench_table_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(memory_read_ns, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(replay_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(trace_to_oracle, m)?)?;
    m.add_function(wrap_pyfunction!(trace_format, m)?)?;
    Ok(())
}
