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
            "{name}: not one of the recipes replay implements ({ACCEPTED})"
        ))
    }

    /// Whether `name` is a recipe of the seed at all: one this suite runs, or one of the
    /// seed's families it does not implement (a `not_implemented` row). Anything else is a
    /// typo (`int8w0`) or a malformed name (`int4wo-100`), which the config check refuses
    /// (exit 2) listing what is accepted, as it refuses an unknown `model_type`.
    pub fn check_name(name: &str) -> Result<(), String> {
        let trimmed = name.trim();
        match Recipe::parse(trimmed) {
            Ok(_) => return Ok(()),
            Err(_) if is_known_unimplemented(trimmed) => return Ok(()),
            Err(_) => {}
        }
        Err(format!(
            "quantization_config_recipe_names: \"{trimmed}\" is not a recipe name (accepted: \
             {ACCEPTED}; the seed's {NOT_IMPLEMENTED} are accepted and reported as \
             not_implemented rows)"
        ))
    }

    pub fn is_baseline(self) -> bool {
        self == Recipe::Baseline
    }
}

/// The recipes this suite runs, as a config names them.
pub const ACCEPTED: &str = "baseline, int8wo, int8dq, int4wo-<32|64|128|256>, float8wo, \
                            float8dq-tensor, float8dq-row";

/// The seed's other recipe families (torchao's `string_to_config`), for the message.
pub const NOT_IMPLEMENTED: &str = "int4wo-<g>-hqq, int8adq-int4w-symm, marlin[-qqq], fp6, \
    uintx-<bits>-<group>[-hqq], int8_dynamic_activation_intx_weight-<bits>-<group>-<asym>, \
    gemlitewo[-<bits>[-<group>]], codebook[-<block>], float8_a1x128_w128x128, \
    int8dq_prefill_wo_decode";

/// A name of one of the seed's families this suite does not implement.
fn is_known_unimplemented(name: &str) -> bool {
    if let Some(group) = name
        .strip_prefix("int4wo-")
        .and_then(|rest| rest.strip_suffix("-hqq"))
    {
        return group
            .parse::<i64>()
            .is_ok_and(|g| INT4_GROUP_SIZES.contains(&g));
    }
    let numbers = |rest: &str, at_least: usize| {
        let parts: Vec<&str> = rest.split('-').collect();
        parts.len() >= at_least && parts.iter().all(|p| p.parse::<i64>().is_ok())
    };
    match name {
        "int8adq-int4w-symm"
        | "marlin"
        | "marlin-qqq"
        | "fp6"
        | "gemlitewo"
        | "codebook"
        | "float8_a1x128_w128x128"
        | "int8dq_prefill_wo_decode" => true,
        _ => {
            if let Some(rest) = name.strip_prefix("uintx-") {
                return numbers(rest.strip_suffix("-hqq").unwrap_or(rest), 2);
            }
            if let Some(rest) = name.strip_prefix("int8_dynamic_activation_intx_weight-") {
                return rest.split('-').count() >= 3;
            }
            if let Some(rest) = name.strip_prefix("gemlitewo-") {
                return numbers(rest, 1);
            }
            if let Some(rest) = name.strip_prefix("codebook-") {
                return numbers(rest, 1);
            }
            false
        }
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
    fn a_typo_is_refused_and_a_known_unimplemented_recipe_is_accepted() {
        for typo in [
            "int8w0",
            "int4wo-100",
            "int4wo-64-hq",
            "uintx-two",
            "float8",
            "",
        ] {
            let e = Recipe::check_name(typo).unwrap_err();
            assert!(
                e.contains("is not a recipe name") && e.contains("int8wo"),
                "{e}"
            );
        }
        for known in [
            "int8wo",
            "int4wo-64",
            "int4wo-128-hqq",
            "fp6",
            "uintx-4-64",
            "uintx-2-32-hqq",
            "marlin",
            "gemlitewo-4-64",
            "int8adq-int4w-symm",
            "float8dq",
        ] {
            assert!(Recipe::check_name(known).is_ok(), "{known}");
        }
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
