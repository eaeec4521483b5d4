//! The schemas of the GEMM ops classification derives shapes from, as libtorch 2.11 declares
//! them (`torch._C._jit_get_schemas_for_operator`). Classification matches recorded inputs
//! against them by the same rule tier 3 uses with libtorch's live schemas
//! ([`super::overload::choose`]), without loading libtorch; a test on the libtorch side checks
//! that this table equals what the linked libtorch reports.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::overload::{OpSchema, SchemaArg};

/// Every overload of every GEMM op of [`super::gemm`], in libtorch's schema syntax.
pub const GEMM_SCHEMAS: &[&str] = &[
    "aten::mm(Tensor self, Tensor mat2) -> Tensor",
    "aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::mm.dtype_out(Tensor self, Tensor mat2, ScalarType out_dtype, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::mm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::addmm.dtype_out(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::addmm.dtype(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::addmm_(Tensor(a!) self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
    "aten::_addmm_activation(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False) -> Tensor",
    "aten::_addmm_activation.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False, Tensor(a!) out) -> Tensor(a!)",
    "aten::bmm(Tensor self, Tensor mat2) -> Tensor",
    "aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::bmm.dtype_out(Tensor self, Tensor mat2, ScalarType out_dtype, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::bmm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::baddbmm.out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::baddbmm.dtype_out(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "aten::baddbmm.dtype(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::baddbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor(a!)",
    "aten::_scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? bias=None, Tensor? scale_result=None, ScalarType? out_dtype=None, bool use_fast_accum=False) -> Tensor",
    "aten::_scaled_mm.out(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? bias=None, Tensor? scale_result=None, ScalarType? out_dtype=None, bool use_fast_accum=False, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::_int_mm(Tensor self, Tensor mat2) -> Tensor",
    "aten::_int_mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::matmul(Tensor self, Tensor other) -> Tensor",
    "aten::matmul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::mv(Tensor self, Tensor vec) -> Tensor",
    "aten::mv.out(Tensor self, Tensor vec, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    "aten::addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
];

/// The overloads of `op_name` (`aten::linear`), or `None` for an op outside the table.
pub fn gemm_op_schemas(op_name: &str) -> Option<&'static [OpSchema]> {
    static TABLE: OnceLock<HashMap<String, Vec<OpSchema>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<OpSchema>> = HashMap::new();
        for text in GEMM_SCHEMAS {
            if let Some((op, schema)) = parse_schema(text) {
                table.entry(op).or_default().push(schema);
            }
        }
        table
    });
    table.get(op_name).map(Vec::as_slice)
}

/// `aten::addmm.out(Tensor self, ..., *, Tensor(a!) out) -> Tensor(a!)` as (op name, overload).
pub fn parse_schema(text: &str) -> Option<(String, OpSchema)> {
    let open = text.find('(')?;
    let close = text.rfind(") ->")?;
    let (op, overload) = super::overload::schema_name(text);
    let mut args = Vec::new();
    let mut kwarg_only = false;
    for part in text[open + 1..close].split(", ").filter(|p| !p.is_empty()) {
        if part == "*" {
            kwarg_only = true;
            continue;
        }
        let (declaration, default) = match part.split_once('=') {
            Some((d, _)) => (d, true),
            None => (part, false),
        };
        let (ty, name) = declaration.rsplit_once(' ')?;
        // `Tensor(a!)` is a tensor the op writes; `Tensor(a)` one it aliases.
        let writes = ty.contains('!');
        let ty = match (ty.find('('), ty.find(')')) {
            (Some(a), Some(b)) => format!("{}{}", &ty[..a], &ty[b + 1..]),
            _ => ty.to_owned(),
        };
        args.push(SchemaArg {
            name: name.to_owned(),
            ty,
            has_default: default,
            kwarg_only,
            writes,
        });
    }
    let returns = text[close + 4..].trim();
    let returns = if returns == "()" {
        0
    } else if returns.starts_with('(') {
        returns.split(',').count()
    } else {
        1
    };
    Some((
        op.to_owned(),
        OpSchema {
            overload: overload.to_owned(),
            args,
            returns,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_parses_and_every_gemm_op_has_its_default_overload() {
        for text in GEMM_SCHEMAS {
            assert!(parse_schema(text).is_some(), "{text}");
        }
        for op in super::super::gemm::GEMM_OPS {
            let schemas = gemm_op_schemas(op).unwrap_or_else(|| panic!("{op} has no schema"));
            assert!(
                schemas
                    .iter()
                    .any(|s| s.overload.is_empty() || op.ends_with('_')),
                "{op}"
            );
        }
    }

    #[test]
    fn kwarg_only_defaults_and_written_arguments_are_read() {
        let (op, s) = parse_schema(
            "aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        )
        .unwrap();
        assert_eq!(
            (op.as_str(), s.overload.as_str(), s.returns),
            ("aten::addmm", "out", 1)
        );
        let names: Vec<_> = s.args.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["self", "mat1", "mat2", "beta", "alpha", "out"]);
        assert!(!s.args[2].kwarg_only && s.args[3].kwarg_only && s.args[3].has_default);
        assert_eq!(s.args[5].ty, "Tensor");
        assert!(s.args[5].writes && !s.args[0].writes);
        let (_, linear) =
            parse_schema("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")
                .unwrap();
        assert_eq!(linear.args[2].ty, "Tensor?");
    }
}
