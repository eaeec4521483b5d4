//! TorchScript's fusion groups: the `fused_*` ops of a TorchScript model's trace.
//!
//! TorchScript's profiling executor fuses element-wise chains into groups
//! (`prim::TensorExprGroup`) and runs each as one NNC kernel, recorded by the profiler under
//! the kernel's name (`fused_batch_norm_add`, or past 40 characters its first 20 and a hash:
//! `fused_mul_mul_mul_mu_5065363705190979294`) with no inputs. A capture with the model at
//! hand (`scripts/fusion_groups.py`) writes each group's inputs onto its events and the groups
//! into the trace (`replayFusionGroups`: each group's subgraph, input types and the fuser
//! settings). [`attach`] gives each fused signature its group's subgraph, so that `isolated`
//! can build and run the kernel; without that section it says why a trace alone cannot.

use serde::Deserialize;

use super::schema::{FusionGroupParams, Signature, SignatureFile, Unit};

/// What TorchScript's kernel names of fusion groups begin with.
pub const FUSION_GROUP_PREFIX: &str = "fused_";

/// The fusion group kind replay builds kernels of.
pub const TENSOR_EXPR_GROUP: &str = "prim::TensorExprGroup";

/// The reason a signature carries while its op's inputs are not recorded (classify's words).
const NOT_RECORDED: &str = "op inputs not recorded (record_shapes=False)";

/// Why a fused op of a trace without the capture's record of its groups is not replayed.
pub fn trace_alone_reason(name: &str) -> String {
    format!(
        "{name} is a TorchScript fusion group: the profiler records it with no inputs and the \
         ops inside it not at all, and an Execution Trace's node for it has no inputs or outputs \
         either, so neither its subgraph (which ops, on which tensors, with which constants) nor \
         its input shapes can be read or inferred from the producers' outputs (which of them feed \
         it is recorded nowhere); capture with the model at hand (`replay capture --model M.pt`, \
         `replay compare`), which records each group from the optimised graph TorchScript ran"
    )
}

/// Whether an op name is a TorchScript fusion group's kernel (`fused_add_relu`), as opposed
/// to a dispatcher op (`aten::add`, with a namespace) or an Inductor kernel
/// (`graph_0_cpp_fused_*`).
pub fn is_fusion_group_op(name: &str) -> bool {
    name.starts_with(FUSION_GROUP_PREFIX) && !name.contains("::")
}

/// One subgraph input as the capture wrote it.
#[derive(Debug, Clone, Deserialize)]
struct GroupInput {
    /// The dtype as the profiler names it (`float`, `c10::BFloat16`).
    profiler_type: Option<String>,
    sizes: Option<Vec<i64>>,
    strides: Option<Vec<i64>>,
}

/// One group of `replayFusionGroups.groups`.
#[derive(Debug, Clone, Deserialize)]
struct Group {
    kind: String,
    name: String,
    #[serde(default)]
    dynamic_shapes: bool,
    inputs: Vec<GroupInput>,
    graph: String,
}

/// The section `replayFusionGroups` of a trace.
#[derive(Debug, Clone, Deserialize)]
struct Section {
    #[serde(default)]
    groups: Vec<Group>,
    #[serde(default)]
    fuser: serde_json::Value,
}

/// The op whose inputs a signature's replay takes: its launching op's name, or its own.
fn op_name(sig: &Signature) -> &str {
    sig.op.as_ref().map_or(&sig.name, |op| &op.name)
}

impl Group {
    /// Whether the signature's recorded inputs (the ones the capture wrote from this group's
    /// types, or another group's) are this group's.
    fn matches(&self, sig: &Signature) -> bool {
        let Some(inputs) = &sig.inputs else {
            return false;
        };
        let dims: Option<Vec<Vec<i64>>> = self.inputs.iter().map(|i| i.sizes.clone()).collect();
        let strides: Option<Vec<Vec<i64>>> =
            self.inputs.iter().map(|i| i.strides.clone()).collect();
        let types: Option<Vec<String>> = self
            .inputs
            .iter()
            .map(|i| i.profiler_type.clone())
            .collect();
        fn same<T: serde::Serialize>(
            recorded: &Option<serde_json::Value>,
            ours: Option<T>,
        ) -> bool {
            match (recorded, ours) {
                (Some(value), Some(ours)) => {
                    serde_json::to_value(ours).ok().as_ref() == Some(value)
                }
                _ => false,
            }
        }
        same(&inputs.dims, dims) && same(&inputs.strides, strides) && same(&inputs.types, types)
    }

    /// What keeps the group from being built, if anything.
    fn blocker(&self) -> Option<String> {
        if self.kind != TENSOR_EXPR_GROUP {
            return Some(format!(
                "{}: a {} (replay builds {TENSOR_EXPR_GROUP}s, NNC's kernels)",
                self.name, self.kind
            ));
        }
        if self.dynamic_shapes {
            return Some(format!(
                "{}: a dynamic-shape fusion group (it takes symbolic sizes and strides besides \
                 its tensors; replay builds static-shape groups)",
                self.name
            ));
        }
        None
    }
}

/// Gives every fused signature of `file` its group from `section` (a trace's
/// `replayFusionGroups`), or the reason it has none. Returns how many got a group.
pub fn attach(file: &mut SignatureFile, section: Option<&serde_json::Value>) -> usize {
    // A section that does not read is said so, not taken for a trace without one.
    let parsed: Option<Result<Section, String>> = section.map(|v| {
        serde_json::from_value(v.clone()).map_err(|e| {
            format!("the trace's replayFusionGroups does not read ({e}): capture it again")
        })
    });
    let mut attached = 0;
    for sig in &mut file.signatures {
        let name = op_name(sig).to_owned();
        if !is_fusion_group_op(&name) || (sig.unit == Unit::Kernel && sig.op.is_none()) {
            continue;
        }
        // Classify's words for the missing inputs give way to the fusion group's own.
        let mut reasons: Vec<String> = sig
            .reason
            .as_deref()
            .unwrap_or("")
            .split("; ")
            .filter(|r| !r.is_empty() && *r != NOT_RECORDED)
            .map(str::to_owned)
            .collect();
        match &parsed {
            None => reasons.push(trace_alone_reason(&name)),
            Some(Err(why)) => reasons.push(format!("{name}: {why}")),
            Some(Ok(section)) => {
                match section
                    .groups
                    .iter()
                    .find(|g| g.name == name && g.matches(sig))
                {
                    Some(group) => {
                        reasons.extend(group.blocker());
                        sig.fusion = Some(FusionGroupParams {
                            kind: group.kind.clone(),
                            graph: group.graph.clone(),
                            te_must_use_llvm_cpu: section
                                .fuser
                                .get("te_must_use_llvm_cpu")
                                .and_then(serde_json::Value::as_bool),
                        });
                        attached += 1;
                    }
                    None => reasons.push(format!(
                        "{name}: no fusion group of the capture's optimised graph has this name \
                         and these inputs (the trace holds {} group(s))",
                        section.groups.len()
                    )),
                }
            }
        }
        sig.replayable = reasons.is_empty();
        sig.reason = (!reasons.is_empty()).then(|| reasons.join("; "));
    }
    attached
}
