//! The parameters a TorchScript fusion group's signature carries (`signature.fusion`), read
//! by [`super::fusion_group::attach`] from the trace's record of the groups.

use serde::{Deserialize, Serialize};

/// A TorchScript fusion group (`prim::TensorExprGroup`): what the capture read of it from the
/// optimised graph the model ran (see [`super::fusion_group`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FusionGroupParams {
    /// The group node's kind: `prim::TensorExprGroup` (NNC), `prim::FusionGroup`,
    /// `prim::CudaFusionGroup`.
    pub kind: String,
    /// The group's subgraph, as TorchScript prints it (complete input types included).
    pub graph: String,
    /// Whether NNC's IR interpreter may run it on the CPU (`te_must_use_llvm_cpu` false), as
    /// the capture's fuser settings said; absent when they did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub te_must_use_llvm_cpu: Option<bool>,
}
