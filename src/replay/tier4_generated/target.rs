//! The measurement target of a tier-4 signature, from the kept Inductor cache.

use replay_core::inductor::{InductorKernels, KernelCall};
use replay_core::signature::schema::{GeneratedKind, Signature};

use crate::device::Device;
use crate::measure::Target;

use super::error::Tier4Error;
use super::{arguments, cpu_kernel, triton_kernel};

/// The report's name of how an Inductor C++ kernel is replayed.
pub const CPP_METHOD: &str = "inductor C++ kernel";
/// The report's name of how a Triton kernel is replayed.
pub const TRITON_METHOD: &str = "triton kernel";
/// What each replayed Triton kernel's result says of its method.
pub const TRITON_LAUNCH_METHOD: &str = "triton kernel: its cubin by cuLaunchKernel";

/// The call of a kernel that is timed: the layout the recorded pass used most (the first of
/// those on a tie). A trace records a generated kernel by name only, so its signature stands
/// for every call; kernels.json says which layouts those were.
pub fn timed_call(calls: &[KernelCall]) -> Option<&KernelCall> {
    calls
        .iter()
        .enumerate()
        .max_by_key(|(i, c)| (c.count, std::cmp::Reverse(*i)))
        .map(|(_, c)| c)
}

/// The measurement target of tier-4 signature `sig` on `device`, from the kept cache `kernels`,
/// and the name of its method.
pub fn target(
    sig: &Signature,
    kernels: &InductorKernels,
    device: &Device,
) -> Result<(Box<dyn Target>, &'static str), Tier4Error> {
    let kernel = kernels.by_trace_name(&sig.name).ok_or_else(|| {
        Tier4Error::Unsupported(format!(
            "{} records no kernel named {}",
            kernels.path.display(),
            sig.name
        ))
    })?;
    match kernel.kind {
        GeneratedKind::Triton => {
            let Device::Cuda(dev) = device else {
                return Err(Tier4Error::Unsupported(
                    "a Triton kernel runs on CUDA only; replay it with --device cuda".into(),
                ));
            };
            let launch = kernels
                .triton_launch(&sig.name)
                .map_err(|why| Tier4Error::Unsupported(format!("{}: {why}", kernel.name)))?;
            let call = timed_call(&kernel.calls).ok_or_else(|| {
                Tier4Error::Unsupported(format!("the capture recorded no call of {}", kernel.name))
            })?;
            let mut target = triton_kernel::cuda::TritonKernelTarget::new(
                dev,
                launch,
                &kernel.signature,
                call,
                &kernels.dir,
            )?;
            target.check_once()?;
            Ok((Box::new(target), TRITON_LAUNCH_METHOD))
        }
        GeneratedKind::InductorCpp => {
            let Device::Cpu(_) = device else {
                return Err(Tier4Error::Unsupported(
                    "an Inductor C++ kernel runs on the CPU; replay it with --device cpu".into(),
                ));
            };
            let (Some(library), Some(symbol)) = (&kernel.library, &kernel.symbol) else {
                return Err(Tier4Error::Unsupported(format!(
                    "{} names no library for {}",
                    kernels.path.display(),
                    kernel.name
                )));
            };
            let call = timed_call(&kernel.calls).ok_or_else(|| {
                Tier4Error::Unsupported(format!("the capture recorded no call of {}", kernel.name))
            })?;
            let args = arguments::KernelArguments::build(
                &call.args,
                &kernel.arg_types,
                device,
                &kernels.dir,
            )?;
            let cpu = cpu_kernel::CpuKernel::open(&kernels.resolve(library), symbol)?;
            Ok((
                Box::new(cpu_kernel::CpuKernelTarget::new(cpu, args)),
                CPP_METHOD,
            ))
        }
    }
}
