//! Which overload of an aten operator a recorded call is: the rule is the torch-free core's
//! ([`replay_core::signature::overload`]); this side asks libtorch's dispatcher for the
//! schemas of any op (classification carries the GEMM ops' own).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

pub use replay_core::signature::overload::*;

use super::recorded::RecordedInput;
use crate::torch::overloads;

/// libtorch's schemas of `op_name`, asked of the dispatcher once per process (classification
/// asks for every GEMM signature, the replay for every tier-3 one).
fn schemas_of(op_name: &str) -> Result<Arc<Vec<OpSchema>>, String> {
    type Cache = Mutex<HashMap<String, Result<Arc<Vec<OpSchema>>, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    cache
        .entry(op_name.to_owned())
        .or_insert_with(|| overloads(op_name).map(Arc::new).map_err(|e| e.0))
        .clone()
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
