//! Each quantization recipe of `replay bench quant` against an independent float64
//! dequantize-then-matmul reference, on real random weights: the packed kernels (int8, int4,
//! float8 through `_scaled_mm`) must compute what their dequantized weights say, and the
//! quantization itself must stay near the high-precision output.

use crate::common;

use replay::suites::quant::model::{Model, ModelType, ModelWeights};
use replay::suites::quant::quantized_linear::QuantizedLinear;
use replay::suites::quant::recipe::Recipe;
use replay::suites::quant::sqnr::sqnr_db;
use tch::{Device, Kind, Tensor};

const RECIPES: [Recipe; 7] = [
    Recipe::Baseline,
    Recipe::Int8WeightOnly,
    Recipe::Int8Dynamic,
    Recipe::Int4WeightOnly { group_size: 32 },
    Recipe::Float8WeightOnly,
    Recipe::Float8DynamicTensor,
    Recipe::Float8DynamicRow,
];

fn inputs(dtype: Kind) -> (Tensor, Tensor) {
    inputs_with_rows(dtype, 24)
}

/// Rows above 64 take int8wo's cast+GEMM path instead of the packed kernel.
fn inputs_with_rows(dtype: Kind, rows: i64) -> (Tensor, Tensor) {
    let _turn = common::torch_generator_turn();
    tch::manual_seed(7);
    let w = Tensor::randn([96, 256], (Kind::Float, Device::Cpu))
        .f_mul_scalar(0.05)
        .unwrap()
        .to_kind(dtype);
    let x = Tensor::randn([rows, 256], (dtype, Device::Cpu));
    (w, x)
}

/// What the kernel's dtype alone allows: bfloat16 outputs carry ~8 bits (~48 dB), float32
/// ~24 bits.
fn kernel_floor_db(dtype: Kind) -> f64 {
    if dtype == Kind::Float {
        90.0
    } else {
        40.0
    }
}

/// How close the quantization itself must keep the output (torchao's usual bars: int8 and
/// float8 above 25-30 dB, int4 above 15).
fn quantization_floor_db(recipe: Recipe) -> f64 {
    match recipe {
        Recipe::Baseline => 200.0,
        Recipe::Int4WeightOnly { .. } => 15.0,
        _ => 25.0,
    }
}

#[test]
fn every_recipe_matches_its_dequantize_then_matmul_reference() {
    let _guard = tch::no_grad_guard();
    for (dtype, rows) in [
        (Kind::Float, 24),
        (Kind::BFloat16, 24),
        (Kind::BFloat16, 96),
    ] {
        let (w, x) = inputs_with_rows(dtype, rows);
        let exact = x
            .to_kind(Kind::Double)
            .matmul(&w.to_kind(Kind::Double).tr());
        for recipe in RECIPES {
            let layer = QuantizedLinear::new(recipe, &w).unwrap();
            let out = layer.forward(&x).unwrap();
            assert_eq!(out.size(), [rows, 96], "{recipe}");
            assert_eq!(out.kind(), dtype, "{recipe}");
            let reference = layer.reference(&x).unwrap();
            let kernel = sqnr_db(&reference, &out).unwrap();
            assert!(
                kernel >= kernel_floor_db(dtype),
                "{recipe} {dtype:?}: kernel {kernel:.1} dB from its reference"
            );
            if recipe != Recipe::Baseline || dtype == Kind::Float {
                let quality = sqnr_db(&exact, &out).unwrap();
                assert!(
                    quality >= quantization_floor_db(recipe).min(kernel_floor_db(dtype)),
                    "{recipe} {dtype:?}: {quality:.1} dB from the exact product"
                );
            }
        }
    }
}

#[test]
fn the_reference_catches_a_wrong_dequantization() {
    // The int4 reference with the zero point off by one step must be far from the kernel:
    // the check is not vacuous.
    let _guard = tch::no_grad_guard();
    let (w, x) = inputs(Kind::Float);
    let layer = QuantizedLinear::new(Recipe::Int4WeightOnly { group_size: 32 }, &w).unwrap();
    let out = layer.forward(&x).unwrap();
    let shifted = layer
        .dequantized_weight()
        .unwrap()
        .f_add_scalar(0.01)
        .unwrap();
    let wrong = x.to_kind(Kind::Double).matmul(&shifted.tr());
    assert!(sqnr_db(&wrong, &out).unwrap() < 30.0);
}

#[test]
fn int4_needs_k_to_be_a_multiple_of_its_group() {
    let w = {
        let _turn = common::torch_generator_turn();
        Tensor::randn([8, 48], (Kind::Float, Device::Cpu))
    };
    let e = QuantizedLinear::new(Recipe::Int4WeightOnly { group_size: 32 }, &w).unwrap_err();
    assert!(e.to_string().contains("not a multiple"), "{e}");
}

#[test]
fn every_model_type_runs_under_every_recipe_with_its_output_shape() {
    let _guard = tch::no_grad_guard();
    for (model_type, out) in [
        (ModelType::Linear, vec![8, 64]),
        ("ln_linear_silu".parse().unwrap(), vec![8, 64]),
        (ModelType::TransformerBlock, vec![8, 16, 128]),
    ] {
        let _turn = common::torch_generator_turn();
        tch::manual_seed(1);
        let weights = ModelWeights::random(
            model_type,
            128,
            64,
            Kind::Float,
            replay::device::Device::host(),
        )
        .unwrap();
        let x = ModelWeights::random_input(
            model_type,
            8,
            128,
            Kind::Float,
            replay::device::Device::host(),
        )
        .unwrap();
        let base = Model::new(&weights, Recipe::Baseline)
            .unwrap()
            .forward(&x)
            .unwrap();
        assert_eq!(base.size(), out, "{model_type}");
        for recipe in RECIPES {
            let y = Model::new(&weights, recipe).unwrap().forward(&x).unwrap();
            assert_eq!(y.size(), out, "{model_type} {recipe}");
            let sqnr = sqnr_db(&base, &y).unwrap();
            assert!(sqnr > 15.0, "{model_type} {recipe}: {sqnr:.1} dB");
        }
    }
}
