//! A generated kernel's arguments rebuilt from the capture's record (`kernels.json`).
//!
//! Tensors get exactly the recorded sizes, strides and storage offset, in storage large enough
//! for every element the layout reaches; floating tensors hold normal(0, 1) values (a kernel's
//! time does not depend on them), integer and boolean tensors the values the capture saved
//! (they may index other tensors: random ones could reach outside them) or zeros when none were
//! saved. Scalars take the width of the C type the kernel declares. The entry point takes one
//! `void*` per argument pointing at its value, in the kernel's order.

use std::ffi::c_void;
use std::path::Path;

use replay_core::inductor::{KernelArg, TensorArg};
use replay_core::signature::dtype::Dtype;
use tch::{Kind, Tensor};

use super::error::Tier4Error;
use crate::device::Device;
use crate::replay::tier3_tensors::storage_len;
use crate::torch::dtype::kind_of;

/// One argument's value, kept where the entry point's pointer to it stays valid.
enum Slot {
    /// The tensor (kept alive) and its data pointer.
    Tensor(Tensor, Box<*mut c_void>),
    I64(Box<i64>),
    I32(Box<i32>),
    U64(Box<u64>),
    F32(Box<f32>),
    F64(Box<f64>),
    Bool(Box<bool>),
    /// A null pointer (an optional tensor the graph did not pass).
    Null(Box<*mut c_void>),
}

/// The C scalar types a generated kernel's signature may hold.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    I64,
    I32,
    U64,
    F32,
    F64,
    Bool,
    Pointer,
}

fn scalar_of(c_type: &str) -> Option<Scalar> {
    let t = c_type.replace("const ", "");
    let t = t.trim();
    if t.ends_with('*') {
        return Some(Scalar::Pointer);
    }
    Some(match t {
        "int64_t" | "long" | "long long" => Scalar::I64,
        "int32_t" | "int" => Scalar::I32,
        "uintptr_t" | "uint64_t" | "size_t" => Scalar::U64,
        "float" => Scalar::F32,
        "double" => Scalar::F64,
        "bool" => Scalar::Bool,
        _ => return None,
    })
}

/// The rebuilt arguments of one call and the `void*` array that points at them.
pub struct KernelArguments {
    slots: Vec<Slot>,
    pointers: Vec<*mut c_void>,
}

impl KernelArguments {
    /// Rebuilds `args` (C types `arg_types`) on `device`; `folder` is where the record's
    /// relative paths start.
    pub fn build(
        args: &[KernelArg],
        arg_types: &[String],
        device: &Device,
        folder: &Path,
    ) -> Result<Self, Tier4Error> {
        if args.len() != arg_types.len() {
            return Err(Tier4Error::Unsupported(format!(
                "{} arguments recorded for a kernel of {}",
                args.len(),
                arg_types.len()
            )));
        }
        let mut slots = Vec::with_capacity(args.len());
        for (i, (arg, c_type)) in args.iter().zip(arg_types).enumerate() {
            let bad =
                |what: String| Tier4Error::Unsupported(format!("argument {i} ({c_type}): {what}"));
            let scalar =
                scalar_of(c_type).ok_or_else(|| bad("a C type replay does not pass".into()))?;
            let slot = match (arg, scalar) {
                (KernelArg::Tensor(t), Scalar::Pointer) => {
                    let t = tensor(t, device, folder).map_err(bad)?;
                    let ptr = t.data_ptr();
                    Slot::Tensor(t, Box::new(ptr))
                }
                (KernelArg::None(_), Scalar::Pointer) => Slot::Null(Box::new(std::ptr::null_mut())),
                (KernelArg::Int(v), Scalar::I64) => Slot::I64(Box::new(*v)),
                (KernelArg::Int(v), Scalar::I32) => Slot::I32(Box::new(
                    i32::try_from(*v).map_err(|_| bad(format!("{v} does not fit")))?,
                )),
                (KernelArg::Int(v), Scalar::U64) => Slot::U64(Box::new(
                    u64::try_from(*v).map_err(|_| bad(format!("{v} does not fit")))?,
                )),
                (KernelArg::Int(v), Scalar::F32) => Slot::F32(Box::new(*v as f32)),
                (KernelArg::Int(v), Scalar::F64) => Slot::F64(Box::new(*v as f64)),
                (KernelArg::Float(v), Scalar::F32) => Slot::F32(Box::new(*v as f32)),
                (KernelArg::Float(v), Scalar::F64) => Slot::F64(Box::new(*v)),
                (KernelArg::Bool(v), Scalar::Bool) => Slot::Bool(Box::new(*v)),
                (KernelArg::Bool(v), Scalar::I64) => Slot::I64(Box::new(i64::from(*v))),
                (KernelArg::Other(kind), _) => {
                    return Err(bad(format!(
                        "the capture recorded a {kind}, which replay cannot rebuild"
                    )))
                }
                (arg, _) => return Err(bad(format!("recorded as {arg:?}"))),
            };
            slots.push(slot);
        }
        let pointers = slots
            .iter_mut()
            .map(|slot| match slot {
                Slot::Tensor(_, ptr) | Slot::Null(ptr) => {
                    (&mut **ptr) as *mut *mut c_void as *mut c_void
                }
                Slot::I64(v) => (&mut **v) as *mut i64 as *mut c_void,
                Slot::I32(v) => (&mut **v) as *mut i32 as *mut c_void,
                Slot::U64(v) => (&mut **v) as *mut u64 as *mut c_void,
                Slot::F32(v) => (&mut **v) as *mut f32 as *mut c_void,
                Slot::F64(v) => (&mut **v) as *mut f64 as *mut c_void,
                Slot::Bool(v) => (&mut **v) as *mut bool as *mut c_void,
            })
            .collect();
        Ok(KernelArguments { slots, pointers })
    }

    /// The array the entry point reads: one pointer per argument, to its value.
    pub fn as_ptr(&self) -> *const *mut c_void {
        self.pointers.as_ptr()
    }

    /// The same array, as `cuLaunchKernel`'s `kernelParams` takes it.
    pub fn pointers_mut(&mut self) -> &mut [*mut c_void] {
        &mut self.pointers
    }

    /// Appends a pointer argument of value `ptr` (a device buffer, or null).
    pub fn push_pointer(&mut self, ptr: *mut c_void) {
        let mut boxed = Box::new(ptr);
        self.pointers
            .push((&mut *boxed) as *mut *mut c_void as *mut c_void);
        self.slots.push(Slot::Null(boxed));
    }

    /// The bytes each argument's value takes, in order: what a kernel's parameter list must
    /// declare for these to be passed by value.
    pub fn sizes(&self) -> Vec<u32> {
        self.slots
            .iter()
            .map(|slot| match slot {
                Slot::Tensor(..) | Slot::Null(_) | Slot::I64(_) | Slot::U64(_) | Slot::F64(_) => 8,
                Slot::I32(_) | Slot::F32(_) => 4,
                Slot::Bool(_) => 1,
            })
            .collect()
    }

    /// The value of pointer argument `i` (a tensor's data pointer, or null), if it is one.
    pub fn pointer(&self, i: usize) -> Option<*mut c_void> {
        match self.slots.get(i)? {
            Slot::Tensor(_, ptr) | Slot::Null(ptr) => Some(**ptr),
            _ => None,
        }
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

/// A tensor of the recorded layout, its values as the record says.
fn tensor(arg: &TensorArg, device: &Device, folder: &Path) -> Result<Tensor, String> {
    let (sizes, strides, offset) = (&arg.sizes, &arg.strides, arg.storage_offset);
    let dtype =
        Dtype::from_name(&arg.dtype).ok_or_else(|| format!("unknown dtype {:?}", arg.dtype))?;
    if sizes.len() != strides.len() {
        return Err(format!(
            "{} sizes but {} strides",
            sizes.len(),
            strides.len()
        ));
    }
    if sizes.iter().any(|&s| s < 0) || strides.iter().any(|&s| s < 0) || offset < 0 {
        return Err(format!(
            "a negative size, stride or offset in {sizes:?} / {strides:?} + {offset}"
        ));
    }
    let kind = kind_of(dtype);
    let len = offset + storage_len(sizes, strides).max(0);
    let err = |e: tch::TchError| e.to_string();
    let storage = if is_floating(kind) {
        Tensor::f_randn([len.max(1)], (Kind::Float, device.torch()))
            .and_then(|t| t.f_to_kind(kind))
            .map_err(err)?
    } else {
        Tensor::f_zeros([len.max(1)], (kind, device.torch())).map_err(err)?
    };
    let view = storage
        .f_as_strided(sizes.as_slice(), strides.as_slice(), Some(offset))
        .map_err(err)?;
    if let Some(values) = &arg.values {
        let saved = read_values(&folder.join(values), kind, sizes)?;
        let saved = saved.f_to_device(device.torch()).map_err(err)?;
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
            "{} holds {shape:?}, the argument is {sizes:?}",
            path.display()
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
    use std::path::PathBuf;

    fn tensor_arg(dtype: &str, sizes: &[i64], strides: &[i64], offset: i64) -> KernelArg {
        KernelArg::Tensor(TensorArg {
            dtype: dtype.into(),
            sizes: sizes.to_vec(),
            strides: strides.to_vec(),
            storage_offset: offset,
            values: None,
        })
    }

    fn types(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tensors_get_the_recorded_layout_and_pointers_point_at_each_value() {
        let args = [
            tensor_arg("float32", &[4, 3], &[1, 4], 2),
            KernelArg::Int(17),
            KernelArg::Float(0.5),
            KernelArg::Int(-3),
        ];
        let c_types = types(&["const float*", "const int64_t", "float", "int32_t"]);
        let built =
            KernelArguments::build(&args, &c_types, Device::host(), Path::new(".")).unwrap();
        assert_eq!(built.len(), 4);
        let t = built.tensor(0).unwrap();
        assert_eq!(t.size(), [4, 3]);
        assert_eq!(t.stride(), [1, 4]);
        // The pointers: the tensor's data pointer (offset applied), 17, 0.5, -3 as int32.
        unsafe {
            let p = built.as_ptr();
            assert_eq!(*(*p as *const *mut c_void), t.data_ptr());
            assert_eq!(*(*p.add(1) as *const i64), 17);
            assert_eq!(*(*p.add(2) as *const f32), 0.5);
            assert_eq!(*(*p.add(3) as *const i32), -3);
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
        let ids = |sizes: Vec<i64>, strides: Vec<i64>| {
            KernelArg::Tensor(TensorArg {
                dtype: "int64".into(),
                sizes,
                strides,
                storage_offset: 0,
                values: Some(PathBuf::from("ids.npy").display().to_string()),
            })
        };
        let c_types = types(&["const int64_t*"]);
        let built = KernelArguments::build(
            &[ids(vec![2, 3], vec![3, 1])],
            &c_types,
            Device::host(),
            dir.path(),
        )
        .unwrap();
        let got: Vec<i64> = Vec::<i64>::try_from(built.tensor(0).unwrap().flatten(0, -1)).unwrap();
        assert_eq!(got, [5, 7, 9, 11, 13, 15]);
        // A file whose count does not match the argument is refused, naming it.
        let e = KernelArguments::build(
            &[ids(vec![4], vec![1])],
            &c_types,
            Device::host(),
            dir.path(),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("ids.npy"), "{e}");
    }

    #[test]
    fn bad_layouts_counts_and_types_are_refused() {
        let one = types(&["float*"]);
        let e = KernelArguments::build(
            &[tensor_arg("float32", &[4, 3], &[1], 0)],
            &one,
            Device::host(),
            Path::new("."),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("argument 0"), "{e}");
        let e = KernelArguments::build(&[], &one, Device::host(), Path::new("."))
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("0 arguments recorded for a kernel of 1"),
            "{e}"
        );
        let e = KernelArguments::build(
            &[KernelArg::Other("Generator".into())],
            &one,
            Device::host(),
            Path::new("."),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("Generator"), "{e}");
        let e = KernelArguments::build(
            &[KernelArg::Int(1 << 40)],
            &types(&["int32_t"]),
            Device::host(),
            Path::new("."),
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("does not fit"), "{e}");
    }
}
