//! `.npy` files in and out of `replay scan`: a user's edge potentials `[B, T−1, K, C, C]`, their
//! sequence lengths `[B]`, and the gradient written back in the layout of the edge. Every
//! problem with a file is a [`ScanError::File`] that names it.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read};
use std::path::Path;

use npyz::{DType, NpyFile, TypeChar, WriterBuilder};

use super::{ScanDims, ScanError};

fn file_error(path: &Path, problem: impl Into<String>) -> ScanError {
    ScanError::File {
        path: path.to_path_buf(),
        problem: problem.into(),
    }
}

fn open(path: &Path) -> Result<NpyFile<BufReader<File>>, ScanError> {
    let file = File::open(path).map_err(|e| file_error(path, format!("cannot open: {e}")))?;
    read_header(BufReader::new(file), path)
}

fn read_header<R: Read>(reader: R, path: &Path) -> Result<NpyFile<R>, ScanError> {
    NpyFile::new(reader).map_err(|e| file_error(path, format!("not a readable .npy file: {e}")))
}

/// The (type character, bytes) of a plain dtype, or why it is not one.
fn plain_type(path: &Path, dtype: &DType) -> Result<(TypeChar, u64), ScanError> {
    match dtype {
        DType::Plain(ts) => Ok((ts.type_char(), ts.size_field())),
        other => Err(file_error(
            path,
            format!("dtype {} is not a plain number type", other.descr()),
        )),
    }
}

/// Reads the edge potentials: float32 (float64 is converted), C order, rank 5 with the last
/// two axes equal, every value finite. Returns the dimensions (B, T, K, C) and the values.
pub fn read_edge(path: &Path) -> Result<(ScanDims, Vec<f32>), ScanError> {
    edge_from(open(path)?, path)
}

/// [`read_edge`] on a file's bytes; `path` names the file in errors.
pub fn read_edge_bytes(bytes: &[u8], path: &Path) -> Result<(ScanDims, Vec<f32>), ScanError> {
    edge_from(read_header(bytes, path)?, path)
}

fn edge_from<R: Read>(npy: NpyFile<R>, path: &Path) -> Result<(ScanDims, Vec<f32>), ScanError> {
    if npy.order() != npyz::Order::C {
        return Err(file_error(
            path,
            "Fortran-ordered array: save it in C order (numpy.ascontiguousarray)",
        ));
    }
    let shape: Vec<u64> = npy.shape().to_vec();
    if shape.len() != 5 || shape[3] != shape[4] || shape.contains(&0) {
        return Err(file_error(
            path,
            format!("shape {shape:?} is not [B, T-1, K, C, C] with every axis at least 1"),
        ));
    }
    let values: Vec<f32> = match plain_type(path, &npy.dtype())? {
        (TypeChar::Float, 4) => npy.into_vec::<f32>(),
        (TypeChar::Float, 8) => npy
            .into_vec::<f64>()
            .map(|v| v.into_iter().map(|x| x as f32).collect()),
        (_, _) => {
            return Err(file_error(
                path,
                format!(
                    "dtype {} is not float32 (or float64): edge potentials are real log-potentials",
                    npy.dtype().descr()
                ),
            ))
        }
    }
    .map_err(|e| file_error(path, format!("cannot read its data: {e}")))?;
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(file_error(
            path,
            format!("value {} at flat index {i} is not finite", values[i]),
        ));
    }
    let dims = ScanDims {
        batch: shape[0] as usize,
        positions: shape[1] as usize + 1,
        durations: shape[2] as usize,
        labels: shape[3] as usize,
    };
    Ok((dims, values))
}

/// Reads the lengths: a 1-D integer array of `batch` values in `1..=positions`.
pub fn read_lengths(path: &Path, dims: ScanDims) -> Result<Vec<usize>, ScanError> {
    lengths_from(open(path)?, path, dims)
}

/// [`read_lengths`] on a file's bytes; `path` names the file in errors.
pub fn read_lengths_bytes(
    bytes: &[u8],
    path: &Path,
    dims: ScanDims,
) -> Result<Vec<usize>, ScanError> {
    lengths_from(read_header(bytes, path)?, path, dims)
}

fn lengths_from<R: Read>(
    npy: NpyFile<R>,
    path: &Path,
    dims: ScanDims,
) -> Result<Vec<usize>, ScanError> {
    let shape: Vec<u64> = npy.shape().to_vec();
    if shape != [dims.batch as u64] {
        return Err(file_error(
            path,
            format!("shape {shape:?} is not [B] = [{}]", dims.batch),
        ));
    }
    let raw: Vec<i64> = match plain_type(path, &npy.dtype())? {
        (TypeChar::Int, 8) => npy.into_vec::<i64>(),
        (TypeChar::Int, 4) => npy
            .into_vec::<i32>()
            .map(|v| v.into_iter().map(i64::from).collect()),
        (TypeChar::Uint, 8) => npy.into_vec::<u64>().map(|v| {
            v.into_iter()
                .map(|x| x.min(i64::MAX as u64) as i64)
                .collect()
        }),
        (TypeChar::Uint, 4) => npy
            .into_vec::<u32>()
            .map(|v| v.into_iter().map(i64::from).collect()),
        _ => {
            return Err(file_error(
                path,
                format!(
                    "dtype {} is not an integer type (int32 or int64)",
                    npy.dtype().descr()
                ),
            ))
        }
    }
    .map_err(|e| file_error(path, format!("cannot read its data: {e}")))?;
    raw.iter()
        .enumerate()
        .map(|(b, &len)| {
            if len < 1 || len > dims.positions as i64 {
                Err(file_error(
                    path,
                    format!(
                        "length {len} of sequence {b} is outside 1..={} (T = edge axis 1 + 1)",
                        dims.positions
                    ),
                ))
            } else {
                Ok(len as usize)
            }
        })
        .collect()
}

/// Writes `grad` (the layout of the edge) as float32 `[B, T−1, K, C, C]`.
pub fn write_grad(path: &Path, dims: ScanDims, grad: &[f32]) -> Result<(), ScanError> {
    let shape = [
        dims.batch as u64,
        dims.positions as u64 - 1,
        dims.durations as u64,
        dims.labels as u64,
        dims.labels as u64,
    ];
    let write = || -> std::io::Result<()> {
        let file = BufWriter::new(File::create(path)?);
        let mut writer = npyz::WriteOptions::new()
            .default_dtype()
            .shape(&shape)
            .writer(file)
            .begin_nd()?;
        writer.extend(grad.iter().copied())?;
        writer.finish()
    };
    write().map_err(|e| file_error(path, format!("cannot write: {e}")))
}
