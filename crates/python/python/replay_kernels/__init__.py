"""replay's torch-free core in Python.

Read a PyTorch profiler (Kineto) trace with the same compiled reader as the ``replay``
command, and get its GPU activities, CPU ops, kernel signatures, steps, timeline
predictions and critical path as DataFrames (pandas by default; ``format="arrow"`` or
``format="polars"`` for the others). Every call is a thin layer over what ``replay``
runs, so the numbers are the command's::

    import replay_kernels as rk

    trace = rk.load_trace("h100_bert_small_infer.json.gz")
    trace.signatures()                 # = replay classify
    trace.predict(what_if=["tier2*0.5"])  # = replay predict --what-if tier2*0.5

Errors are Python exceptions with the command's messages: ``FileNotFoundError`` for a
file that is not there, :class:`ReplayInputError` (a ``ValueError``) for anything else a
user can fix (a malformed trace, a bad what-if), :class:`ReplayError` for replay's own.
Long calls release the GIL and stop at Ctrl-C.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, Optional, Union

from . import _frame
from ._native import NativeTrace, ReplayError, ReplayInputError, __version__
from ._native import load as _load
from ._native import read_comparison as _read_comparison
from ._native import read_isolated as _read_isolated
from ._native import read_profile as _read_profile
from ._native import read_suite_csv as _read_suite_csv

__all__ = [
    "Trace",
    "load_trace",
    "read_isolated",
    "read_comparison",
    "read_profile",
    "read_suite_csv",
    "ReplayError",
    "ReplayInputError",
    "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]


def _paths(what_if: Optional[Iterable[str]]) -> list:
    if what_if is None:
        return []
    if isinstance(what_if, str):
        return [what_if]
    return [str(w) for w in what_if]


def _path(path: Optional[PathLike]) -> Optional[str]:
    return None if path is None else os.fspath(path)


class Trace:
    """A loaded profiler trace (see :func:`load_trace`).

    Times in the frames are microseconds (``ts``, ``dur``: HTA's column names) on the
    trace's own axis, as in the file; ``event`` columns are indices of the trace's kept
    events, so ``kernels().op_event`` joins ``ops().event``.
    """

    def __init__(self, native: NativeTrace) -> None:
        self._native = native

    @property
    def path(self) -> str:
        """The path the trace was loaded from, as given."""
        return self._native.path

    @property
    def platform(self) -> str:
        """``cuda``, ``rocm`` or ``cpu`` (a CPU-only capture)."""
        return self._native.platform

    def __repr__(self) -> str:
        return (
            f"Trace({self.path!r}, platform={self.platform!r}, events={self._native.events}, "
            f"gpu_activities={self._native.gpu_activities})"
        )

    def kernels(self, format: str = "pandas") -> Any:
        """Every GPU activity (kernel, memcpy, memset), in file order, linked to the launch
        call with its correlation id and to the innermost op around that call.

        Columns: event, name, cat, ts, dur, pid, device, stream, correlation, bytes, grid,
        block, launch, launch_event, op, op_event, op_stack (outermost op first, " > "
        between), signature (its id in :meth:`signatures`), tier, launched_by_graph,
        collective. An activity with no launch call in the trace has nulls there.
        """
        return _frame.convert(self._native.kernels(), format)

    def ops(self, format: str = "pandas") -> Any:
        """Every CPU op (``cpu_op``), in file order, with its parent op, depth, nn.Module and
        its inputs' shapes, dtypes, strides and values as recorded (JSON text).

        Columns: event, name, ts, dur, pid, tid, external_id, sequence_number,
        record_function_id, parent_event, depth, module, input_dims, input_types,
        input_strides, concrete_inputs, signature (a CPU-only trace's top-level ops).
        """
        return _frame.convert(self._native.ops(), format)

    def signatures(self, format: str = "pandas") -> Any:
        """The table of ``replay classify``: one row per unique kernel signature.

        Columns: id, tier, unit, kind, name, label, op, op_ancestry, module, op_schema,
        labels, streams, count, trace_total_us, trace_mean_us, trace_min_us, trace_max_us,
        input_dims, input_types, input_strides, grid, block, bytes, memcpy_kind, gemm_m,
        gemm_n, gemm_k, gemm_batch, gemm_dtype, gemm_layout (``NT``: A as is, B
        transposed), gemm_layout_source, replayable, reason.
        """
        return _frame.convert(self._native.signatures(), format)

    def signature_file(self) -> str:
        """The signature file as ``replay classify --json`` prints it (JSON text)."""
        return self._native.signature_file_json()

    def steps(self, format: str = "pandas") -> Any:
        """The measured steps: ``ProfilerStep#N`` spans, else the whole profiled window.

        Columns: name, ts, dur, source (``profiler_step`` or ``profiled_window``).
        """
        return _frame.convert(self._native.steps(), format)

    def predict(
        self,
        what_if: Optional[Iterable[str]] = None,
        profile: Optional[PathLike] = None,
        isolated: Optional[PathLike] = None,
        source_profile: Optional[PathLike] = None,
        format: str = "pandas",
        host_times: Optional[str] = None,
        host_profile: Optional[PathLike] = None,
    ) -> Any:
        """``replay predict``: the timeline model's step time from the trace's own durations
        (row ``original``), then ``profile``'s re-timing and each what-if, each on top of
        the ones before it, and with ``isolated`` the prediction from an isolated.json's
        replayed durations (row ``isolated=FILE``: the model call, against the same span of
        the trace).

        ``host_times`` (with ``isolated``): whose host durations that prediction runs with,
        ``trace``, ``corrected`` or ``model`` (``--host-times``); ``host_profile``: a profile
        with a ``host`` section, or a ``host.json``, that drives the host model
        (``--host-profile``).

        ``what_if``: the expressions of ``replay predict --what-if`` (``tier2*0.5``,
        ``kernel:REGEX*F``, ``op:REGEX*F``, ``host*F``, ``launch=0``, ``durations=FILE``...).

        Columns: timeline, applied, predicted_us, measured_us, error_percent,
        change_percent, kernel_sum_us, gpu_busy_fraction, changed_durations.
        """
        columns = self._native.predict(
            _paths(what_if), _path(profile), _path(source_profile), _path(isolated),
            host_times, _path(host_profile),
        )
        return _frame.convert(columns, format)

    def critical_path(
        self,
        what_if: Optional[Iterable[str]] = None,
        profile: Optional[PathLike] = None,
        source_profile: Optional[PathLike] = None,
        format: str = "pandas",
    ) -> Any:
        """The critical path of each step of the predicted timeline (of the last what-if when
        some are given): the host items and GPU activities whose durations make the step's
        time, first to last. What the Perfetto export draws on its "critical path" row.

        Columns: step, position, node (framework, host_op, launch, wait:KIND, kernel,
        memcpy, memset), name, label, signature, lane (``host T`` or ``stream S``),
        start_us (from the step's start), dur.
        """
        columns = self._native.critical_path(
            _paths(what_if), _path(profile), _path(source_profile)
        )
        return _frame.convert(columns, format)

    def to_perfetto(
        self,
        path: PathLike,
        what_if: Optional[Iterable[str]] = None,
        profile: Optional[PathLike] = None,
        source_profile: Optional[PathLike] = None,
    ) -> None:
        """Writes the predicted timelines (the original and each what-if, one process each)
        as a Chrome trace that ui.perfetto.dev opens: ``replay predict --perfetto``."""
        self._native.to_perfetto(
            os.fspath(path), _paths(what_if), _path(profile), _path(source_profile)
        )


def load_trace(path: PathLike) -> Trace:
    """Reads a PyTorch profiler (Kineto) trace, plain JSON or gzipped, of any profiler era
    ``replay`` reads. Raises ``FileNotFoundError`` or :class:`ReplayInputError` naming the
    file when it cannot."""
    return Trace(_load(os.fspath(path)))


def read_isolated(path: PathLike, format: str = "pandas") -> Dict[str, Any]:
    """``isolated.json`` (``replay isolated``): ``results`` (one row per signature,
    ``stats.*`` its timing) and ``summary`` (the run's device and settings)."""
    return _frame.convert_all(_read_isolated(os.fspath(path)), format)


def read_comparison(path: PathLike, format: str = "pandas") -> Dict[str, Any]:
    """``comparison_report.json`` (``replay compare``): each list in it as a frame
    (``top_signatures``, ``signature_times``...) and everything else as the one-row
    ``summary`` (nested fields as dotted columns: ``predictions.timeline.error_percent``)."""
    return _frame.convert_all(_read_comparison(os.fspath(path)), format)


def read_profile(path: PathLike, format: str = "pandas") -> Dict[str, Any]:
    """A calibration profile (``replay calibrate``, ``profiles/*.json``): its operation
    lists and maps as frames, the rest as ``summary``."""
    return _frame.convert_all(_read_profile(os.fspath(path)), format)


def read_suite_csv(path: PathLike, format: str = "pandas") -> Any:
    """A benchmark suite's CSV (``replay bench scan|quant|mhc``): its columns as written,
    numbers as numbers, empty cells null."""
    return _frame.convert(_read_suite_csv(os.fspath(path)), format)
