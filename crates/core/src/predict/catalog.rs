//! What the timeline knows about each signature besides its id: its tier, its name, the ops
//! around it and its readable label. A skeleton refers to signatures by id only; what-if
//! expressions select them by tier, kernel name or op, and the exported timelines name them.

use std::collections::HashMap;

use crate::signature::label::signature_label;
use crate::signature::schema::{SignatureFile, Tier};

/// One signature, as the timeline's consumers see it.
#[derive(Debug, Clone, PartialEq)]
pub struct SignatureInfo {
    pub tier: Tier,
    /// Kernel, copy or memset name; the op's name for a host op of a CPU-only trace.
    pub name: String,
    /// The op that launched the work, then its enclosing ops, innermost first; for a host
    /// op of a CPU-only trace, the op itself.
    pub ops: Vec<String>,
    /// `aten::linear [1,5,1024]×[250880,1024] f32` ([`signature_label`]).
    pub label: String,
    /// The GEMM's size and dtype, for a GEMM (re-timing on other hardware scales it by GFLOPS).
    pub gemm: Option<GemmShape>,
}

/// A GEMM's dimensions and the dtype of its operands.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmShape {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub batch: u64,
    pub dtype: String,
}

/// Every signature of a trace, by id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SignatureCatalog {
    by_id: HashMap<String, SignatureInfo>,
}

impl SignatureCatalog {
    /// The catalog of a classified trace.
    pub fn from_file(file: &SignatureFile) -> SignatureCatalog {
        let by_id = file
            .signatures
            .iter()
            .map(|s| {
                let ops = match &s.op {
                    Some(op) => std::iter::once(op.name.clone())
                        .chain(op.ancestry.iter().rev().cloned())
                        .collect(),
                    None => vec![s.name.clone()],
                };
                let info = SignatureInfo {
                    tier: s.tier,
                    name: s.name.clone(),
                    ops,
                    label: signature_label(s),
                    gemm: s.gemm.as_ref().map(|g| GemmShape {
                        m: g.m,
                        n: g.n,
                        k: g.k,
                        batch: g.batch,
                        dtype: g.dtype_a.clone(),
                    }),
                };
                (s.id.clone(), info)
            })
            .collect();
        SignatureCatalog { by_id }
    }

    pub fn get(&self, id: &str) -> Option<&SignatureInfo> {
        self.by_id.get(id)
    }

    pub fn insert(&mut self, id: impl Into<String>, info: SignatureInfo) {
        self.by_id.insert(id.into(), info);
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}
