"""Frames from the native column buffers: pyarrow first, then pandas or polars.

The native module hands each column as the buffers of Arrow's layout (values, string
offsets and data, validity bitmap) in Python ``bytes``; ``pyarrow.Array.from_buffers``
wraps them without copying. pandas (``to_pandas``) copies what pandas needs to own, with
integer and boolean columns as pandas' nullable ``Int64``/``boolean``; polars takes the
Arrow arrays as they are.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

FORMATS = ("pandas", "arrow", "polars")


def to_arrow(columns: List[Tuple[Any, ...]]) -> Any:
    """A native column list as a ``pyarrow.Table``. pyarrow is imported here, on the first
    frame, not with the package: ``import replay_kernels`` stays in milliseconds."""
    import pyarrow as pa

    types = {"i64": pa.int64(), "f64": pa.float64(), "bool": pa.bool_(), "str": pa.large_string()}
    arrays = []
    names = []
    for name, kind, rows, nulls, validity, first, second in columns:
        valid = pa.py_buffer(validity) if validity is not None else None
        buffers = [valid, pa.py_buffer(first)]
        if second is not None:
            buffers.append(pa.py_buffer(second))
        arrays.append(pa.Array.from_buffers(types[kind], rows, buffers, null_count=nulls))
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


def convert(columns: List[Tuple[Any, ...]], format: str) -> Any:
    """The frame in the library asked for: ``pandas`` (default), ``arrow`` or ``polars``."""
    if format not in FORMATS:
        from ._native import ReplayInputError

        raise ReplayInputError(f"format {format!r}: expected one of {', '.join(FORMATS)}")
    table = to_arrow(columns)
    if format == "arrow":
        return table
    if format == "polars":
        import polars as pl

        return pl.from_arrow(table)
    import pandas as pd
    import pyarrow as pa

    # Integers and booleans keep their type where a value is missing (<NA>, not a float NaN
    # or an object column), so a column's dtype does not depend on the trace.
    nullable = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return table.to_pandas(types_mapper=nullable.get)


def convert_all(frames: Dict[str, List[Tuple[Any, ...]]], format: str) -> Dict[str, Any]:
    return {name: convert(columns, format) for name, columns in frames.items()}
