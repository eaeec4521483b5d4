//! An op's recorded inputs: the one reader of the profiler's input columns.
//!
//! `Input Dims` is a list with one entry per argument: a list of sizes for a tensor,
//! `[]` for a scalar or `None`, and for a `TensorList` a list of size lists (PyTorch 2.x)
//! or just `[]` (older). `Input type`, `Input Strides` and `Concrete Inputs` follow the
//! same argument order. Classification reads them from the trace's text
//! ([`OpInputs::parse`]), the replay from a signature file's JSON values
//! ([`OpInputs::from_values`]); the replay's typed view ([`super::recorded`]) is built from
//! an [`OpInputs`], never from the columns themselves.

use serde_json::Value;

use super::call_site::CallSite;
use super::dtype::canonical_dtype;

/// Argument types that are values rather than tensors. Their values are only known
/// through `Concrete Inputs` (PyTorch 2.1+).
const VALUE_ARGUMENT_TYPES: [&str; 14] = [
    "Scalar",
    "ScalarList",
    "GenericList",
    "Int",
    "Bool",
    "Double",
    "Float",
    "String",
    "Device",
    "Layout",
    "ScalarType",
    "MemoryFormat",
    "IntList",
    "Tuple",
];

/// Argument type names of tensor lists.
const TENSOR_LIST_TYPES: [&str; 2] = ["TensorList", "TensorList[]"];

/// The recorded inputs of one op invocation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpInputs {
    /// Per argument: the sizes, when the entry is a flat list of integers.
    pub dims: Vec<Option<Vec<i64>>>,
    /// Per argument: the raw `Input Dims` entry, for list-of-list checks.
    pub raw_dims: Vec<Value>,
    pub types: Vec<String>,
    /// Per argument strides, when recorded (PyTorch 2.4+) and the entry is a flat list of
    /// integers (a tensor's; a tensor list's are in `raw_strides`).
    pub strides: Option<Vec<Option<Vec<i64>>>>,
    /// Per argument: the raw `Input Strides` entry, when recorded (a tensor list records one
    /// stride list per tensor).
    pub raw_strides: Option<Vec<Value>>,
    /// Per argument value text, when recorded (PyTorch 2.1+).
    pub concrete: Option<Vec<String>>,
    /// Where the call was made: in compiled code an `out=` overload may be the call
    /// ([`CallSite`]; set with [`OpInputs::at`]).
    pub site: CallSite,
}

/// One tensor argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensorArgument<'a> {
    pub sizes: &'a [i64],
    /// `None` when strides were not recorded or do not match the sizes.
    pub strides: Option<&'a [i64]>,
    /// TypeMeta name as recorded.
    pub type_name: &'a str,
}

impl TensorArgument<'_> {
    /// Whether the recorded strides are those of a contiguous (row-major, packed) tensor, size-1
    /// dimensions aside; `None` when the strides were not recorded.
    pub fn is_contiguous(&self) -> Option<bool> {
        let strides = self.strides?;
        if self.sizes.contains(&0) {
            return Some(true);
        }
        let mut expected = 1i64;
        for (&size, &stride) in self.sizes.iter().zip(strides).rev() {
            if size == 1 {
                continue;
            }
            if stride != expected {
                return Some(false);
            }
            expected = expected.saturating_mul(size);
        }
        Some(true)
    }
}

impl OpInputs {
    /// Parses the four recorded fields from their JSON text (as the trace keeps them);
    /// `None` when `Input Dims` is absent or malformed. A malformed other field counts as
    /// not recorded.
    pub fn parse(
        dims: Option<&str>,
        types: Option<&str>,
        strides: Option<&str>,
        concrete: Option<&str>,
    ) -> Option<OpInputs> {
        let decode = |text: Option<&str>| text.and_then(|t| serde_json::from_str::<Value>(t).ok());
        let dims = decode(dims)?;
        OpInputs::from_values(
            Some(&dims),
            decode(types).as_ref(),
            decode(strides).as_ref(),
            decode(concrete).as_ref(),
        )
    }

    /// Reads the four recorded fields from JSON values (as a signature file keeps them):
    /// the one reader of the columns. `None` when `Input Dims` is absent or not a list; an
    /// other field that is absent or not a list counts as not recorded.
    pub fn from_values(
        dims: Option<&Value>,
        types: Option<&Value>,
        strides: Option<&Value>,
        concrete: Option<&Value>,
    ) -> Option<OpInputs> {
        let list = |value: Option<&Value>| value.and_then(Value::as_array).cloned();
        let raw_dims = list(dims)?;
        let dims = raw_dims.iter().map(integer_list).collect();
        let types = list(types)
            .map(|list| {
                list.iter()
                    .map(|v| v.as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default();
        let raw_strides = list(strides);
        let strides = raw_strides
            .as_ref()
            .map(|list| list.iter().map(integer_list).collect());
        let concrete = list(concrete).map(|list| list.iter().map(concrete_text).collect());
        Some(OpInputs {
            dims,
            raw_dims,
            types,
            strides,
            raw_strides,
            concrete,
            site: CallSite::Eager,
        })
    }

    /// These inputs as recorded at `site`.
    pub fn at(mut self, site: CallSite) -> OpInputs {
        self.site = site;
        self
    }

    /// Argument `index` as a tensor, when it has recorded sizes.
    pub fn tensor(&self, index: usize) -> Option<TensorArgument<'_>> {
        let sizes = self.dims.get(index)?.as_deref()?;
        let type_name = self.types.get(index).map(String::as_str).unwrap_or("");
        if VALUE_ARGUMENT_TYPES.contains(&type_name) || TENSOR_LIST_TYPES.contains(&type_name) {
            return None;
        }
        let strides = self
            .strides
            .as_ref()
            .and_then(|all| all.get(index))
            .and_then(|s| s.as_deref())
            .filter(|s| s.len() == sizes.len());
        Some(TensorArgument {
            sizes,
            strides,
            type_name,
        })
    }

    /// Argument `index` as a tensor with at least one dimension (an optional tensor that
    /// was passed as `None` records `[]`).
    pub fn present_tensor(&self, index: usize) -> Option<TensorArgument<'_>> {
        self.tensor(index).filter(|t| !t.sizes.is_empty())
    }

    /// The recorded value of argument `index`, as a number.
    pub fn number(&self, index: usize) -> Option<f64> {
        let text = self.concrete.as_ref()?.get(index)?;
        text.trim().parse::<f64>().ok()
    }

    /// The recorded value text of argument `index`.
    pub fn value_text(&self, index: usize) -> Option<&str> {
        self.concrete
            .as_ref()?
            .get(index)
            .map(String::as_str)
            .filter(|t| !t.is_empty())
    }

    /// Why these inputs cannot be rebuilt for a replay through libtorch, if they cannot.
    pub fn unreplayable_reason(&self) -> Option<String> {
        for (index, type_name) in self.types.iter().enumerate() {
            let raw = self.raw_dims.get(index);
            if TENSOR_LIST_TYPES.contains(&type_name.as_str()) {
                let nested = raw
                    .and_then(Value::as_array)
                    .is_some_and(|list| !list.is_empty() && list.iter().all(Value::is_array));
                if !nested {
                    return Some(format!(
                        "argument {index} is a tensor list recorded without the dims of its tensors"
                    ));
                }
            }
        }
        let has_value_arguments = self
            .types
            .iter()
            .any(|t| VALUE_ARGUMENT_TYPES.contains(&t.as_str()));
        if has_value_arguments && self.concrete.is_none() {
            return Some(
                "values of non-tensor arguments were not recorded (no `Concrete Inputs`; PyTorch < 2.1)"
                    .to_owned(),
            );
        }
        None
    }

    /// Canonical dtype of tensor argument `index`.
    pub fn dtype(&self, index: usize) -> Option<String> {
        self.tensor(index).map(|t| canonical_dtype(t.type_name))
    }
}

fn integer_list(value: &Value) -> Option<Vec<i64>> {
    value
        .as_array()?
        .iter()
        .map(Value::as_i64)
        .collect::<Option<Vec<i64>>>()
}

fn concrete_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguity_is_read_from_the_recorded_strides_with_size_one_dimensions_aside() {
        let arg = |sizes: &'static [i64], strides: Option<&'static [i64]>| TensorArgument {
            sizes,
            strides,
            type_name: "float",
        };
        assert_eq!(
            arg(&[2, 3, 4], Some(&[12, 4, 1])).is_contiguous(),
            Some(true)
        );
        // A permuted view of a fused qkv projection, and a transposed matrix.
        assert_eq!(
            arg(&[1, 12, 16, 64], Some(&[36864, 64, 2304, 1])).is_contiguous(),
            Some(false)
        );
        assert_eq!(
            arg(&[768, 50257], Some(&[1, 768])).is_contiguous(),
            Some(false)
        );
        // Size-1 dimensions may have any stride; empty tensors are contiguous.
        assert_eq!(
            arg(&[1, 16, 1, 8], Some(&[999, 8, 7, 1])).is_contiguous(),
            Some(true)
        );
        assert_eq!(arg(&[0, 4], Some(&[1, 9])).is_contiguous(), Some(true));
        assert_eq!(arg(&[4, 4], None).is_contiguous(), None);
    }

    #[test]
    fn addmm_inputs_parse_with_strides_and_scalars() {
        let inputs = OpInputs::parse(
            Some("[[512], [141, 512], [512, 512], [], []]"),
            Some(r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#),
            Some("[[1], [512, 1], [1, 512], [], []]"),
            Some(r#"["", "", "", "1", "1"]"#),
        )
        .unwrap();
        let mat2 = inputs.tensor(2).unwrap();
        assert_eq!(mat2.sizes, &[512, 512]);
        assert_eq!(mat2.strides, Some(&[1i64, 512][..]));
        assert_eq!(inputs.number(3), Some(1.0));
        assert!(inputs.tensor(3).is_none());
        assert_eq!(inputs.dtype(1).as_deref(), Some("bfloat16"));
        assert_eq!(inputs.unreplayable_reason(), None);
    }

    #[test]
    fn old_traces_without_values_or_list_dims_are_not_replayable() {
        let old_conv = OpInputs::parse(
            Some("[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]"),
            Some(r#"["float", "float", "", "GenericList", "GenericList", "GenericList", "Int", "Bool", "Bool"]"#),
            None,
            None,
        )
        .unwrap();
        assert!(old_conv
            .unreplayable_reason()
            .unwrap()
            .contains("Concrete Inputs"));

        let old_cat = OpInputs::parse(
            Some("[[], []]"),
            Some(r#"["TensorList", "Scalar"]"#),
            None,
            Some(r#"["", "1"]"#),
        )
        .unwrap();
        assert!(old_cat
            .unreplayable_reason()
            .unwrap()
            .contains("tensor list"));

        let new_cat = OpInputs::parse(
            Some("[[[4, 1, 768], [4, 196, 768]], []]"),
            Some(r#"["TensorList", "Scalar"]"#),
            None,
            Some(r#"["", "1"]"#),
        )
        .unwrap();
        assert_eq!(new_cat.unreplayable_reason(), None);
    }
}
