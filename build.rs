//! Build script for replay.
//!
//! 1. Compiles every `cuda/*.cu` with nvcc into one fatbin per file (sm_80 and sm_90 SASS
//!    plus compute_90 PTX so newer GPUs can JIT it) and generates
//!    `$OUT_DIR/embedded_kernels.rs`, which embeds the bytes with `include_bytes!` and maps
//!    every `extern "C" __global__` function name to its module. Without nvcc the build still
//!    succeeds (with a warning) and the generated file says why, so the run-time error is
//!    "built without nvcc: ..." rather than something obscure.
//! 2. Adds an rpath to the libtorch and CUDA library folders of `.venv`, so `target/*/replay`
//!    and the test binaries run without `LD_LIBRARY_PATH`, and keeps libtorch_cuda linked
//!    even though no symbol of it is referenced directly.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Real GPU code for these architectures (an sm_80 cubin also runs on sm_86 and sm_89: SASS is
/// compatible within a major version, so those two would only add nvcc time)...
const SASS_ARCHS: &[&str] = &["80", "90"];
/// ...and PTX for this one, which the driver JIT-compiles on anything newer.
const PTX_ARCH: &str = "90";

fn main() {
    let manifest_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    for var in [
        "NVCC",
        "REPLAY_VENV",
        "CUDA_HOME",
        "CUDA_PATH",
        "LIBTORCH",
        "REPLAY_REQUIRE_NVCC",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rustc-check-cfg=cfg(replay_built_with_nvcc)");

    compile_cuda_kernels(&manifest_dir, &out_dir);
    compile_libtorch_shim(&manifest_dir);
    record_libtorch_version(&manifest_dir);
    link_runtime_library_paths(&manifest_dir);
}

fn venv_dir(manifest_dir: &Path) -> PathBuf {
    env::var_os("REPLAY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join(".venv"))
}

fn libtorch_dir(manifest_dir: &Path) -> PathBuf {
    env::var_os("LIBTORCH")
        .map(PathBuf::from)
        .unwrap_or_else(|| venv_dir(manifest_dir).join("libtorch"))
}

// ---------------------------------------------------------------------------------------------
// libtorch shim (tier 3: call any aten operator by name; memory counters; AOTInductor packages)
// ---------------------------------------------------------------------------------------------

fn compile_libtorch_shim(manifest_dir: &Path) {
    let shim = manifest_dir.join("src/torch/shim");
    println!("cargo:rerun-if-changed={}", shim.display());
    let libtorch = libtorch_dir(manifest_dir);
    let cuda_include = venv_dir(manifest_dir).join("cuda/include");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .pic(true)
        // libtorch 2.13 headers use C++20 features (bit-field initializers).
        .std("c++20")
        .warnings(false)
        .include(&shim)
        .include(libtorch.join("include"))
        .include(libtorch.join("include/torch/csrc/api/include"))
        // Same ABI as the wheel's libtorch (and as tch's own shim).
        .define("_GLIBCXX_USE_CXX11_ABI", "1")
        .define("GLOG_USE_GLOG_EXPORT", None)
        .flag_if_supported("-Wno-unused-parameter")
        .file(shim.join("op_dispatch.cpp"))
        .file(shim.join("memory_stats.cpp"))
        .file(shim.join("aoti_package.cpp"))
        .file(shim.join("profiler.cpp"))
        .file(shim.join("fusion_group.cpp"));
    // libtorch's current CUDA stream and the CUDA caching allocator's statistics is only reachable when this libtorch has CUDA (the wheel's
    // does) and the CUDA headers are around (they come with the nvcc wheels).
    let torch_has_cuda = libtorch.join("lib/libc10_cuda.so").exists();
    if torch_has_cuda && cuda_include.join("cuda_runtime_api.h").exists() {
        build
            .define("REPLAY_WITH_TORCH_CUDA", None)
            .include(&cuda_include);
        println!("cargo:rustc-link-lib=dylib=c10_cuda");
    }
    build.compile("replay_op_dispatch");
}

/// The version of the libtorch being linked, for reports (`REPLAY_LIBTORCH_VERSION`): the
/// wheel's `version.py`, else the C++ header's `TORCH_VERSION`, else `unknown`.
fn record_libtorch_version(manifest_dir: &Path) {
    let libtorch = libtorch_dir(manifest_dir);
    let from_wheel = fs::read_to_string(libtorch.join("version.py"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("__version__ = "))
                .map(|v| v.trim().trim_matches('\'').to_string())
        });
    let from_header = || {
        fs::read_to_string(libtorch.join("include/torch/csrc/api/include/torch/version.h"))
            .ok()
            .and_then(|text| {
                text.lines().find_map(|l| {
                    l.trim()
                        .strip_prefix("#define TORCH_VERSION ")
                        .map(|v| v.trim().trim_matches('"').to_string())
                })
            })
    };
    let version = from_wheel
        .or_else(from_header)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=REPLAY_LIBTORCH_VERSION={version}");
}

// ---------------------------------------------------------------------------------------------
// CUDA kernels
// ---------------------------------------------------------------------------------------------

fn compile_cuda_kernels(manifest_dir: &Path, out_dir: &Path) {
    let cuda_dir = manifest_dir.join("cuda");
    println!("cargo:rerun-if-changed={}", cuda_dir.display());
    let mut sources: Vec<PathBuf> = Vec::new();
    if let Ok(entries) = fs::read_dir(&cuda_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            match path.extension().and_then(|e| e.to_str()) {
                Some("cu") => {
                    println!("cargo:rerun-if-changed={}", path.display());
                    sources.push(path);
                }
                Some("cuh") => println!("cargo:rerun-if-changed={}", path.display()),
                _ => {}
            }
        }
    }
    sources.sort();

    let nvcc = find_nvcc(manifest_dir);
    let mut modules: Vec<(String, PathBuf, Vec<String>)> = Vec::new();
    let unavailable_reason = match &nvcc {
        None => Some(
            "built without nvcc: no nvcc was found in $NVCC, .venv (run scripts/setup), \
             $CUDA_HOME, $CUDA_PATH or $PATH when replay was compiled"
                .to_string(),
        ),
        Some(nvcc) => {
            for source in &sources {
                let stem = source
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("kernel")
                    .to_string();
                let fatbin = out_dir.join(format!("{stem}.fatbin"));
                run_nvcc(nvcc, &cuda_dir, source, &fatbin);
                let text = fs::read_to_string(source).unwrap_or_default();
                modules.push((stem, fatbin, kernel_names(&text)));
            }
            None
        }
    };

    if let Some(reason) = &unavailable_reason {
        if env::var_os("REPLAY_REQUIRE_NVCC").is_some() {
            panic!("REPLAY_REQUIRE_NVCC is set but {reason}");
        }
        println!("cargo:warning=replay: {reason}; the CUDA kernels in cuda/ are not embedded");
    } else {
        println!("cargo:rustc-cfg=replay_built_with_nvcc");
    }

    write_embedded_kernels(
        out_dir,
        &modules,
        unavailable_reason.as_deref(),
        nvcc.as_deref(),
    );
}

/// nvcc is looked up in the order the README documents: `$NVCC`, the project's `.venv`,
/// `$CUDA_HOME`, `$CUDA_PATH`, then `$PATH`.
fn find_nvcc(manifest_dir: &Path) -> Option<PathBuf> {
    if let Some(nvcc) = env::var_os("NVCC") {
        return Some(PathBuf::from(nvcc));
    }
    let venv = venv_dir(manifest_dir);
    let mut candidates = vec![venv.join("cuda/bin/nvcc")];
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = env::var_os(var) {
            candidates.push(PathBuf::from(root).join("bin/nvcc"));
        }
    }
    if let Some(path) = env::var_os("PATH") {
        candidates.extend(env::split_paths(&path).map(|dir| dir.join("nvcc")));
    }
    candidates.into_iter().find(|c| c.is_file())
}

fn run_nvcc(nvcc: &Path, include_dir: &Path, source: &Path, fatbin: &Path) {
    let mut cmd = Command::new(nvcc);
    cmd.arg("--fatbin")
        .arg("-O3")
        .arg("-std=c++17")
        .arg("-I")
        .arg(include_dir);
    for arch in SASS_ARCHS {
        cmd.arg(format!("-gencode=arch=compute_{arch},code=sm_{arch}"));
    }
    cmd.arg(format!(
        "-gencode=arch=compute_{PTX_ARCH},code=compute_{PTX_ARCH}"
    ));
    cmd.arg("-o").arg(fatbin).arg(source);
    let output = cmd
        .output()
        .unwrap_or_else(|e| panic!("could not start {}: {e}", nvcc.display()));
    if !output.status.success() {
        panic!(
            "nvcc failed on {}:\n{}\n{}",
            source.display(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Names of the `extern "C" __global__` functions in a .cu file: these are the names the
/// run-time loader looks kernels up by (C linkage, so no C++ mangling).
fn kernel_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let flat = source.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut rest = flat.as_str();
    while let Some(pos) = rest.find("extern \"C\" __global__") {
        rest = &rest[pos + "extern \"C\" __global__".len()..];
        // `... void NAME(` : the identifier right before the first '('.
        if let Some(paren) = rest.find('(') {
            let head = rest[..paren].trim_end();
            let name: String = head
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if !name.is_empty() {
                names.push(name);
            }
        }
    }
    names
}

fn write_embedded_kernels(
    out_dir: &Path,
    modules: &[(String, PathBuf, Vec<String>)],
    unavailable_reason: Option<&str>,
    nvcc: Option<&Path>,
) {
    let mut code = String::new();
    let _ = writeln!(
        code,
        "// Generated by build.rs: the CUDA modules compiled from cuda/*.cu."
    );
    let _ = writeln!(code, "pub static MODULES: &[EmbeddedModule] = &[");
    for (stem, fatbin, kernels) in modules {
        let _ = writeln!(
            code,
            "    EmbeddedModule {{ name: {stem:?}, fatbin: include_bytes!({:?}), kernels: &{kernels:?} }},",
            fatbin.display().to_string()
        );
    }
    let _ = writeln!(code, "];");
    let _ = writeln!(
        code,
        "pub const UNAVAILABLE_REASON: Option<&str> = {unavailable_reason:?};"
    );
    let nvcc = nvcc.map(|p| p.display().to_string());
    let _ = writeln!(code, "pub const NVCC_USED: Option<&str> = {nvcc:?};");
    let archs: Vec<String> = SASS_ARCHS.iter().map(|a| format!("sm_{a}")).collect();
    let _ = writeln!(code, "pub const SASS_ARCHS: &[&str] = &{archs:?};");
    let _ = writeln!(code, "pub const PTX_ARCH: &str = \"compute_{PTX_ARCH}\";");
    fs::write(out_dir.join("embedded_kernels.rs"), code).expect("write embedded_kernels.rs");
}

// ---------------------------------------------------------------------------------------------
// Run-time library paths
// ---------------------------------------------------------------------------------------------

fn link_runtime_library_paths(manifest_dir: &Path) {
    let venv = venv_dir(manifest_dir);
    let libtorch = libtorch_dir(manifest_dir);
    let torch_lib = libtorch.join("lib");
    let cuda_lib = venv.join("cuda/lib");

    for dir in [&torch_lib, &cuda_lib] {
        if let Ok(dir) = dir.canonicalize() {
            // rpath, so neither the binary nor the test binaries need LD_LIBRARY_PATH; the CUDA
            // folder is what cudarc's dlopen of libcublas/libcudart/libnvrtc searches.
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
        }
    }
    if let Ok(torch_lib) = torch_lib.canonicalize() {
        println!("cargo:rustc-link-search=native={}", torch_lib.display());
        // No symbol of libtorch_cuda is referenced directly, so `--as-needed` would drop it and
        // libtorch would then report no CUDA device. Repeat what tch does, explicitly.
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed");
        if torch_lib.join("libtorch_cuda.so").exists() {
            println!("cargo:rustc-link-arg=-ltorch_cuda");
        }
        println!("cargo:rustc-link-arg=-ltorch");
        println!("cargo:rustc-link-arg=-Wl,--as-needed");
    }
}
