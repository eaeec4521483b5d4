//! An Inductor C++ kernel replayed on the CPU.
//!
//! The library Inductor itself loads is a Python extension (it references Python's C API, so a
//! process without Python cannot open it). `replay capture --compile` therefore rebuilds each
//! kernel's source, without its Python binding, into a library of its own that exports one
//! uniform entry point, `extern "C" void replay_entry(void** args)`: `args[i]` points at the
//! kernel's i-th argument (a data pointer, an `int64_t`, a `float`), and the entry calls the
//! kernel with each cast to the C type the kernel declares. One signature for every kernel, so
//! no argument list is ever guessed here. A kernel built with profiling on also calls libtorch's
//! AOTI record-function shim, which resolves from the libtorch this process links.

use std::ffi::c_void;
use std::path::{Path, PathBuf};

use super::arguments::KernelArguments;
use super::error::Tier4Error;
use crate::measure::{MeasureError, Placement, Target};

/// `void replay_entry(void** args)`.
type Entry = unsafe extern "C" fn(*const *mut c_void);

/// A kernel's library, open, with its entry point.
pub struct CpuKernel {
    entry: Entry,
    path: PathBuf,
    // Kept open for as long as `entry` may be called; dropped last.
    _library: libloading::Library,
}

impl CpuKernel {
    /// Opens `path` and finds `symbol` in it.
    pub fn open(path: &Path, symbol: &str) -> Result<CpuKernel, Tier4Error> {
        if !path.is_file() {
            return Err(Tier4Error::Unsupported(format!(
                "the kernel's library {} is not there (capture again with `replay capture --compile`)",
                path.display()
            )));
        }
        // SAFETY: the library is one the capture built from Inductor's generated source; its
        // initialisers are the C++ runtime's.
        let library = unsafe { libloading::Library::new(path) }
            .map_err(|e| Tier4Error::Failed(format!("cannot open {}: {e}", path.display())))?;
        // SAFETY: the capture builds `symbol` with exactly the `Entry` signature.
        let entry: Entry = unsafe {
            *library.get::<Entry>(symbol.as_bytes()).map_err(|e| {
                Tier4Error::Failed(format!("{} has no `{symbol}`: {e}", path.display()))
            })?
        };
        Ok(CpuKernel {
            entry,
            path: path.to_path_buf(),
            _library: library,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// One call with `args`.
    ///
    /// # Safety
    /// `args` must be the arguments the kernel was recorded with (count, order and layouts):
    /// the kernel reads and writes through them with no checks of its own.
    pub unsafe fn call(&self, args: &KernelArguments) {
        (self.entry)(args.as_ptr())
    }
}

/// A generated CPU kernel and the arguments of one recorded call: a measurement target.
pub struct CpuKernelTarget {
    kernel: CpuKernel,
    args: KernelArguments,
}

impl CpuKernelTarget {
    /// `args` must come from the same kernel's record (the tier checks the count against the
    /// recorded argument types before it builds them).
    pub fn new(kernel: CpuKernel, args: KernelArguments) -> CpuKernelTarget {
        CpuKernelTarget { kernel, args }
    }

    pub fn arguments(&self) -> &KernelArguments {
        &self.args
    }
}

impl Target for CpuKernelTarget {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            // SAFETY: the arguments were rebuilt from this kernel's own record.
            unsafe { self.kernel.call(&self.args) };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use replay_core::inductor::{KernelArg, TensorArg};
    use tch::{Kind, Tensor};

    /// A kernel in the shape Inductor writes them, with the entry the capture adds, built with
    /// the system's C compiler.
    fn build_library(dir: &Path) -> PathBuf {
        let source = dir.join("k.c");
        std::fs::write(
            &source,
            r#"
#include <stdint.h>
void kernel(const float* in_ptr0, float* out_ptr0, const int64_t ks0, const float alpha) {
    for (int64_t i = 0; i < ks0; i++) out_ptr0[i] = alpha * in_ptr0[i] + 1.0f;
}
void replay_entry(void** args) {
    kernel(*(const float**)args[0], *(float**)args[1], *(const int64_t*)args[2],
           *(const float*)args[3]);
}
"#,
        )
        .unwrap();
        let library = dir.join("k.so");
        let status = std::process::Command::new("cc")
            .args(["-O2", "-shared", "-fPIC", "-o"])
            .arg(&library)
            .arg(&source)
            .status()
            .expect("a C compiler (cc)");
        assert!(status.success());
        library
    }

    #[test]
    fn the_entry_point_calls_the_kernel_with_every_argument() {
        let dir = tempfile::tempdir().unwrap();
        let library = build_library(dir.path());
        let kernel = CpuKernel::open(&library, "replay_entry").unwrap();
        let tensor = |n: i64| {
            KernelArg::Tensor(TensorArg {
                dtype: "float32".into(),
                sizes: vec![n],
                strides: vec![1],
                storage_offset: 0,
                values: None,
            })
        };
        let args = [
            tensor(6),
            tensor(6),
            KernelArg::Int(6),
            KernelArg::Float(0.5),
        ];
        let c_types: Vec<String> = ["const float*", "float*", "const int64_t", "const float"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let built = KernelArguments::build(&args, &c_types, Device::host(), dir.path()).unwrap();
        let mut target = CpuKernelTarget::new(kernel, built);
        target.run(3).unwrap();
        let (input, output) = (
            target.arguments().tensor(0).unwrap(),
            target.arguments().tensor(1).unwrap(),
        );
        let want: Tensor = input * 0.5 + 1.0;
        assert!(
            output.allclose(&want, 1e-6, 1e-6, false),
            "{output} vs {want}"
        );
        assert_eq!(output.kind(), Kind::Float);
    }

    #[test]
    fn a_missing_library_or_entry_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let e = CpuKernel::open(&dir.path().join("gone.so"), "replay_entry")
            .err()
            .unwrap();
        assert!(
            matches!(&e, Tier4Error::Unsupported(m) if m.contains("gone.so") && m.contains("--compile")),
            "{e}"
        );
        let library = build_library(dir.path());
        let e = CpuKernel::open(&library, "no_such_entry").err().unwrap();
        assert!(e.to_string().contains("no_such_entry"), "{e}");
    }
}
