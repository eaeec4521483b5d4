#!/usr/bin/env python3
"""Packs the extension module cargo built (target/release/lib_native.so, crate
crates/python) and the package's Python files into one abi3 wheel, byte for byte the same
for the same inputs.

  .venv/bin/python scripts/python_wheel.py --lib target/release/lib_native.so --out target/wheels

Why not `maturin build` here: maturin runs its own cargo on crates/python alone, and cargo
then resolves the dependencies' features for that package alone, which differ from the
workspace's (serde_core, syn, memchr...): the core and its dependency tree would compile a
second time in every fresh `make test` (minutes on two cores). Built inside `cargo test
--workspace`, the module costs only its own crate and pyo3. `maturin build -m
crates/python/Cargo.toml` still makes the same package for publishing (pyproject.toml).
Prints the wheel's path.
"""

import argparse
import base64
import hashlib
import pathlib
import re
import sysconfig
import zipfile

REPO = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = REPO / "crates" / "python" / "python" / "replay_kernels"
NAME = "replay_kernels"
DIST = "replay-kernels"
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def version() -> str:
    text = (REPO / "Cargo.toml").read_text()
    found = re.search(r'\[workspace\.package\][^\[]*?\nversion\s*=\s*"([^"]+)"', text)
    if not found:
        raise SystemExit("python_wheel: no [workspace.package] version in Cargo.toml")
    return found.group(1)


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="the cdylib cargo built (lib_native.so)")
    parser.add_argument("--out", required=True, help="folder for the wheel")
    args = parser.parse_args()
    lib = pathlib.Path(args.lib)
    if not lib.is_file():
        raise SystemExit(f"python_wheel: {lib} is not built: run `cargo build --release --workspace` first")
    ver = version()
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"cp39-abi3-{platform}"
    files = {}
    for path in sorted(PACKAGE.iterdir()):
        if path.is_file() and path.suffix in (".py", ".pyi", ".typed"):
            files[f"{NAME}/{path.name}"] = path.read_bytes()
    files[f"{NAME}/_native.abi3.so"] = lib.read_bytes()
    dist_info = f"{NAME}-{ver}.dist-info"
    files[f"{dist_info}/METADATA"] = (
        "Metadata-Version: 2.1\n"
        f"Name: {DIST}\n"
        f"Version: {ver}\n"
        "Summary: replay's torch-free core in Python: PyTorch profiler traces, kernel signatures "
        "and timeline predictions as Arrow/pandas/polars frames\n"
        "License: MIT OR Apache-2.0\n"
        "Requires-Python: >=3.9\n"
        "Requires-Dist: pyarrow>=14\n"
    ).encode()
    files[f"{dist_info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: replay scripts/python_wheel.py\nRoot-Is-Purelib: false\n"
        f"Tag: {tag}\n"
    ).encode()
    record = [record_line(name, data) for name, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{NAME}-{ver}-{tag}.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    print(wheel)


if __name__ == "__main__":
    main()
