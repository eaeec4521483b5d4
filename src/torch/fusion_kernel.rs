//! A TorchScript fusion group's kernel: the group's subgraph (IR text, as the optimised graph
//! TorchScript ran holds it) compiled into NNC's `TensorExprKernel`, the op TorchScript runs
//! for a `prim::TensorExprGroup` node, through `shim/fusion_group.{h,cpp}`; and
//! [`reference_outputs`], the same subgraph run unfused, op by op, by TorchScript's
//! interpreter (the aten kernels eager PyTorch calls), which a replayed group is checked against.

use std::ffi::{c_void, CStr};
use std::ptr::NonNull;

use tch::Tensor;

use super::shim_error::{c_string, take_error};
use super::sys;
use super::ShimError;

/// Whether this libtorch has NNC's LLVM code generator. Without it (the pip wheels), a group's
/// CPU kernel runs in NNC's IR interpreter, as TorchScript's did where such a trace was
/// captured: hundreds to thousands of times slower than the aten ops it fuses.
pub fn llvm_available() -> bool {
    // SAFETY: no arguments; the shim catches every C++ exception.
    unsafe { sys::replay_fusion_llvm_available() != 0 }
}

/// A compiled fusion group, owned by the shim.
pub struct FusionKernel {
    raw: NonNull<sys::RawFusionKernel>,
}

fn pointers(inputs: &[Tensor]) -> Vec<*mut c_void> {
    inputs.iter().map(|t| t.as_ptr() as *mut c_void).collect()
}

impl FusionKernel {
    /// Compiles `graph_ir`. `te_must_use_llvm_cpu` is the fuser switch the capture ran under
    /// (whether a CPU kernel must be LLVM code, or may run in NNC's IR interpreter); `None`
    /// leaves this process's setting.
    pub fn new(graph_ir: &str, te_must_use_llvm_cpu: Option<bool>) -> Result<Self, ShimError> {
        let text = c_string(graph_ir)?;
        let flag = te_must_use_llvm_cpu.map_or(-1, i32::from);
        let mut error = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string and an error out-parameter the shim may fill.
        let raw = unsafe { sys::replay_fusion_kernel_new(text.as_ptr(), flag, &mut error) };
        NonNull::new(raw)
            .map(|raw| FusionKernel { raw })
            .ok_or_else(|| take_error(error))
    }

    /// The kernel's name as TorchScript gives it (and the profiler records it).
    pub fn name(&self) -> String {
        // SAFETY: the name is owned by the live kernel and NUL-terminated.
        unsafe { CStr::from_ptr(sys::replay_fusion_kernel_name(self.raw.as_ptr())) }
            .to_string_lossy()
            .into_owned()
    }

    /// How many inputs the group takes.
    pub fn inputs(&self) -> usize {
        // SAFETY: a live kernel.
        unsafe { sys::replay_fusion_kernel_inputs(self.raw.as_ptr()) }
    }

    /// Runs the kernel `calls` times on `inputs`.
    pub fn run(&mut self, inputs: &[Tensor], calls: u64) -> Result<(), ShimError> {
        let ptrs = pointers(inputs);
        let mut error = std::ptr::null_mut();
        // SAFETY: live tensors for the duration of the call, a live kernel.
        let n = unsafe {
            sys::replay_fusion_kernel_run(
                self.raw.as_ptr(),
                ptrs.as_ptr(),
                ptrs.len(),
                calls,
                &mut error,
            )
        };
        if n < 0 {
            return Err(take_error(error));
        }
        Ok(())
    }

    /// The outputs of the last run.
    pub fn outputs(&self) -> Vec<Tensor> {
        (0..)
            .map_while(|i| {
                // SAFETY: a live kernel; the shim hands over a new tensor or null.
                let t = unsafe { sys::replay_fusion_kernel_output(self.raw.as_ptr(), i) };
                // SAFETY: a new torch::Tensor* the shim allocated, now owned here.
                (!t.is_null()).then(|| unsafe { Tensor::from_ptr(t as *mut _) })
            })
            .collect()
    }
}

impl Drop for FusionKernel {
    fn drop(&mut self) {
        // SAFETY: the kernel is freed once, here.
        unsafe { sys::replay_fusion_kernel_free(self.raw.as_ptr()) }
    }
}

/// Switches TorchScript's fuser on for the CPU in this process (off by default), as `replay
/// capture --fuse-on-cpu` does in its Python process: a TorchScript model loaded after this
/// runs its element-wise chains as fusion groups, as on a GPU.
pub fn switch_on_cpu_fuser() -> Result<(), ShimError> {
    let mut error = std::ptr::null_mut();
    // SAFETY: an error out-parameter the shim may fill.
    if unsafe { sys::replay_fuser_on_cpu(&mut error) } < 0 {
        return Err(take_error(error));
    }
    Ok(())
}

/// Most outputs a fusion group returns that the reference collects.
const MAX_OUTPUTS: usize = 64;

/// `graph_ir` run unfused on `inputs` by TorchScript's interpreter: each aten op of the
/// subgraph called in turn, no fuser involved.
pub fn reference_outputs(graph_ir: &str, inputs: &[Tensor]) -> Result<Vec<Tensor>, ShimError> {
    let text = c_string(graph_ir)?;
    let ptrs = pointers(inputs);
    let mut outputs: Vec<*mut c_void> = vec![std::ptr::null_mut(); MAX_OUTPUTS];
    let mut error = std::ptr::null_mut();
    // SAFETY: live tensors, an output array of MAX_OUTPUTS slots the shim fills in part.
    let n = unsafe {
        sys::replay_fusion_reference(
            text.as_ptr(),
            ptrs.as_ptr(),
            ptrs.len(),
            outputs.as_mut_ptr(),
            MAX_OUTPUTS,
            &mut error,
        )
    };
    if n < 0 {
        return Err(take_error(error));
    }
    let filled = (n as usize).min(MAX_OUTPUTS);
    let tensors = outputs[..filled]
        .iter()
        // SAFETY: new torch::Tensor* the shim allocated, each now owned here once.
        .map(|&t| unsafe { Tensor::from_ptr(t as *mut _) })
        .collect();
    if n as usize > MAX_OUTPUTS {
        return Err(ShimError(format!(
            "the group returned {n} outputs; the reference reads at most {MAX_OUTPUTS}"
        )));
    }
    Ok(tensors)
}
