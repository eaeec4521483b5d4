//! The overloads of an operator, with their schemas, as libtorch registered them.

use std::ptr;

use super::shim_error::{c_string, take_error, take_whole_string, ShimError};
use super::sys;

pub use replay_core::signature::overload::{OpSchema, SchemaArg};

/// Whether libtorch's dispatch table (composite kernels included) can run an overload on
/// each device: `aten::_flash_attention_forward` has no CPU kernel, `aten::add` both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub struct KernelDevices {
    pub cpu: bool,
    pub cuda: bool,
}

#[derive(serde::Deserialize)]
struct Overload {
    #[serde(flatten)]
    schema: OpSchema,
    kernels: KernelDevices,
}

/// Every overload of `name` (for example `aten::layer_norm`).
pub fn overloads(name: &str) -> Result<Vec<OpSchema>, ShimError> {
    Ok(overloads_with_kernels(name)?
        .into_iter()
        .map(|(schema, _)| schema)
        .collect())
}

/// [`overloads`], each with the devices it has a kernel for.
pub fn overloads_with_kernels(name: &str) -> Result<Vec<(OpSchema, KernelDevices)>, ShimError> {
    let c_name = c_string(name)?;
    let mut error = ptr::null_mut();
    // SAFETY: valid C string; the shim catches every C++ exception.
    let raw = unsafe { sys::replay_op_overloads(c_name.as_ptr(), &mut error) };
    // SAFETY: `raw` is null or the shim's JSON string, taken once.
    let Some(json) = (unsafe { take_whole_string(raw) }) else {
        return Err(take_error(error));
    };
    let parsed: Vec<Overload> = serde_json::from_str(&json)
        .map_err(|e| ShimError(format!("bad schema JSON from the shim: {e}")))?;
    Ok(parsed.into_iter().map(|o| (o.schema, o.kernels)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_overloads_of_add() {
        let schemas = overloads("aten::add").unwrap();
        let tensor = schemas
            .iter()
            .find(|s| s.overload == "Tensor")
            .expect("aten::add.Tensor");
        let names: Vec<&str> = tensor.args.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["self", "other", "alpha"]);
        assert_eq!(tensor.args[1].ty, "Tensor");
        assert!(tensor.args[2].has_default && tensor.args[2].kwarg_only);
        assert!(schemas
            .iter()
            .any(|s| s.overload == "out" && s.args.iter().any(|a| a.writes)));
    }

    #[test]
    fn each_overload_says_which_devices_have_a_kernel_for_it() {
        let add = overloads_with_kernels("aten::add").unwrap();
        let (_, tensor) = add.iter().find(|(s, _)| s.overload == "Tensor").unwrap();
        assert_eq!(
            *tensor,
            KernelDevices {
                cpu: true,
                cuda: true
            }
        );
        // A composite op runs wherever its parts do.
        let linear = overloads_with_kernels("aten::linear").unwrap();
        assert!(linear.iter().any(|(s, k)| s.overload.is_empty() && k.cpu));
        // Flash attention exists on CUDA alone.
        let flash = overloads_with_kernels("aten::_flash_attention_forward").unwrap();
        assert!(flash.iter().all(|(_, k)| !k.cpu), "{flash:?}");
    }

    #[test]
    fn unknown_operator_is_an_error_not_an_abort() {
        let err = overloads("aten::no_such_op").unwrap_err();
        assert!(err.0.contains("aten::no_such_op"), "{err}");
    }
}
