//! Recognising the kernels torch.compile generated, by name (tier 4).
//!
//! Inductor names its kernels itself (torch 2.11, `torch/_inductor/codegen/`):
//! - Triton kernels (CUDA/ROCm) are `triton_<category>_<fused name>_<n>`, where the category
//!   is the first three letters of the kernel's heuristics (`wrapper_benchmark.py`'s
//!   `_kernel_category_choices`): `poi` pointwise, `red` reduction, `per` persistent
//!   reduction, `tem` template (Triton GEMM/conv templates), `for` foreach (combo kernels),
//!   `spl` split scan, and `unk` where the source matches none of them (cooperative
//!   reductions). AOTInductor prefixes the model's name when it compiles several
//!   submodules; that is not recognised here.
//! - C++ kernels (CPU) are `cpp_<fused name>_<n>` (`cpp.py`'s `define_kernel`;
//!   `cpp_fused_gelu_view_1` with the default descriptive names). With
//!   `torch._inductor.config.cpp.enable_kernel_profile = True` each call is recorded as a
//!   CPU op named `graph_<graph id>_<kernel>`; without it the kernels leave no event.

use super::schema::{GeneratedKind, GeneratedParams};

/// Why a generated kernel cannot be replayed when classify had no `kernels.json`: its code
/// is only in the Inductor cache of the profiled run.
pub const NO_CACHE_REASON: &str = "generated kernel: replayed from the kept Inductor cache, \
     which is not at hand (capture with `replay capture --compile`, or give --inductor-cache DIR)";

/// Triton kernel categories Inductor writes into kernel names.
const TRITON_CATEGORIES: [&str; 7] = ["poi", "red", "per", "tem", "for", "spl", "unk"];

/// The tier-4 parameters of a GPU kernel named like an Inductor Triton kernel.
pub fn triton_kernel(name: &str) -> Option<GeneratedParams> {
    let rest = name.strip_prefix("triton_")?;
    let (category, fused) = rest.split_once('_')?;
    if !TRITON_CATEGORIES.contains(&category) || !has_name_and_number(fused) {
        return None;
    }
    Some(GeneratedParams {
        kind: GeneratedKind::Triton,
        graph: None,
        kernel: name.to_owned(),
        source: None,
    })
}

/// The tier-4 parameters of a host op named like a profiled Inductor C++ kernel:
/// `graph_0_cpp_fused_gelu_view_1` (or `cpp_fused_gelu_view_1` without the graph id).
pub fn inductor_cpp_op(name: &str) -> Option<GeneratedParams> {
    let (graph, kernel) = match name.strip_prefix("graph_") {
        Some(rest) => {
            let (id, kernel) = rest.split_once('_')?;
            if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (Some(id.parse::<u32>().ok()?), kernel)
        }
        None => (None, name),
    };
    let fused = kernel.strip_prefix("cpp_fused_")?;
    if !has_name_and_number(fused) {
        return None;
    }
    Some(GeneratedParams {
        kind: GeneratedKind::InductorCpp,
        graph,
        kernel: kernel.to_owned(),
        source: None,
    })
}

/// Whether `rest` is `<identifier>_<n>`: a fused name and Inductor's kernel counter, with
/// nothing that an identifier cannot hold (a demangled C++ kernel has `<`, `(`, spaces).
fn has_name_and_number(rest: &str) -> bool {
    let Some((_, number)) = rest.rsplit_once('_') else {
        return false;
    };
    !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inductor_triton_kernels_are_recognised_by_category() {
        for name in [
            "triton_poi_fused_add_cos_sin_0",
            "triton_red_fused__softmax_1",
            "triton_per_fused_native_layer_norm_2",
            "triton_tem_fused_addmm_3",
            "triton_for_fused_4",
            "triton_spl_fused_cumsum_5",
            "triton_unk_fused_sum_6",
        ] {
            let params = triton_kernel(name).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(params.kind, GeneratedKind::Triton);
            assert_eq!(params.kernel, name);
            assert_eq!(params.graph, None);
        }
    }

    #[test]
    fn other_kernels_are_not_triton_kernels() {
        for name in [
            "triton_",
            "triton_poi",
            "triton_poi_fused_add",
            "triton_xyz_fused_add_0",
            "my_triton_poi_fused_add_0",
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)",
            "ampere_sgemm_128x64_nn",
            "triton_poi_fused_add_0(float*)",
        ] {
            assert!(triton_kernel(name).is_none(), "{name}");
        }
    }

    #[test]
    fn profiled_cpp_kernels_give_graph_and_kernel() {
        let params = inductor_cpp_op("graph_0_cpp_fused_gelu_view_1").expect("kernel");
        assert_eq!(params.kind, GeneratedKind::InductorCpp);
        assert_eq!(params.graph, Some(0));
        assert_eq!(params.kernel, "cpp_fused_gelu_view_1");
        let params = inductor_cpp_op("graph_12_cpp_fused_add_mul_native_layer_norm_sigmoid_view_3")
            .expect("kernel");
        assert_eq!(params.graph, Some(12));
        assert_eq!(
            params.kernel,
            "cpp_fused_add_mul_native_layer_norm_sigmoid_view_3"
        );
        let bare = inductor_cpp_op("cpp_fused_embedding_0").expect("kernel");
        assert_eq!(
            (bare.graph, bare.kernel.as_str()),
            (None, "cpp_fused_embedding_0")
        );
    }

    #[test]
    fn other_host_ops_are_not_cpp_kernels() {
        for name in [
            "aten::addmm",
            "graph_x_cpp_fused_add_0",
            "graph__cpp_fused_add_0",
            "graph_0_aten::add",
            "cpp_fused_add",
            "cpp_fused_",
            "Torch-Compiled Region: 0/0",
            "## Call CompiledFxGraph fxyz ##",
        ] {
            assert!(inductor_cpp_op(name).is_none(), "{name}");
        }
    }
}
