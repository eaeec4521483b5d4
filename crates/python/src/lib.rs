//! `replay_kernels._native`: replay's torch-free core (`replay-core`) for Python. Each call is
//! a thin layer over what the `replay` command runs; frames come back as Arrow column
//! buffers ([`columns`]) that `replay_kernels` wraps into pyarrow, pandas or polars. The
//! Python-facing API, its docstrings and stubs are in `python/replay_kernels/`.

mod background;
mod columns;
mod errors;
mod json_table;
mod kernels;
mod ops;
mod readers;
mod signatures;
mod state;
mod timeline_frames;

use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use replay_core::export;
use replay_core::predict::{self, PredictOutput, PredictRequest, Timeline, WhatIf};

use crate::columns::Table;
use crate::errors::{input, internal, to_py};
use crate::state::TraceState;

/// A loaded trace (the native half of `replay_kernels.Trace`).
#[pyclass(frozen, name = "NativeTrace", module = "replay_kernels._native")]
struct NativeTrace {
    state: Arc<TraceState>,
}

/// Parses what-if expressions as `replay predict --what-if` does.
fn what_ifs(expressions: Vec<String>) -> PyResult<Vec<WhatIf>> {
    expressions
        .iter()
        .map(|e| WhatIf::from_str(e).map_err(|err| input(format!("--what-if {e}: {err}"))))
        .collect()
}

/// `replay predict`'s computation, off the interpreter's thread.
fn run_predict(
    py: Python<'_>,
    state: &Arc<TraceState>,
    request: PredictRequest,
) -> PyResult<PredictOutput> {
    let state = state.clone();
    background::run(py, "predict", move || {
        predict::predict_trace(&state.trace, &state.path, &request)
    })?
    .map_err(to_py)
}

fn frame<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyList>> {
    columns::to_python(py, table)
}

fn frames<'py>(py: Python<'py>, tables: &[(String, Table)]) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, table) in tables {
        dict.set_item(name, frame(py, table)?)?;
    }
    Ok(dict)
}

#[pymethods]
impl NativeTrace {
    /// The path as given.
    #[getter]
    fn path(&self) -> String {
        self.state.path.display().to_string()
    }

    /// `cuda`, `rocm` or `cpu`.
    #[getter]
    fn platform(&self) -> &'static str {
        match self.state.trace.platform {
            replay_core::trace::Platform::Cuda => "cuda",
            replay_core::trace::Platform::Rocm => "rocm",
            replay_core::trace::Platform::Cpu => "cpu",
        }
    }

    /// Events kept from the file (complete events of the categories replay reads).
    #[getter]
    fn events(&self) -> usize {
        self.state.trace.events.len()
    }

    #[getter]
    fn gpu_activities(&self) -> u64 {
        self.state.trace.gpu_activity_count()
    }

    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let state = self.state.clone();
        let table = background::run(py, "kernels", move || -> replay_core::Result<Table> {
            let links = state.links();
            let ids = state.ids();
            let file = state.classified()?;
            Ok(kernels::table(&state.trace, &links, &ids, &file))
        })?
        .map_err(to_py)?;
        frame(py, &table)
    }

    fn ops<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let state = self.state.clone();
        let table = background::run(py, "ops", move || {
            let links = state.links();
            let ids = state.ids();
            ops::table(&state.trace, &links, &ids)
        })?;
        frame(py, &table)
    }

    fn signatures<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let state = self.state.clone();
        let table = background::run(py, "classify", move || {
            state.classified().map(|file| signatures::table(&file))
        })?
        .map_err(to_py)?;
        frame(py, &table)
    }

    /// The signature file as `replay classify --json` prints it.
    fn signature_file_json(&self, py: Python<'_>) -> PyResult<String> {
        let state = self.state.clone();
        let bytes = background::run(py, "classify", move || {
            state
                .classified()
                .map(|file| export::json::to_bytes(&*file))
        })?
        .map_err(to_py)?;
        String::from_utf8(bytes).map_err(|e| internal(e.to_string()))
    }

    fn steps<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        frame(py, &timeline_frames::steps(&self.state.trace))
    }

    #[pyo3(signature = (what_if, profile=None, source_profile=None, isolated=None, host_times=None, host_profile=None))]
    #[allow(clippy::too_many_arguments)]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        what_if: Vec<String>,
        profile: Option<PathBuf>,
        source_profile: Option<PathBuf>,
        isolated: Option<PathBuf>,
        host_times: Option<String>,
        host_profile: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyList>> {
        if source_profile.is_some() && profile.is_none() {
            return Err(input(
                "source_profile needs profile (as --source-profile needs --profile)",
            ));
        }
        if (host_times.is_some() || host_profile.is_some()) && isolated.is_none() {
            return Err(input(
                "host_times and host_profile need isolated (as --host-times needs --isolated)",
            ));
        }
        let host_times = host_times
            .map(|h| h.parse::<predict::HostTimes>())
            .transpose()
            .map_err(input)?;
        let request = PredictRequest {
            what_ifs: what_ifs(what_if)?,
            profile,
            source_profile,
            isolated,
            want_catalog: false,
            host_times,
            host_profile,
        };
        let out = run_predict(py, &self.state, request)?;
        frame(py, &timeline_frames::predictions(&out))
    }

    #[pyo3(signature = (what_if, profile=None, source_profile=None))]
    fn critical_path<'py>(
        &self,
        py: Python<'py>,
        what_if: Vec<String>,
        profile: Option<PathBuf>,
        source_profile: Option<PathBuf>,
    ) -> PyResult<Bound<'py, PyList>> {
        let request = PredictRequest {
            what_ifs: what_ifs(what_if)?,
            profile,
            source_profile,
            isolated: None,
            want_catalog: true,
            ..PredictRequest::default()
        };
        let out = run_predict(py, &self.state, request)?;
        // The last timeline asked for: the original, or the last what-if on top of the rest.
        let timeline: &Timeline = out.answers.last().map_or(&out.original, |a| &a.timeline);
        frame(py, &timeline_frames::critical_path(timeline, &out.catalog))
    }

    #[pyo3(signature = (path, what_if, profile=None, source_profile=None))]
    fn to_perfetto(
        &self,
        py: Python<'_>,
        path: PathBuf,
        what_if: Vec<String>,
        profile: Option<PathBuf>,
        source_profile: Option<PathBuf>,
    ) -> PyResult<()> {
        let request = PredictRequest {
            what_ifs: what_ifs(what_if)?,
            profile,
            source_profile,
            isolated: None,
            want_catalog: true,
            ..PredictRequest::default()
        };
        let out = run_predict(py, &self.state, request)?;
        py.detach(|| {
            let mut timelines: Vec<&Timeline> = vec![&out.original];
            timelines.extend(out.answers.iter().map(|a| &a.timeline));
            export::perfetto::write(&path, &timelines, &out.catalog)
        })
        .map_err(to_py)
    }
}

/// Reads a plain or gzipped Kineto trace.
#[pyfunction]
fn load(py: Python<'_>, path: PathBuf) -> PyResult<NativeTrace> {
    let state = background::run(py, "load", move || TraceState::load(path))?.map_err(to_py)?;
    Ok(NativeTrace {
        state: Arc::new(state),
    })
}

#[pyfunction]
fn read_isolated(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let tables = py.detach(|| readers::isolated(&path)).map_err(to_py)?;
    frames(py, &tables)
}

#[pyfunction]
fn read_comparison(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let tables = py.detach(|| readers::comparison(&path)).map_err(to_py)?;
    frames(py, &tables)
}

#[pyfunction]
fn read_profile(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let tables = py.detach(|| readers::profile(&path)).map_err(to_py)?;
    frames(py, &tables)
}

#[pyfunction]
fn read_suite_csv(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyList>> {
    let table = py.detach(|| readers::suite_csv(&path)).map_err(to_py)?;
    frame(py, &table)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeTrace>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(read_isolated, m)?)?;
    m.add_function(wrap_pyfunction!(read_comparison, m)?)?;
    m.add_function(wrap_pyfunction!(read_profile, m)?)?;
    m.add_function(wrap_pyfunction!(read_suite_csv, m)?)?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
