//! Triton kernels of a real CUDA capture: `tests/data/compiled/h200_bloom_tiny/` is what
//! `replay capture --compile --zoo bloom-tiny --device cuda` wrote on an H200 (torch 2.11,
//! Triton 3.6): the Kineto trace, its `kernels.json` (whose Triton entries lack the launch
//! data: the recorder of that run found none) and the Triton cache with every autotuned cubin
//! and Triton's metadata of each. The launch data comes from that cache.

use std::path::{Path, PathBuf};

use replay_core::inductor::{self, cubin, read_kernels, triton_cache, KernelArg};
use replay_core::signature::{GeneratedKind, Tier};
use replay_core::trace;

use crate::common;

fn capture() -> PathBuf {
    common::repo_root().join("crates/core/tests/data/compiled/h200_bloom_tiny")
}

fn kernels_json() -> PathBuf {
    capture().join("inductor/kernels.json")
}

/// A copy of the capture to break, with the kernels.json `edit` makes.
fn edited_copy(edit: impl FnOnce(&mut serde_json::Value)) -> (tempfile::TempDir, PathBuf) {
    common::edited_kernels_copy(&capture(), "", "inductor/kernels.json", edit)
}

fn kernel_index(value: &serde_json::Value, name: &str) -> usize {
    value["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .position(|k| k["name"] == name)
        .unwrap()
}

/// The bytes each Triton signature entry takes as a kernel parameter.
fn param_bytes(ty: &str) -> u32 {
    match ty {
        t if t.starts_with('*') => 8,
        "i64" | "u64" | "fp64" => 8,
        "i32" | "u32" | "fp32" => 4,
        "i16" | "u16" | "fp16" | "bf16" => 2,
        "i1" | "i8" | "u8" => 1,
        other => panic!("signature entry {other}"),
    }
}

#[test]
fn every_triton_kernel_gets_its_launch_data_from_the_kept_cache() {
    let kernels = read_kernels(&kernels_json()).unwrap_or_else(|e| panic!("{e}"));
    let triton: Vec<_> = kernels
        .file
        .kernels
        .iter()
        .filter(|k| k.kind == GeneratedKind::Triton)
        .collect();
    assert_eq!(triton.len(), 10);
    for kernel in triton {
        assert!(kernel.cubin.is_none(), "the capture recorded no cubin");
        let launch = kernels
            .triton_launch(&kernel.trace_name)
            .unwrap_or_else(|why| panic!("{}: {why}", kernel.name));
        assert_eq!(launch.function, kernel.name);
        assert!(launch.cubin.starts_with(kernels.dir.join("cache/triton/0")));
        let metadata = triton_cache::read_metadata(&launch.cubin.with_extension("json")).unwrap();
        assert_eq!(
            launch.origin,
            launch.cubin.with_extension("json").display().to_string()
        );
        assert_eq!(
            (launch.num_warps, launch.shared, launch.num_ctas),
            (metadata.num_warps, metadata.shared, 1)
        );
        assert_eq!(
            (launch.global_scratch_size, launch.profile_scratch_size),
            (0, 0)
        );
        assert_eq!(launch.arch, Some(90));
        // The chosen cubin's parameters are the signature's, then Triton 3.6's two scratch
        // pointers: what the driver will check a launch against.
        let bytes = std::fs::read(&launch.cubin).unwrap();
        let mut want: Vec<u32> = kernel.signature.iter().map(|t| param_bytes(t)).collect();
        want.extend([8, 8]);
        assert_eq!(
            cubin::param_sizes(&bytes, &launch.function),
            Some(want),
            "{}",
            kernel.name
        );
        // Its block gives the recorded grid from the call's xnumel.
        let block = cubin::x_block(&bytes).expect("the PTX is kept in the cubin");
        for call in &kernel.calls {
            let grid = call.grid.unwrap()[0];
            assert!(
                call.args
                    .iter()
                    .any(|a| matches!(a, KernelArg::Int(n) if (*n as u64).div_ceil(block) == u64::from(grid))),
                "{}: block {block}, grid {grid}",
                kernel.name
            );
        }
    }
}

#[test]
fn of_several_autotuned_cubins_the_one_whose_block_gives_the_grid_is_chosen() {
    let kernels = read_kernels(&kernels_json()).unwrap();
    let dir = &kernels.dir;
    // triton_poi_fused_add_addmm_mul_tanh_view_6: xnumel 1280 in 5 blocks, so XBLOCK 256;
    // the cache holds the 128 (shl 7) and the 256 (shl 8) builds.
    let name = "triton_poi_fused_add_addmm_mul_tanh_view_6";
    let variants = triton_cache::cache_variants(dir, name);
    assert_eq!(variants.len(), 2);
    let blocks: Vec<Option<u64>> = variants
        .iter()
        .map(|v| cubin::x_block(&std::fs::read(v).unwrap()))
        .collect();
    assert_eq!(blocks, [Some(128), Some(256)]);
    assert_eq!(kernels.triton_launch(name).unwrap().cubin, variants[1]);
    // A persistent reduction of 5 rows in 5 blocks: the XBLOCK 1 build (its PTX compares the
    // program id itself), not the XBLOCK 8 one.
    let name = "triton_per_fused_add_addmm_native_layer_norm_view_5";
    let variants = triton_cache::cache_variants(dir, name);
    let blocks: Vec<Option<u64>> = variants
        .iter()
        .map(|v| cubin::x_block(&std::fs::read(v).unwrap()))
        .collect();
    assert_eq!(blocks, [Some(1), Some(8)]);
    let launch = kernels.triton_launch(name).unwrap();
    assert_eq!((&launch.cubin, launch.shared), (&variants[0], 8));
}

#[test]
fn a_recorded_cache_hash_or_cubin_wins_and_an_unsettled_one_is_explained() {
    let name = "triton_poi_fused_add_addmm_mul_tanh_view_6";
    let variants = triton_cache::cache_variants(&capture().join("inductor"), name);
    let other = variants[0].parent().unwrap().file_name().unwrap();
    let other = other.to_str().unwrap().to_owned();
    let (_d, path) = edited_copy(|v| {
        let i = kernel_index(v, name);
        v["kernels"][i]["cache_hash"] = serde_json::json!(other);
    });
    let kernels = read_kernels(&path).unwrap();
    let launch = kernels.triton_launch(name).unwrap();
    assert!(launch.cubin.parent().unwrap().ends_with(&other));

    // Launch data in the entry itself is used as it is (and the metadata beside the cubin
    // fills what it lacks).
    let rel = format!("cache/triton/0/{other}/{name}.cubin");
    let (_d, path) = edited_copy(|v| {
        let i = kernel_index(v, name);
        let k = &mut v["kernels"][i];
        k["cubin"] = serde_json::json!(rel);
        k["function"] = serde_json::json!(name);
        k["num_warps"] = serde_json::json!(4);
        k["shared_mem"] = serde_json::json!(0);
    });
    let kernels = read_kernels(&path).unwrap();
    let launch = kernels.triton_launch(name).unwrap();
    assert_eq!(launch.origin, "kernels.json");
    assert_eq!((launch.num_warps, launch.arch), (4, Some(90)));

    // A grid that no build gives leaves the kernel unreplayable, saying why; so does a hash
    // the cache does not hold.
    let (_d, path) = edited_copy(|v| {
        let i = kernel_index(v, name);
        v["kernels"][i]["calls"][0]["grid"] = serde_json::json!([3, 1, 1]);
    });
    let why = read_kernels(&path)
        .unwrap()
        .triton_launch(name)
        .unwrap_err();
    assert!(
        why.contains("holds 2 cubins") && why.contains("0 of them fit"),
        "{why}"
    );
    let (_d, path) = edited_copy(|v| {
        let i = kernel_index(v, name);
        v["kernels"][i]["cache_hash"] = serde_json::json!("NOSUCHHASH");
    });
    let why = read_kernels(&path)
        .unwrap()
        .triton_launch(name)
        .unwrap_err();
    assert!(
        why.contains("no cubin") && why.contains("NOSUCHHASH"),
        "{why}"
    );
}

#[test]
fn classify_puts_the_triton_kernels_in_tier_4_launchable_from_the_cache() {
    let trace_path = capture().join("trace.json");
    let loaded = trace::load(&trace_path).unwrap_or_else(|e| panic!("{e}"));
    let file =
        inductor::classify_with_cache(&loaded, &trace_path, None).unwrap_or_else(|e| panic!("{e}"));
    let kernels = read_kernels(&kernels_json()).unwrap();
    let generated: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Generated)
        .collect();
    assert_eq!(generated.len(), 10);
    for sig in generated {
        assert!(sig.name.starts_with("triton_"), "{}", sig.name);
        let params = sig.generated.as_ref().unwrap();
        assert_eq!(params.kind, GeneratedKind::Triton);
        let kernel = kernels.by_trace_name(&sig.name).unwrap();
        assert_eq!(
            params.source.as_deref().map(Path::new),
            Some(kernels.resolve(&kernel.source).as_path())
        );
        assert!(sig.replayable, "{}: {:?}", sig.name, sig.reason);
    }
}

#[test]
fn a_kernel_without_a_cubin_is_unreplayable_and_bad_metadata_names_its_file() {
    // The cache without kernel 6's cubins: classify still succeeds, that kernel is not
    // replayable and says why, the others are.
    let name = "triton_poi_fused_add_addmm_mul_tanh_view_6";
    let (dir, _) = edited_copy(|_| {});
    for cubin in triton_cache::cache_variants(&dir.path().join("inductor"), name) {
        std::fs::remove_file(cubin).unwrap();
    }
    let trace_path = dir.path().join("trace.json");
    let loaded = trace::load(&trace_path).unwrap();
    let file = inductor::classify_with_cache(&loaded, &trace_path, None).unwrap();
    for sig in file.signatures.iter().filter(|s| s.tier == Tier::Generated) {
        if sig.name == name {
            let reason = sig.reason.as_deref().unwrap_or("");
            assert!(!sig.replayable);
            assert!(
                reason.contains("no cubin") && reason.contains(name),
                "{reason}"
            );
        } else {
            assert!(sig.replayable, "{}: {:?}", sig.name, sig.reason);
        }
    }
    // Triton metadata that is not JSON is bad input: exit 2, naming the file.
    let name = "triton_poi_fused_clone_permute_view_4";
    let (dir, path) = edited_copy(|_| {});
    let metadata = read_kernels(&path)
        .unwrap()
        .triton_launch(name)
        .unwrap()
        .cubin
        .with_extension("json");
    std::fs::write(&metadata, "{ not json").unwrap();
    let output = common::replay()
        .args(["classify", "--trace"])
        .arg(dir.path().join("trace.json"))
        .arg("--out")
        .arg(dir.path().join("sigs.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&metadata.display().to_string()), "{stderr}");
}

#[test]
fn what_is_no_cubin_reads_as_nothing() {
    assert_eq!(cubin::param_sizes(b"not an elf file", "k"), None);
    assert_eq!(cubin::x_block(&[0x7f, b'E', b'L', b'F', 2, 1]), None);
    let kernels = read_kernels(&kernels_json()).unwrap();
    let launch = kernels
        .triton_launch("triton_poi_fused_clone_permute_view_4")
        .unwrap();
    let bytes = std::fs::read(&launch.cubin).unwrap();
    assert_eq!(cubin::param_sizes(&bytes, "another_kernel"), None);
}

#[test]
fn the_recorder_filled_the_launch_data_of_gpt2_small_compiled_on_an_h200() {
    // The second GPU run (2026-11-26): `capture --compile --zoo gpt2-small --device cuda` with
    // the recorder that reads the static launcher's cache_hash. Every Triton entry carries its
    // cubin, entry and warps from the run itself, and the cubin is in the kept cache.
    let dir = common::repo_root().join("crates/core/tests/data/compiled/h200_gpt2_small");
    let kernels = read_kernels(&dir.join("inductor/kernels.json")).unwrap();
    assert_eq!(kernels.triton.len(), 9);
    for (name, launch) in &kernels.triton {
        let launch = launch
            .as_ref()
            .unwrap_or_else(|why| panic!("{name}: {why}"));
        assert_eq!(launch.origin, "kernels.json", "{name}");
        assert!(launch.cubin.is_file(), "{name}: {}", launch.cubin.display());
        assert_eq!(&launch.function, name);
        assert!(
            launch.num_warps >= 1 && launch.arch == Some(90),
            "{name}: {launch:?}"
        );
    }
    let trace_path = dir.join("trace.json.gz");
    let loaded = trace::load(&trace_path).unwrap_or_else(|e| panic!("{e}"));
    let file = inductor::classify_with_cache(&loaded, &trace_path, Some(&dir.join("inductor")))
        .unwrap_or_else(|e| panic!("{e}"));
    let generated: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Generated)
        .collect();
    assert_eq!(generated.len(), 9);
    assert!(generated.iter().all(|s| s.replayable), "{generated:?}");
    // The graph's extern GEMMs are tier 2 with their shapes (out= in compiled code).
    let gemms: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Gemm)
        .collect();
    assert!(
        !gemms.is_empty() && gemms.iter().all(|s| s.gemm.is_some()),
        "{gemms:?}"
    );
}
