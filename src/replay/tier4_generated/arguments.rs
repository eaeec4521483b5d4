//! A generated kernel's arguments rebuilt from the capture's record.
//!
//! Tensors get exactly the recorded sizes, strides and storage offset, in storage large enough
//! for every element the layout reaches; floating tensors hold normal(0, 1) values (a kernel's
//! time does not depend on them), integer and boolean tensors the values the capture saved
//! (they may index other tensors: random ones could reach outside them) or zeros when none were
//! saved. The entry point takes one `void*` per argument pointing at its value: a tensor's
//! data pointer, an `int64_t` or a `float`, in the kernel's order.

use std::ffi::c_void;
use std::path::{Path, PathBuf};

use replay_core::signature::dtype::Dtype;
use tch::{Device, Kind, Tensor};

use super::Tier4Error;
use crate::replay::tier3_libtorch::storage_len;
use crate::torch::dtype::kind_of;

/// One argument as the capture recorded it.
#[derive(Debug, Clone, PartialEq)]
pub enum RecordedArg {
    Tensor {
        dtype: Dtype,
        sizes: Vec<i64>,
        strides: Vec<i64>,
        storage_offset: i64,
        /// An `.npy` file with the tensor's values (integer and boolean tensors).
        values: Option<PathBuf>,
    },
    Int(i64),
    Float(f64),
}

/// One argument's value, kept where the entry point's pointer to it stays valid.
enum Slot {
    /// The tensor (kept alive) and its data pointer.
    Tensor(Tensor, Box<*mut c_void>),
    Int(Box<i64>),
    Float(Box<f32>),
}

/// The rebuilt arguments of one call and the `void*` array that points at them.
pub struct KernelArguments {
    slots: Vec<Slot>,
    pointers: Vec<*mut c_void>,
}

impl KernelArguments {
    /// Rebuilds `args` on `device`; `folder` is where the record's relative paths start.
    pub fn build(args: &[RecordedArg], device: Device, folder: &Path) -> Result<Self, Tier4Error> {
        let mut slots = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            let slot = match arg {
                RecordedArg::Tensor {
                    dtype,
                    sizes,
                    strides,
                    storage_offset,
                    values,
                } => {
                    let values = values.as_ref().map(|v| folder.join(v));
                    let t = tensor(
                        *dtype,
                        sizes,
                        strides,
                        *storage_offset,
                        values.as_deref(),
                        device,
                    )
                    .map_err(|e| Tier4Error::Unsupported(format!("argument {i}: {e}")))?;
                    let ptr = t.data_ptr();
                    Slot::Tensor(t, Box::new(ptr))
                }
                RecordedArg::Int(v) => Slot::Int(Box::new(*v)),
                RecordedArg::Float(v) => Slot::Float(Box::new(*v as f32)),
            };
            slots.push(slot);
        }
        let pointers = slots
            .iter_mut()
            .map(|slot| match slot {
                Slot::Tensor(_, ptr) => (&mut **ptr) as *mut *mut c_void as *mut c_void,
                Slot::Int(v) => (&mut **v) as *mut i64 as *mut c_void,
                Slot::Float(v) => (&mut **v) as *mut f32 as *mut c_void,
            })
            .collect();
        Ok(KernelArguments { slots, pointers })
    }

    /// The array the entry point reads: one pointer per argument, to its value.
    pub fn as_ptr(&self) -> *const *mut c_void {
        self.pointers.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.pointers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pointers.is_empty()
    }

    /// The tensor of argument `i`, if it is one (for checks of what a call computed).
    pub fn tensor(&self, i: usize) -> Option<&Tensor> {
        match self.slots.get(i)? {
            Slot::Tensor(t, _) => Some(t),
            _ => None,
        }
    }
}

fn is_floating(kind: Kind) -> bool {
    matches!(
        kind,
        Kind::Float | Kind::Double | Kind::Half | Kind::BFloat16
    )
}

/// A tensor of the recorded layout, its values as the module says.
fn tensor(
    dtype: Dtype,
    sizes: &[i64],
    strides: &[i64],
    storage_offset: i64,
    values: Option<&Path>,
    device: Device,
) -> Result<Tensor, String> {
    if sizes.len() != strides.len() {
        return Err(format!(
            "{} sizes but {} strides",
            sizes.len(),
            strides.len()
        ));
    }
    if sizes.iter().any(|&s| s < 0) || strides.iter().any(|&s| s < 0) || storage_offset < 0 {
        return Err(format!(
            "a negative size, stride or offset in {sizes:?} / {strides:?} + {storage_offset}"
        ));
    }
    let kind = kind_of(dtype);
    let len = storage_offset + storage_len(sizes, strides).max(0);
    let err = |e: tch::TchError| e.to_string();
    let storage = if is_floating(kind) {
        Tensor::f_randn([len.max(1)], (Kind::Float, device))
            .and_then(|t| t.f_to_kind(kind))
            .map_err(err)?
    } else {
        Tensor::f_zeros([len.max(1)], (kind, device)).map_err(err)?
    };
    let view = storage
        .f_as_strided(sizes, strides, Some(storage_offset))
        .map_err(err)?;
    if let Some(path) = values {
        let saved = read_values(path, kind, sizes)?;
        let saved = saved.f_to_device(device).map_err(err)?;
        let mut target = view.shallow_clone();
        target.f_copy_(&saved).map_err(err)?;
    }
    Ok(view)
}

/// An `.npy` of integer or boolean values, as a tensor of `kind` shaped `sizes`.
fn read_values(path: &Path, kind: Kind, sizes: &[i64]) -> Result<Tensor, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let npy = npyz::NpyFile::new(&bytes[..])
        .map_err(|e| format!("{}: not an .npy file: {e}", path.display()))?;
    let shape: Vec<i64> = npy.shape().iter().map(|&d| d as i64).collect();
    let count: i64 = sizes.iter().product();
    if shape.iter().product::<i64>() != count {
        return Err(format!(
            "{} holds {:?}, the argument is {sizes:?}",
            path.display(),
            shape
        ));
    }
    let bad = |e: std::io::Error| format!("{}: {e}", path.display());
    let values: Vec<i64> = match npy.dtype() {
        npyz::DType::Plain(t) => match (t.type_char(), t.num_bytes()) {
            (npyz::TypeChar::Int, Some(8)) => npy.into_vec::<i64>().map_err(bad)?,
            (npyz::TypeChar::Int, Some(4)) => npy
                .into_vec::<i32>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
            (npyz::TypeChar::Bool, Some(1)) => npy
                .into_vec::<bool>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
            (npyz::TypeChar::Uint, Some(1)) => npy
                .into_vec::<u8>()
                .map_err(bad)?
                .into_iter()
                .map(i64::from)
                .collect(),
            _ => {
                return Err(format!(
                    "{}: values of dtype {t} are not read",
                    path.display()
                ))
            }
        },
        other => {
            return Err(format!(
                "{}: values of dtype {other:?} are not read",
                path.display()
            ))
        }
    };
    Tensor::f_from_slice(&values)
        .and_then(|t| t.f_reshape(sizes))
        .and_then(|t| t.f_to_kind(kind))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor_arg(dtype: Dtype, sizes: &[i64], strides: &[i64], offset: i64) -> RecordedArg {
        RecordedArg::Tensor {
            dtype,
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
            storage_offset: offset,
            values: None,
        }
    }

    #[test]
    fn tensors_get_the_recorded_layout_and_pointers_point_at_each_value() {
        let args = [
            tensor_arg(Dtype::Float32, &[4, 3], &[1, 4], 2),
            RecordedArg::Int(17),
            RecordedArg::Float(0.5),
        ];
        let built = KernelArguments::build(&args, Device::Cpu, Path::new(".")).unwrap();
        assert_eq!(built.len(), 3);
        let t = built.tensor(0).unwrap();
        assert_eq!(t.size(), [4, 3]);
        assert_eq!(t.stride(), [1, 4]);
        // The pointers: the tensor's data pointer (offset applied), 17, 0.5.
        unsafe {
            let p = built.as_ptr();
            assert_eq!(*(*p as *const *mut c_void), t.data_ptr());
            assert_eq!(*(*p.add(1) as *const i64), 17);
            assert_eq!(*(*p.add(2) as *const f32), 0.5);
        }
        // The layout's last element, 2 + 3·1 + 2·4 = 13 floats past the storage's start, is
        // readable: a copy touches every element.
        assert_eq!(t.copy().size(), [4, 3]);
    }

    #[test]
    fn integer_tensors_hold_the_saved_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ids.npy");
        let mut out = Vec::new();
        {
            use npyz::WriterBuilder;
            let mut w = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&[2, 3])
                .writer(&mut out)
                .begin_nd()
                .unwrap();
            w.extend([5i64, 7, 9, 11, 13, 15]).unwrap();
            w.finish().unwrap();
        }
        std::fs::write(&path, out).unwrap();
        let args = [RecordedArg::Tensor {
            dtype: Dtype::Int64,
            sizes: vec![2, 3],
            strides: vec![3, 1],
            storage_offset: 0,
            values: Some(PathBuf::from("ids.npy")),
        }];
        let built = KernelArguments::build(&args, Device::Cpu, dir.path()).unwrap();
        let t = built.tensor(0).unwrap();
        let got: Vec<i64> = Vec::<i64>::try_from(t.flatten(0, -1)).unwrap();
        assert_eq!(got, [5, 7, 9, 11, 13, 15]);
        // A file whose count does not match the argument is refused, naming it.
        let args = [RecordedArg::Tensor {
            dtype: Dtype::Int64,
            sizes: vec![4],
            strides: vec![1],
            storage_offset: 0,
            values: Some(PathBuf::from("ids.npy")),
        }];
        let e = KernelArguments::build(&args, Device::Cpu, dir.path())
            .err()
            .unwrap();
        assert!(e.to_string().contains("ids.npy"), "{e}");
    }

    #[test]
    fn bad_layouts_are_refused() {
        let args = [tensor_arg(Dtype::Float32, &[4, 3], &[1], 0)];
        let e = KernelArguments::build(&args, Device::Cpu, Path::new("."))
            .err()
            .unwrap();
        assert!(e.to_string().contains("argument 0"), "{e}");
    }
}
