//! An op's arguments among its recorded inputs ([`OpInputs::arguments_of`]): the overload
//! the replay would choose for them says how many leading inputs are not arguments.

use std::borrow::Cow;

use super::gemm_schemas::gemm_op_schemas;
use super::op_inputs::OpInputs;
use super::overload::choose;
use super::recorded::from_op_inputs;

impl OpInputs {
    /// The inputs that are `op_name`'s arguments. Ops called from TorchScript are sometimes
    /// recorded with extra leading inputs (values the interpreter left on its stack:
    /// `aten::linear` with `[[1,16,768], [1,16,768], [768,768], [768]]`), so arguments are
    /// never taken by position alone: the inputs are matched against libtorch's schemas of
    /// the op by the rule the replay uses ([`super::overload::choose`], with the GEMM ops'
    /// schemas of [`super::gemm_schemas`]; in compiled code an `out=` overload may take every
    /// input, see [`OpInputs::site`]). Inputs that no overload accepts, and ops outside the
    /// table, are kept as recorded.
    pub fn arguments_of(&self, op_name: &str) -> Cow<'_, OpInputs> {
        let skip = gemm_op_schemas(op_name)
            .map(|schemas| (schemas, from_op_inputs(self)))
            .and_then(|(schemas, typed)| choose(op_name, schemas, &typed, self.site).ok())
            .map_or(0, |choice| choice.skip);
        if skip == 0 {
            Cow::Borrowed(self)
        } else {
            Cow::Owned(self.without_leading(skip))
        }
    }

    /// These inputs less the first `n`.
    fn without_leading(&self, n: usize) -> OpInputs {
        fn tail<T: Clone>(v: &[T], n: usize) -> Vec<T> {
            v.get(n..).unwrap_or_default().to_vec()
        }
        OpInputs {
            dims: tail(&self.dims, n),
            raw_dims: tail(&self.raw_dims, n),
            types: tail(&self.types, n),
            strides: self.strides.as_deref().map(|s| tail(s, n)),
            raw_strides: self.raw_strides.as_deref().map(|s| tail(s, n)),
            concrete: self.concrete.as_deref().map(|c| tail(c, n)),
            site: self.site,
        }
    }
}
