//! What an Execution Trace adds to a signature file, when `classify --execution-trace`
//! linked one: the exact overload each launching op called and the values of its
//! arguments, and how much of the trace the ET covered.

use serde::{Deserialize, Serialize};

/// One argument of a launching op as its Execution Trace node recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactInput {
    /// The ET's type: `Tensor(float)`, `Int`, `Double`, `GenericList[Int,Int]`, `None`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The value of a non-tensor argument (a scalar, an int list, a device, a string), as
    /// recorded; `None` for tensors (their identities belong to one invocation, not to the
    /// signature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
}

/// The Execution Trace a signature file was classified with, and how it linked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionTraceSource {
    /// The ET's path as given.
    pub path: String,
    /// Its `schema` (`1.0.1`, `1.1.0-chakra.0.0.4`).
    pub schema: String,
    /// The Kineto trace's ops (`cpu_op`, `user_annotation`), those with a record-function
    /// id, and those linked to an ET node of the same name.
    pub kineto_ops: u64,
    pub kineto_ops_with_id: u64,
    pub linked_ops: u64,
    /// Signatures with a launching op, and those whose launching op linked (and so carry
    /// `op.schema` where the node had one).
    pub signatures_with_op: u64,
    pub signatures_linked: u64,
    pub signatures_with_schema: u64,
    /// Invocations of those signatures, and those whose own launching op linked.
    pub invocations: u64,
    pub invocations_linked: u64,
}
