//! The seed's quantization recipe names (`string_to_config` of torchao's runner) and which of
//! them this suite implements as libtorch ops.

use std::fmt;

/// A recipe this suite runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recipe {
    /// The high-precision model.
    Baseline,
    /// `int8wo`: per-output-channel symmetric int8 weights, high-precision activations.
    Int8WeightOnly,
    /// `int8dq`: per-token dynamic symmetric int8 activations x per-channel int8 weights
    /// through an int8 GEMM with int32 accumulation, rescaled.
    Int8Dynamic,
    /// `int4wo-<group>`: grouped asymmetric uint4 weights (tinygemm layout), high-precision
    /// activations.
    Int4WeightOnly { group_size: i64 },
    /// `float8wo`: per-output-channel float8 e4m3 weights, dequantized then matmul.
    Float8WeightOnly,
    /// `float8dq-tensor`: dynamic float8 activations and weights, one scale per tensor.
    Float8DynamicTensor,
    /// `float8dq-row`: dynamic float8 activations (one scale per row) and weights (one per
    /// output channel).
    Float8DynamicRow,
}

/// The group sizes the seed accepts for `int4wo-<group>`.
pub const INT4_GROUP_SIZES: [i64; 4] = [32, 64, 128, 256];

impl Recipe {
    /// The recipe named `name`, or why this suite does not run it (a `not_implemented` row).
    pub fn parse(name: &str) -> Result<Recipe, String> {
        let name = name.trim();
        match name {
            "baseline" => return Ok(Recipe::Baseline),
            "int8wo" => return Ok(Recipe::Int8WeightOnly),
            "int8dq" => return Ok(Recipe::Int8Dynamic),
            "float8wo" => return Ok(Recipe::Float8WeightOnly),
            "float8dq-tensor" | "float8dq" => return Ok(Recipe::Float8DynamicTensor),
            "float8dq-row" => return Ok(Recipe::Float8DynamicRow),
            _ => {}
        }
        if let Some(rest) = name.strip_prefix("int4wo-") {
            if rest.ends_with("-hqq") {
                return Err(format!(
                    "{name}: HQQ's iterative weight fitting is not implemented by replay"
                ));
            }
            return match rest.parse::<i64>() {
                Ok(g) if INT4_GROUP_SIZES.contains(&g) => {
                    Ok(Recipe::Int4WeightOnly { group_size: g })
                }
                Ok(g) => Err(format!(
                    "{name}: group size {g} is not one of the seed's 32, 64, 128, 256"
                )),
                Err(_) => Err(format!("{name}: cannot read a group size from \"{rest}\"")),
            };
        }
        Err(format!(
            "{name}: not one of the recipes replay implements (baseline, int8wo, int8dq, \
             int4wo-<32|64|128|256>, float8wo, float8dq-tensor, float8dq-row)"
        ))
    }

    pub fn is_baseline(self) -> bool {
        self == Recipe::Baseline
    }
}

impl fmt::Display for Recipe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recipe::Baseline => f.write_str("baseline"),
            Recipe::Int8WeightOnly => f.write_str("int8wo"),
            Recipe::Int8Dynamic => f.write_str("int8dq"),
            Recipe::Int4WeightOnly { group_size } => write!(f, "int4wo-{group_size}"),
            Recipe::Float8WeightOnly => f.write_str("float8wo"),
            Recipe::Float8DynamicTensor => f.write_str("float8dq-tensor"),
            Recipe::Float8DynamicRow => f.write_str("float8dq-row"),
        }
    }
}

/// The (quantization, sparsity) pairs of a run, as the seed pairs them
/// (`get_quantization_sparsity_recipes`): baseline always first, then each quantization
/// recipe once, in the config's order; block sparsity pairs with baseline, semi-structured
/// (2:4) sparsity with baseline, int8dq, float8dq and marlin recipes. A sparsity name that
/// is neither is kept, paired with baseline, so it gets its own `not_implemented` row rather
/// than ending the run as it did in the seed.
pub fn recipe_pairs(quantization: &[String], sparsity: &[String]) -> Vec<(String, Option<String>)> {
    let mut pairs: Vec<(String, Option<String>)> = vec![("baseline".into(), None)];
    let mut add = |pair: (String, Option<String>)| {
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    };
    for q in quantization {
        add((q.clone(), None));
    }
    for s in sparsity {
        if s.contains("semi") || s.contains("2:4") {
            add(("baseline".into(), Some(s.clone())));
            for q in quantization {
                if q.contains("marlin") || q.contains("int8dq") || q.contains("float8dq") {
                    add((q.clone(), Some(s.clone())));
                }
            }
        } else {
            add(("baseline".into(), Some(s.clone())));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_what_is_not_implemented_says_why() {
        assert_eq!(
            Recipe::parse("int4wo-128"),
            Ok(Recipe::Int4WeightOnly { group_size: 128 })
        );
        assert_eq!(Recipe::parse("float8dq-row"), Ok(Recipe::Float8DynamicRow));
        for r in [
            "baseline",
            "int8wo",
            "int8dq",
            "int4wo-32",
            "float8wo",
            "float8dq-tensor",
        ] {
            assert_eq!(Recipe::parse(r).unwrap().to_string(), r);
        }
        assert!(Recipe::parse("int4wo-128-hqq").unwrap_err().contains("HQQ"));
        assert!(Recipe::parse("int4wo-100")
            .unwrap_err()
            .contains("group size 100"));
        assert!(Recipe::parse("fp6").unwrap_err().contains("not one of"));
    }

    #[test]
    fn pairs_follow_the_seeds_rules_in_a_fixed_order() {
        let q: Vec<String> = ["int8wo", "int8dq", "baseline"].map(String::from).to_vec();
        let s: Vec<String> = ["semi-sparse", "block"].map(String::from).to_vec();
        let pairs = recipe_pairs(&q, &s);
        let shown: Vec<String> = pairs
            .iter()
            .map(|(q, s)| format!("{q}/{}", s.as_deref().unwrap_or("-")))
            .collect();
        assert_eq!(
            shown,
            [
                "baseline/-",
                "int8wo/-",
                "int8dq/-",
                "baseline/semi-sparse",
                "int8dq/semi-sparse",
                "baseline/block"
            ]
        );
    }
}
