//! Which overload of an aten operator a recorded call is: the rule is the torch-free core's
//! ([`replay_core::signature::overload`]); this side asks libtorch's dispatcher for the
//! schemas of any op (classification carries the GEMM ops' own).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

pub use replay_core::signature::overload::*;

use super::recorded::RecordedInput;
use crate::torch::overloads::{overloads_with_kernels, KernelDevices};

/// What libtorch's dispatcher says of one op: its schemas, and the devices each has a kernel for.
struct OpEntry {
    schemas: Arc<Vec<OpSchema>>,
    kernels: Vec<KernelDevices>,
}

/// libtorch's schemas of `op_name` (and their kernels), asked of the dispatcher once per
/// process (classification asks for every GEMM signature, the replay for every tier-3 one).
fn entry_of(op_name: &str) -> Result<Arc<OpEntry>, String> {
    type Cache = Mutex<HashMap<String, Result<Arc<OpEntry>, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    cache
        .entry(op_name.to_owned())
        .or_insert_with(|| {
            overloads_with_kernels(op_name)
                .map(|list| {
                    let (schemas, kernels) = list.into_iter().unzip();
                    Arc::new(OpEntry {
                        schemas: Arc::new(schemas),
                        kernels,
                    })
                })
                .map_err(|e| e.0)
        })
        .clone()
}

fn schemas_of(op_name: &str) -> Result<Arc<Vec<OpSchema>>, String> {
    entry_of(op_name).map(|e| e.schemas.clone())
}

/// Whether libtorch can run `op_name`.`overload` on the CPU (`cuda` false) or a CUDA device;
/// `None` when the dispatcher does not know it. An op that cannot (flash attention on the
/// CPU) is replayed by an enclosing op, and a memory plan plans that op's inputs instead.
pub fn runs_on(op_name: &str, overload: &str, cuda: bool) -> Option<bool> {
    let entry = entry_of(op_name).ok()?;
    let at = entry.schemas.iter().position(|s| s.overload == overload)?;
    let k = entry.kernels.get(at)?;
    Some(if cuda { k.cuda } else { k.cpu })
}

/// The overload of `op_name` that the recorded inputs call, matched against libtorch's own
/// schemas of the op, with the leading inputs that are not its arguments (see [`choose`]).
pub fn resolve(
    op_name: &str,
    inputs: &[RecordedInput],
    site: CallSite,
) -> Result<OverloadChoice, OverloadError> {
    let schemas = schemas_of(op_name).map_err(|message| OverloadError::NoSchema {
        op: op_name.to_owned(),
        message,
    })?;
    choose(op_name, &schemas, inputs, site)
}

/// Where a call's overload came from.
#[derive(Debug, Clone, PartialEq)]
pub enum OverloadSource {
    /// Matched against libtorch's schemas from the recorded inputs (no Execution Trace).
    Matched,
    /// The exact overload an Execution Trace recorded.
    Exact,
    /// The Execution Trace named an overload that libtorch does not have, or whose arguments
    /// the recorded inputs do not fit (the message says which): matched instead.
    ExactNotUsed(String),
}

impl OverloadSource {
    /// The note for the method text, where there is one to make.
    pub fn note(&self) -> Option<String> {
        match self {
            OverloadSource::Matched => None,
            OverloadSource::Exact => Some("the execution trace's exact overload".into()),
            OverloadSource::ExactNotUsed(why) => Some(format!(
                "the execution trace's overload {why}: matched by schema"
            )),
        }
    }
}

/// [`resolve`], with the exact operator schema an Execution Trace recorded (`exact`, the
/// schema text): that overload when libtorch knows it and the inputs fit it, else the
/// matched one, and which of the two it is.
pub fn resolve_exact(
    op_name: &str,
    exact: Option<&str>,
    inputs: &[RecordedInput],
    site: CallSite,
) -> Result<(OverloadChoice, OverloadSource), OverloadError> {
    let Some(exact) = exact else {
        return resolve(op_name, inputs, site).map(|c| (c, OverloadSource::Matched));
    };
    let overload = replay_core::execution_trace::overload_of_schema(exact);
    let qualified = replay_core::execution_trace::operator_of_schema(exact);
    let named = if qualified == op_name {
        schemas_of(op_name)
            .ok()
            .and_then(|schemas| choose_named(op_name, &schemas, overload, inputs))
    } else {
        None
    };
    let why = match named {
        Some(Ok(choice)) => return Ok((choice, OverloadSource::Exact)),
        Some(Err(error)) => format!("does not take the recorded inputs ({error})"),
        None => format!(
            "{} is not libtorch's",
            exact.split('(').next().unwrap_or(exact)
        ),
    };
    resolve(op_name, inputs, site).map(|c| (c, OverloadSource::ExactNotUsed(why)))
}

#[cfg(test)]
mod builtin_schema_tests {
    use replay_core::signature::gemm_schemas::{gemm_op_schemas, GEMM_SCHEMAS};

    /// Classification matches GEMM ops against a table of their schemas carried by the
    /// torch-free core; it must be what the linked libtorch declares, overload for overload,
    /// or classification and tier 3 would read different arguments.
    #[test]
    fn the_cores_gemm_schemas_are_libtorchs() {
        let mut ops: Vec<String> = GEMM_SCHEMAS
            .iter()
            .filter_map(|s| s.split(['.', '(']).next().map(str::to_owned))
            .collect();
        ops.dedup();
        for op in ops {
            let mut builtin = gemm_op_schemas(&op).unwrap().to_vec();
            let mut live = super::schemas_of(&op).unwrap().as_ref().clone();
            builtin.sort_by(|a, b| a.overload.cmp(&b.overload));
            live.sort_by(|a, b| a.overload.cmp(&b.overload));
            assert_eq!(builtin, live, "{op}");
        }
    }
}
