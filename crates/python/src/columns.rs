//! Frames as typed column buffers in Arrow's memory layout, handed to Python as bytes.
//!
//! No Arrow crate: each column is built here as the buffers Arrow defines (values; for
//! strings, 64-bit offsets and UTF-8 bytes; a validity bitmap where a value can be missing),
//! and `replay_kernels._frame` wraps those bytes with `pyarrow.Array.from_buffers` without
//! copying them again. The full `arrow` crate would add minutes to a fresh build on two cores.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// One column's values.
#[derive(Debug, Clone)]
pub enum Values {
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    /// Arrow `large_string`: `offsets[i]..offsets[i + 1]` of `data` is row i.
    Str {
        offsets: Vec<i64>,
        data: Vec<u8>,
    },
}

/// A named column: its values and which rows hold one (`None`: every row does).
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    pub values: Values,
    pub valid: Option<Vec<bool>>,
}

impl Column {
    pub fn len(&self) -> usize {
        match &self.values {
            Values::I64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::Str { offsets, .. } => offsets.len().saturating_sub(1),
        }
    }
}

/// Tracks which rows are missing, allocating the bitmap only once one is.
#[derive(Debug, Default, Clone)]
struct Validity {
    valid: Option<Vec<bool>>,
    rows: usize,
}

impl Validity {
    fn push(&mut self, present: bool) {
        if !present && self.valid.is_none() {
            self.valid = Some(vec![true; self.rows]);
        }
        if let Some(valid) = &mut self.valid {
            valid.push(present);
        }
        self.rows += 1;
    }
}

/// Builds one column row by row.
#[derive(Debug, Clone)]
pub struct Builder {
    name: String,
    values: Values,
    validity: Validity,
}

impl Builder {
    fn new(name: &str, values: Values) -> Builder {
        Builder {
            name: name.to_owned(),
            values,
            validity: Validity::default(),
        }
    }

    pub fn ints(name: &str) -> Builder {
        Builder::new(name, Values::I64(Vec::new()))
    }

    pub fn floats(name: &str) -> Builder {
        Builder::new(name, Values::F64(Vec::new()))
    }

    pub fn bools(name: &str) -> Builder {
        Builder::new(name, Values::Bool(Vec::new()))
    }

    pub fn strs(name: &str) -> Builder {
        Builder::new(
            name,
            Values::Str {
                offsets: vec![0],
                data: Vec::new(),
            },
        )
    }

    /// Appends an integer (a float column takes it as a float).
    pub fn int(&mut self, value: Option<i64>) {
        self.validity.push(value.is_some());
        let v = value.unwrap_or(0);
        match &mut self.values {
            Values::I64(values) => values.push(v),
            Values::F64(values) => values.push(v as f64),
            Values::Bool(values) => values.push(v != 0),
            Values::Str { offsets, data } => {
                if value.is_some() {
                    data.extend_from_slice(v.to_string().as_bytes());
                }
                offsets.push(data.len() as i64);
            }
        }
    }

    pub fn uint(&mut self, value: Option<u64>) {
        self.int(value.map(|v| i64::try_from(v).unwrap_or(i64::MAX)));
    }

    pub fn float(&mut self, value: Option<f64>) {
        self.validity.push(value.is_some());
        let v = value.unwrap_or(0.0);
        match &mut self.values {
            Values::F64(values) => values.push(v),
            Values::I64(values) => values.push(v as i64),
            Values::Bool(values) => values.push(v != 0.0),
            Values::Str { offsets, data } => {
                if value.is_some() {
                    data.extend_from_slice(v.to_string().as_bytes());
                }
                offsets.push(data.len() as i64);
            }
        }
    }

    pub fn bool(&mut self, value: Option<bool>) {
        self.validity.push(value.is_some());
        let v = value.unwrap_or(false);
        match &mut self.values {
            Values::Bool(values) => values.push(v),
            Values::I64(values) => values.push(i64::from(v)),
            Values::F64(values) => values.push(f64::from(u8::from(v))),
            Values::Str { offsets, data } => {
                if value.is_some() {
                    data.extend_from_slice(if v { b"true" } else { b"false" });
                }
                offsets.push(data.len() as i64);
            }
        }
    }

    pub fn str(&mut self, value: Option<&str>) {
        self.validity.push(value.is_some());
        match &mut self.values {
            Values::Str { offsets, data } => {
                data.extend_from_slice(value.unwrap_or("").as_bytes());
                offsets.push(data.len() as i64);
            }
            Values::I64(values) => values.push(0),
            Values::F64(values) => values.push(0.0),
            Values::Bool(values) => values.push(false),
        }
    }

    pub fn finish(self) -> Column {
        Column {
            name: self.name,
            values: self.values,
            valid: self.validity.valid,
        }
    }
}

/// A frame: columns of equal length, in order.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub columns: Vec<Column>,
}

impl Table {
    pub fn new(builders: Vec<Builder>) -> Table {
        Table {
            columns: builders.into_iter().map(Builder::finish).collect(),
        }
    }
}

/// Little-endian bytes of a slice of plain numbers.
fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    values: &[T],
    to: fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * N, |out| {
        for (chunk, v) in out.chunks_exact_mut(N).zip(values) {
            chunk.copy_from_slice(&to(*v));
        }
        Ok(())
    })
}

/// Arrow's bitmap: bit i (least significant first) of byte i / 8 is row i.
fn bitmap<'py>(py: Python<'py>, bits: &[bool]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, bits.len().div_ceil(8), |out| {
        out.fill(0);
        for (i, _) in bits.iter().enumerate().filter(|(_, b)| **b) {
            out[i / 8] |= 1 << (i % 8);
        }
        Ok(())
    })
}

/// The table as a list of `(name, type, rows, null_count, validity, buffer, buffer)` tuples,
/// the form `replay_kernels._frame.to_arrow` reads (the second buffer is `None` except for
/// strings, whose first is the offsets and second the UTF-8 data).
pub fn to_python<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for column in &table.columns {
        let rows = column.len();
        let nulls = column
            .valid
            .as_ref()
            .map_or(0, |v| v.iter().filter(|b| !**b).count());
        let validity = match &column.valid {
            Some(bits) => Some(bitmap(py, bits)?),
            None => None,
        };
        let (kind, first, second) = match &column.values {
            Values::I64(v) => ("i64", le_bytes(py, v, i64::to_le_bytes)?, None),
            Values::F64(v) => ("f64", le_bytes(py, v, f64::to_le_bytes)?, None),
            Values::Bool(v) => ("bool", bitmap(py, v)?, None),
            Values::Str { offsets, data } => (
                "str",
                le_bytes(py, offsets, i64::to_le_bytes)?,
                Some(PyBytes::new(py, data)),
            ),
        };
        let entry = PyTuple::new(
            py,
            [
                column.name.as_str().into_pyobject(py)?.into_any(),
                kind.into_pyobject(py)?.into_any(),
                rows.into_pyobject(py)?.into_any(),
                nulls.into_pyobject(py)?.into_any(),
                validity.into_pyobject(py)?.into_any(),
                first.into_any(),
                second.into_pyobject(py)?.into_any(),
            ],
        )?;
        list.append(entry)?;
    }
    Ok(list)
}
