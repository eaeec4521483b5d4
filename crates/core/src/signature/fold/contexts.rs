//! The ops that launch work, each kept once: an op's name, recorded inputs, parent op and
//! `nn.Module`. A training step repeats the same ops under the same parents, so the
//! contexts of a trace number about as many as its signatures, not its events.

use crate::trace::{FxHashMap, RecordedInputs, StrId};

/// One op as a signature describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpContext {
    pub name: StrId,
    pub inputs: RecordedInputs,
    /// The enclosing op's context.
    pub parent: Option<u32>,
    /// The innermost `nn.Module` range around the op (its full name).
    pub module: Option<StrId>,
}

/// The distinct contexts of a trace, numbered as first seen.
#[derive(Debug, Default)]
pub struct Contexts {
    list: Vec<OpContext>,
    ids: FxHashMap<OpContext, u32>,
}

impl Contexts {
    /// The number of `context`, adding it on first sight.
    pub fn intern(&mut self, context: OpContext) -> u32 {
        if let Some(&id) = self.ids.get(&context) {
            return id;
        }
        let id = u32::try_from(self.list.len()).unwrap_or(u32::MAX);
        self.list.push(context);
        self.ids.insert(context, id);
        id
    }

    pub fn get(&self, id: u32) -> Option<&OpContext> {
        self.list.get(id as usize)
    }
}
