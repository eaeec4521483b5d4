//! The seed's YAML config (torchao's `benchmarks/microbenchmarks` runner): its keys, its
//! defaults, and clear errors. A value of the wrong type or an unknown name is an error naming
//! the key, the line and the file; an unknown key is a warning, as the seed would ignore it.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

use super::error::QuantError;
use super::model::ModelType;
use super::shapes::{NamedShape, PowerGrid, ShapeGenerator, GENERATOR_NAMES};
use crate::device::DeviceSpec;

/// The seed's default output folder.
pub const DEFAULT_OUTPUT_DIR: &str = "benchmarks/microbenchmarks/results";

/// A whole config, checked, with the seed's defaults applied.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantConfig {
    /// The file it was read from (for messages).
    pub path: PathBuf,
    pub quantization_recipes: Vec<String>,
    pub sparsity_recipes: Vec<String>,
    pub output_dir: PathBuf,
    pub model_params: Vec<ModelParams>,
}

/// The high-precision dtype of the model and its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighPrecision {
    BFloat16,
    Float16,
    Float32,
}

impl HighPrecision {
    pub fn kind(self) -> tch::Kind {
        match self {
            HighPrecision::BFloat16 => tch::Kind::BFloat16,
            HighPrecision::Float16 => tch::Kind::Half,
            HighPrecision::Float32 => tch::Kind::Float,
        }
    }

    /// As the seed's CSV writes it (`torch.bfloat16`).
    pub fn torch_name(self) -> &'static str {
        match self {
            HighPrecision::BFloat16 => "torch.bfloat16",
            HighPrecision::Float16 => "torch.float16",
            HighPrecision::Float32 => "torch.float32",
        }
    }

    fn parse(text: &str) -> Option<HighPrecision> {
        match text.trim().trim_start_matches("torch.") {
            "bfloat16" => Some(HighPrecision::BFloat16),
            "float16" | "half" => Some(HighPrecision::Float16),
            "float32" | "float" => Some(HighPrecision::Float32),
            _ => None,
        }
    }
}

/// The torch.compile modes the seed passes through (`compile` / `torch_compile_mode`).
pub const COMPILE_MODES: [&str; 4] = [
    "default",
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
];

/// One entry of `model_params`: its shapes and settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelParams {
    /// The entry's `name`, which the seed uses as every row's name when given.
    pub name: Option<String>,
    pub shapes: Vec<NamedShape>,
    pub high_precision_dtype: HighPrecision,
    /// `None`: eager only; else the torch.compile mode.
    pub compile_mode: Option<String>,
    pub device: DeviceSpec,
    pub model_type: ModelType,
    pub enable_profiler: bool,
    pub enable_memory_profiler: bool,
}

// ---- the schema as serde reads it -------------------------------------------------------

#[derive(Debug, Deserialize)]
struct RawConfig {
    #[serde(default, deserialize_with = "benchmark_mode")]
    benchmark_mode: Option<()>,
    #[serde(default)]
    quantization_config_recipe_names: Vec<String>,
    #[serde(default)]
    sparsity_config_recipe_names: Vec<Option<String>>,
    #[serde(default)]
    output_dir: Option<PathBuf>,
    model_params: OneOrMany,
}

/// `model_params` is a list of mappings, or one mapping (the seed's README example).
#[derive(Debug)]
struct OneOrMany(Vec<RawModelParams>);

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of model parameters, or a list of them")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<OneOrMany, A::Error> {
                Vec::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(OneOrMany)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<OneOrMany, A::Error> {
                RawModelParams::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|p| OneOrMany(vec![p]))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[derive(Debug, Deserialize)]
struct RawModelParams {
    #[serde(default)]
    name: Option<String>,
    matrix_shapes: Vec<RawShapes>,
    #[serde(default, deserialize_with = "high_precision")]
    high_precision_dtype: Option<HighPrecision>,
    #[serde(default, deserialize_with = "compile_setting")]
    compile: Option<CompileSetting>,
    #[serde(default)]
    use_torch_compile: Option<bool>,
    #[serde(default, deserialize_with = "compile_mode")]
    torch_compile_mode: Option<String>,
    #[serde(default, deserialize_with = "device")]
    device: Option<DeviceSpec>,
    #[serde(default, deserialize_with = "model_type")]
    model_type: Option<ModelType>,
    #[serde(default)]
    enable_profiler: bool,
    #[serde(default)]
    enable_memory_profiler: bool,
}

#[derive(Debug, Deserialize)]
struct RawShapes {
    #[serde(deserialize_with = "generator_name")]
    name: String,
    #[serde(default)]
    shapes: Option<Vec<[i64; 3]>>,
    #[serde(default)]
    min_power: Option<u32>,
    #[serde(default)]
    max_power: Option<u32>,
}

/// `compile:` is a boolean or a mode name ("false" switches it off, as in the seed's example).
#[derive(Debug, Clone, PartialEq)]
enum CompileSetting {
    Off,
    On,
    Mode(String),
}

fn benchmark_mode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<()>, D::Error> {
    let mode = String::deserialize(d)?;
    match mode.as_str() {
        "inference" => Ok(Some(())),
        "training" => Err(de::Error::custom(
            "benchmark_mode: \"training\" is not supported yet by replay bench quant \
             (only \"inference\")",
        )),
        other => Err(de::Error::custom(format!(
            "benchmark_mode: unknown value \"{other}\" (accepted: inference)"
        ))),
    }
}

fn high_precision<'de, D: Deserializer<'de>>(d: D) -> Result<Option<HighPrecision>, D::Error> {
    let text = String::deserialize(d)?;
    HighPrecision::parse(&text).map(Some).ok_or_else(|| {
        de::Error::custom(format!(
            "high_precision_dtype: unknown value \"{text}\" (accepted: torch.bfloat16, torch.float16, \
             torch.float32)"
        ))
    })
}

fn checked_mode<E: de::Error>(mode: &str) -> Result<String, E> {
    if COMPILE_MODES.contains(&mode) {
        Ok(mode.to_owned())
    } else {
        Err(E::custom(format!(
            "compile: unknown torch.compile mode \"{mode}\" (accepted: false, {})",
            COMPILE_MODES.join(", ")
        )))
    }
}

fn compile_mode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = String::deserialize(d)?;
    checked_mode(&text).map(Some)
}

fn compile_setting<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CompileSetting>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = CompileSetting;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("false, true or a torch.compile mode")
        }
        fn visit_bool<E: de::Error>(self, on: bool) -> Result<CompileSetting, E> {
            Ok(if on {
                CompileSetting::On
            } else {
                CompileSetting::Off
            })
        }
        fn visit_str<E: de::Error>(self, text: &str) -> Result<CompileSetting, E> {
            match text {
                "false" | "False" | "none" | "" => Ok(CompileSetting::Off),
                "true" | "True" => Ok(CompileSetting::On),
                mode => checked_mode(mode).map(CompileSetting::Mode),
            }
        }
    }
    d.deserialize_any(V).map(Some)
}

fn device<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DeviceSpec>, D::Error> {
    let text = String::deserialize(d)?;
    text.parse::<DeviceSpec>().map(Some).map_err(|_| {
        de::Error::custom(format!(
            "device: \"{text}\" is not one replay runs on (accepted: cpu, cuda, cuda:N; \
             the seed's mps and xpu are not supported)"
        ))
    })
}

fn model_type<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ModelType>, D::Error> {
    let text = String::deserialize(d)?;
    text.parse::<ModelType>()
        .map(Some)
        .map_err(|e| de::Error::custom(format!("model_type: {e}")))
}

fn generator_name<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let text = String::deserialize(d)?;
    if GENERATOR_NAMES.contains(&text.as_str()) {
        Ok(text)
    } else {
        Err(de::Error::custom(format!(
            "name: unknown matrix_shapes name \"{text}\" (accepted: {})",
            GENERATOR_NAMES.join(", ")
        )))
    }
}

// ---- reading -----------------------------------------------------------------------------

/// What reading a config found besides the config: keys it ignored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigWarnings {
    pub unknown_keys: Vec<String>,
}

/// Reads and checks the config at `path`.
pub fn load(path: &Path) -> Result<(QuantConfig, ConfigWarnings), QuantError> {
    let text = std::fs::read_to_string(path).map_err(|e| QuantError::Config {
        path: path.to_path_buf(),
        message: format!("cannot read: {e}"),
    })?;
    parse(&text, path)
}

/// Checks `text` as the config of `path` (named in every message).
pub fn parse(text: &str, path: &Path) -> Result<(QuantConfig, ConfigWarnings), QuantError> {
    let fail = |message: String| QuantError::Config {
        path: path.to_path_buf(),
        message,
    };
    let mut warnings = ConfigWarnings::default();
    let deserializer = serde_yaml_ng::Deserializer::from_str(text);
    let raw: RawConfig = serde_ignored::deserialize(deserializer, |key| {
        warnings.unknown_keys.push(key.to_string());
    })
    .map_err(|e| fail(precise_location(text, &e.to_string())))?;
    let _ = raw.benchmark_mode;
    for name in &raw.quantization_config_recipe_names {
        if let Err(why) = super::recipe::Recipe::check_name(name) {
            return Err(fail(match line_of(text, name) {
                Some(line) => format!("{why} at line {line}"),
                None => why,
            }));
        }
    }

    let mut model_params = Vec::with_capacity(raw.model_params.0.len());
    for (index, p) in raw.model_params.0.into_iter().enumerate() {
        let mut shapes = Vec::new();
        for (j, s) in p.matrix_shapes.iter().enumerate() {
            let at = format!("model_params[{index}].matrix_shapes[{j}]");
            shapes.extend(generator(s, &at).map_err(&fail)?.shapes());
        }
        if shapes.is_empty() {
            return Err(fail(format!(
                "model_params[{index}].matrix_shapes: no shapes (give at least one entry)"
            )));
        }
        if let Some(bad) = shapes.iter().find(|s| s.m < 1 || s.k < 1 || s.n < 1) {
            return Err(fail(format!(
                "model_params[{index}].matrix_shapes: shape [{}, {}, {}] has a dimension below 1",
                bad.m, bad.k, bad.n
            )));
        }
        let compile_mode = match (&p.compile, p.use_torch_compile) {
            (Some(CompileSetting::Mode(mode)), _) => Some(mode.clone()),
            // `compile: true`, or the seed's training-style keys: use_torch_compile +
            // torch_compile_mode.
            (Some(CompileSetting::On), _) | (None, Some(true)) => {
                Some(p.torch_compile_mode.clone().unwrap_or("default".into()))
            }
            (Some(CompileSetting::Off), _) | (None, _) => None,
        };
        model_params.push(ModelParams {
            name: p.name,
            shapes,
            high_precision_dtype: p.high_precision_dtype.unwrap_or(HighPrecision::BFloat16),
            compile_mode,
            device: p.device.unwrap_or(DeviceSpec::Cpu),
            model_type: p.model_type.unwrap_or(ModelType::Linear),
            enable_profiler: p.enable_profiler,
            enable_memory_profiler: p.enable_memory_profiler,
        });
    }
    if model_params.is_empty() {
        return Err(fail("model_params: the list is empty".into()));
    }
    Ok((
        QuantConfig {
            path: path.to_path_buf(),
            quantization_recipes: raw.quantization_config_recipe_names,
            sparsity_recipes: raw
                .sparsity_config_recipe_names
                .into_iter()
                .flatten()
                .collect(),
            output_dir: raw
                .output_dir
                .unwrap_or_else(|| PathBuf::from(DEFAULT_OUTPUT_DIR)),
            model_params,
        },
        warnings,
    ))
}

/// The 1-based line of the first list entry or value that is `value` (quoted or not).
fn line_of(text: &str, value: &str) -> Option<usize> {
    let value = value.trim();
    text.lines()
        .position(|line| {
            let line = line.split('#').next().unwrap_or("");
            line.contains(&format!("\"{value}\""))
                || line.contains(&format!("'{value}'"))
                || line
                    .split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '-' | ':'))
                    .any(|word| word == value)
        })
        .map(|i| i + 1)
}

/// The keys whose values are checked by name: serde_yaml reports such an error at the start of
/// the enclosing mapping, so the line of the key itself is looked up in the text.
const NAMED_VALUE_KEYS: [&str; 7] = [
    "benchmark_mode",
    "high_precision_dtype",
    "compile",
    "torch_compile_mode",
    "device",
    "model_type",
    "name",
];

/// `message` with its "at line L column C" replaced by the line of the key and bad value it
/// names (`key: ... "value"`), when exactly that line can be found.
fn precise_location(text: &str, message: &str) -> String {
    let Some(at) = message.rfind(" at line ") else {
        return message.to_owned();
    };
    let found = NAMED_VALUE_KEYS.iter().find_map(|key| {
        let start = message.find(&format!("{key}: "))?;
        let rest = &message[start..];
        let open = rest.find('"')? + 1;
        let close = open + rest[open..].find('"')?;
        let value = &rest[open..close];
        text.lines().position(|line| {
            let line = line.split('#').next().unwrap_or("");
            line.contains(&format!("{key}:")) && line.contains(value)
        })
    });
    match found {
        Some(index) => format!("{} at line {}", &message[..at], index + 1),
        None => message.to_owned(),
    }
}

fn generator(s: &RawShapes, at: &str) -> Result<ShapeGenerator, String> {
    Ok(match s.name.as_str() {
        "custom" => ShapeGenerator::Custom(
            s.shapes
                .clone()
                .ok_or_else(|| format!("{at}: name \"custom\" needs `shapes: [[m, k, n], ...]`"))?,
        ),
        "llama" => ShapeGenerator::Llama,
        name => {
            let (grid, (lo, hi)) = PowerGrid::named(name)
                .ok_or_else(|| format!("{at}: unknown matrix_shapes name \"{name}\""))?;
            let (lo, hi) = (s.min_power.unwrap_or(lo), s.max_power.unwrap_or(hi));
            if lo > hi || hi > 20 || lo < 1 {
                return Err(format!(
                    "{at}: min_power {lo} and max_power {hi} must satisfy 1 <= min_power <= \
                     max_power <= 20"
                ));
            }
            ShapeGenerator::Powers(grid, lo..=hi)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::quant::model::Activation;

    fn parse_ok(text: &str) -> (QuantConfig, ConfigWarnings) {
        parse(text, Path::new("cfg.yml")).unwrap()
    }

    fn parse_err(text: &str) -> String {
        let e = parse(text, Path::new("cfg.yml")).unwrap_err();
        assert!(e.is_usage_error());
        e.to_string()
    }

    /// The seed README's example, verbatim but for the device.
    const SEED_EXAMPLE: &str = r#"
benchmark_mode: "inference"
quantization_config_recipe_names:
  - "baseline"
  - "int8wo"
  - "float8wo"
  - "float8dq-tensor"
output_dir: "benchmarks/microbenchmarks/results"
model_params:
  matrix_shapes:
    - name: "custom"
      shapes: [
        [1024, 1024, 1024],  # [m, k, n]
        [2048, 4096, 1024],
        [4096, 4096, 1024]
      ]
  high_precision_dtype: "torch.bfloat16"
  compile: "max-autotune" # Options: "default", "max-autotune", "false"
  device: "cpu"  # Options: "cuda", "mps", "xpu", "cpu"
  model_type: "linear"  # Options: "linear", "ln_linear_sigmoid"
  enable_profiler: true  # Enable standard profiling
  enable_memory_profiler: true  # Enable CUDA memory profiling
"#;

    #[test]
    fn the_seeds_example_reads_as_one_mapping_with_its_values() {
        let (c, w) = parse_ok(SEED_EXAMPLE);
        assert!(w.unknown_keys.is_empty());
        assert_eq!(
            c.quantization_recipes,
            ["baseline", "int8wo", "float8wo", "float8dq-tensor"]
        );
        assert_eq!(c.model_params.len(), 1);
        let p = &c.model_params[0];
        assert_eq!(p.shapes.len(), 3);
        assert_eq!(
            (p.shapes[2].m, p.shapes[2].k, p.shapes[2].n),
            (4096, 4096, 1024)
        );
        assert_eq!(p.high_precision_dtype, HighPrecision::BFloat16);
        assert_eq!(p.compile_mode.as_deref(), Some("max-autotune"));
        assert_eq!(p.device, DeviceSpec::Cpu);
        assert_eq!(p.model_type, ModelType::Linear);
        assert!(p.enable_profiler && p.enable_memory_profiler);
    }

    #[test]
    fn a_list_of_model_params_with_defaults_and_unknown_keys_warned() {
        let (c, w) = parse_ok(
            "quantization_config_recipe_names: [int8wo]\n\
             sparsity_config_recipe_names: [null, semi-sparse]\n\
             colour: blue\n\
             model_params:\n\
             \x20 - matrix_shapes: [{name: pow2, min_power: 4, max_power: 5}]\n\
             \x20   model_type: ln_linear_gelu\n\
             \x20   compile: false\n\
             \x20   flavour: 3\n\
             \x20 - name: second\n\
             \x20   matrix_shapes: [{name: llama}]\n\
             \x20   high_precision_dtype: torch.float32\n\
             \x20   use_torch_compile: true\n",
        );
        assert_eq!(c.output_dir, PathBuf::from(DEFAULT_OUTPUT_DIR));
        assert_eq!(c.sparsity_recipes, ["semi-sparse"]);
        assert_eq!(c.model_params.len(), 2);
        assert_eq!(c.model_params[0].shapes.len(), 2);
        assert_eq!(
            c.model_params[0].model_type,
            ModelType::LnLinear(Activation::Gelu)
        );
        assert_eq!(c.model_params[0].compile_mode, None);
        assert_eq!(c.model_params[1].compile_mode.as_deref(), Some("default"));
        assert_eq!(c.model_params[1].name.as_deref(), Some("second"));
        assert_eq!(
            c.model_params[1].high_precision_dtype,
            HighPrecision::Float32
        );
        assert_eq!(w.unknown_keys.len(), 2, "{:?}", w.unknown_keys);
        assert!(w.unknown_keys.iter().any(|k| k.contains("colour")));
        assert!(w.unknown_keys.iter().any(|k| k.contains("flavour")));
    }

    #[test]
    fn a_wrong_type_names_the_key_the_line_and_the_file() {
        let e = parse_err(
            "model_params:\n  matrix_shapes: [{name: llama}]\n  enable_profiler: maybe\n",
        );
        assert!(e.contains("cfg.yml"), "{e}");
        assert!(e.contains("enable_profiler"), "{e}");
        assert!(e.contains("line 3"), "{e}");
    }

    #[test]
    fn unknown_names_and_training_are_clear_errors() {
        let e = parse_err("model_params:\n  matrix_shapes: [{name: cube}]\n");
        assert!(
            e.contains("unknown matrix_shapes name \"cube\"") && e.contains("line 2"),
            "{e}"
        );
        let e = parse_err("model_params:\n  matrix_shapes: [{name: llama}]\n  model_type: mlp\n");
        assert!(e.contains("model_type") && e.contains("line 3"), "{e}");
        let e = parse_err(
            "model_params:\n  matrix_shapes: [{name: llama}]\n  high_precision_dtype: torch.int3\n",
        );
        assert!(e.contains("torch.int3"), "{e}");
        let e = parse_err(
            "quantization_config_recipe_names:\n  - \"baseline\"\n  - \"int8w0\"\nmodel_params:\n  matrix_shapes: [{name: llama}]\n",
        );
        assert!(
            e.contains("\"int8w0\" is not a recipe name")
                && e.contains("line 3")
                && e.contains("int8wo"),
            "{e}"
        );
        let e = parse_err("model_params:\n  matrix_shapes: [{name: llama}]\n  device: mps\n");
        assert!(e.contains("mps"), "{e}");
        let e = parse_err(
            "benchmark_mode: training\nmodel_params:\n  matrix_shapes: [{name: llama}]\n",
        );
        assert!(e.contains("not supported yet"), "{e}");
        let e = parse_err("model_params:\n  matrix_shapes: [{name: custom}]\n");
        assert!(e.contains("needs `shapes"), "{e}");
        let e = parse_err("quantization_config_recipe_names: [int8wo]\n");
        assert!(e.contains("model_params"), "{e}");
        let e = parse_err("model_params:\n  matrix_shapes: [{name: llama}]\n  compile: turbo\n");
        assert!(e.contains("turbo"), "{e}");
    }
}
