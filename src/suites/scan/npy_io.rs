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

/// numpy's own limit on the length of a header (`max_header_size`, numpy 1.24 on): it refuses
/// longer ones unless told the file is trusted. npyz allocates whatever length the file states
/// (up to 4 GiB in a version 2 or 3 header, found by the `npy` fuzz target).
const MAX_HEADER_BYTES: usize = 10_000;

/// Brackets nested deeper than this in a header are refused before npyz parses it: its parser of
/// Python literals took over 10 s on 100-byte headers of nested `{` or `[` (the `npy` fuzz
/// target). A plain array's header nests two deep (`{'shape': (2, 3)}`), a structured one three.
const MAX_HEADER_NESTING: usize = 4;

/// The magic string and version of every `.npy` file.
const MAGIC: &[u8] = b"\x93NUMPY";

type Opened = NpyFile<std::io::Chain<std::io::Cursor<Vec<u8>>, BufReader<File>>>;

fn open(path: &Path) -> Result<Opened, ScanError> {
    let file = File::open(path).map_err(|e| file_error(path, format!("cannot open: {e}")))?;
    let mut reader = BufReader::new(file);
    // The preamble and the header are read and checked here, then handed to npyz in front of
    // the rest of the file.
    let mut head = vec![0u8; MAGIC.len() + 2];
    let unreadable = |e: std::io::Error| file_error(path, format!("not a readable .npy file: {e}"));
    reader.read_exact(&mut head).map_err(unreadable)?;
    let size_bytes = header_size_bytes(&head, path)?;
    let mut size = vec![0u8; size_bytes];
    reader.read_exact(&mut size).map_err(unreadable)?;
    head.extend_from_slice(&size);
    let header_len = header_len(&head, path)?;
    let start = head.len();
    head.resize(start + header_len, 0);
    reader.read_exact(&mut head[start..]).map_err(unreadable)?;
    check_header(&head, path)?;
    read_header(std::io::Cursor::new(head).chain(reader), path)
}

fn read_header<R: Read>(reader: R, path: &Path) -> Result<NpyFile<R>, ScanError> {
    NpyFile::new(reader).map_err(|e| file_error(path, format!("not a readable .npy file: {e}")))
}

/// [`read_header`] of a file's bytes, once [`check_header`] has passed them.
fn read_header_bytes<'a>(bytes: &'a [u8], path: &Path) -> Result<NpyFile<&'a [u8]>, ScanError> {
    check_header(bytes, path)?;
    read_header(bytes, path)
}

/// How many bytes give the header's length after the magic and version: 2 in version 1, 4 in
/// versions 2 and 3.
fn header_size_bytes(head: &[u8], path: &Path) -> Result<usize, ScanError> {
    if head.get(..MAGIC.len()) != Some(MAGIC) {
        return Err(file_error(
            path,
            "not a readable .npy file: it does not start with \\x93NUMPY, as every .npy file does",
        ));
    }
    match head.get(MAGIC.len()) {
        Some(1) => Ok(2),
        Some(2 | 3) => Ok(4),
        Some(major) => Err(file_error(
            path,
            format!("not a readable .npy file: format version {major} (numpy writes 1 to 3)"),
        )),
        None => Err(file_error(
            path,
            "not a readable .npy file: it ends in its preamble",
        )),
    }
}

/// The header's length as the preamble states it, refused above [`MAX_HEADER_BYTES`].
fn header_len(head: &[u8], path: &Path) -> Result<usize, ScanError> {
    let at = MAGIC.len() + 2;
    let size_bytes = header_size_bytes(head, path)?;
    let ends = || file_error(path, "not a readable .npy file: it ends in its preamble");
    let field = head.get(at..at + size_bytes).ok_or_else(ends)?;
    let len = field
        .iter()
        .rev()
        .fold(0usize, |len, &byte| (len << 8) | usize::from(byte));
    if len > MAX_HEADER_BYTES {
        return Err(file_error(
            path,
            format!(
                "not a readable .npy file: its header claims {len} bytes, over the \
                 {MAX_HEADER_BYTES} numpy itself reads (max_header_size)"
            ),
        ));
    }
    Ok(len)
}

/// Checks the preamble and the header of a `.npy` file's first bytes before npyz reads them:
/// the header's stated length at most [`MAX_HEADER_BYTES`], its brackets nested at most
/// [`MAX_HEADER_NESTING`] deep (outside quoted strings).
fn check_header(bytes: &[u8], path: &Path) -> Result<(), ScanError> {
    let len = header_len(bytes, path)?;
    let start = MAGIC.len() + 2 + header_size_bytes(bytes, path)?;
    let header = bytes.get(start..).unwrap_or_default();
    let header = &header[..len.min(header.len())];
    let mut depth = 0usize;
    let mut quote = None;
    let mut escaped = false;
    for &byte in header {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if byte == b'\\' {
                    escaped = true;
                } else if byte == q {
                    quote = None;
                }
            }
            None => match byte {
                b'\'' | b'"' => quote = Some(byte),
                b'{' | b'[' | b'(' => {
                    depth += 1;
                    if depth > MAX_HEADER_NESTING {
                        return Err(file_error(
                            path,
                            format!(
                                "not a readable .npy file: its header nests brackets more than \
                                 {MAX_HEADER_NESTING} deep (a plain array's nests two)"
                            ),
                        ));
                    }
                }
                b'}' | b']' | b')' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    Ok(())
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
    edge_from(read_header_bytes(bytes, path)?, path)
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
    lengths_from(read_header_bytes(bytes, path)?, path, dims)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dims() -> ScanDims {
        ScanDims {
            batch: 1,
            positions: 3,
            durations: 1,
            labels: 2,
        }
    }

    fn problem(result: Result<(ScanDims, Vec<f32>), ScanError>) -> String {
        match result {
            Err(ScanError::File { problem, .. }) => problem,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_written_edge_reads_back_from_its_file_and_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("edge.npy");
        let values: Vec<f32> = (0..8).map(|i| i as f32 * 0.5).collect();
        write_grad(&path, dims(), &values).unwrap();
        let (read_dims, read) = read_edge(&path).unwrap();
        assert_eq!((read_dims, read.clone()), (dims(), values));
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(read_edge_bytes(&bytes, &path).unwrap().1, read);
    }

    #[test]
    fn a_header_longer_than_numpy_reads_is_refused_before_it_is_allocated() {
        // Found by the `npy` fuzz target: version 3, a header of 0xffffff2d bytes.
        let bytes = b"\x93NUMPY\x03\x00\x2d\xff\xff\xff\x39\x00\x20\x31";
        let message = problem(read_edge_bytes(bytes, Path::new("f.npy")));
        assert!(message.contains("claims 4294967085 bytes"), "{message}");
        assert!(message.contains("10000"), "{message}");
    }

    #[test]
    fn a_header_of_deeply_nested_brackets_is_refused_at_once() {
        // Found by the `npy` fuzz target: npyz's parser took over 10 s on such a header.
        let mut header = b"{'descr': '<f4', 'shape': ".to_vec();
        header.extend(std::iter::repeat_n(b'[', 60));
        header.extend(b"1");
        header.extend(std::iter::repeat_n(b']', 60));
        header.extend(b"}\n");
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((header.len() as u16).to_le_bytes());
        bytes.extend(&header);
        let started = std::time::Instant::now();
        let message = problem(read_edge_bytes(&bytes, Path::new("f.npy")));
        assert!(
            message.contains("nests brackets more than 4 deep"),
            "{message}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        // Brackets inside a quoted string are text, not nesting.
        let quoted = b"{'descr': '<f4', 'x': '[[[[[[[[', 'fortran_order': False, 'shape': (1, 2, 1, 2, 2), }\n";
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((quoted.len() as u16).to_le_bytes());
        bytes.extend(quoted);
        bytes.extend(std::iter::repeat_n(0u8, 16));
        let message = problem(read_edge_bytes(&bytes, Path::new("f.npy")));
        assert!(!message.contains("nests"), "{message}");
    }

    #[test]
    fn a_file_that_is_not_npy_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e.npy");
        std::fs::write(&path, b"PK\x03\x04 a zip").unwrap();
        let message = problem(read_edge(&path));
        assert!(
            message.contains("not a readable .npy file: it does not start with"),
            "{message}"
        );
        std::fs::write(&path, b"\x93NUMPY\x07\x00").unwrap();
        assert!(problem(read_edge(&path)).contains("format version 7"));
    }
}
