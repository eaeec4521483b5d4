"""Writes the CPU traces of a torch.compile'd model that the torch-free tests read.

How they were made (torch 2.11.0, CPU only, the project's .venv):

    .venv/bin/python crates/core/tests/data/compiled/make_traces.py

A 2-block MLP (Linear 64->256, GELU, Linear 256->64, LayerNorm, residual; batch 8) is
compiled with `torch.compile` (Inductor, default mode) on the CPU, warmed up, and one step
is profiled (`record_shapes=True`, a `ProfilerStep#N` span through `schedule`/`step`):

- `mlp_kernel_profile.json.gz`: with `torch._inductor.config.cpp.enable_kernel_profile =
  True`, so every Inductor C++ kernel is recorded as a CPU op
  (`graph_0_cpp_fused_*`, tier 4);
- `mlp_plain.json.gz`: the same model compiled *without* kernel profiling (a fresh
  Inductor cache and a reset of Dynamo): the generated kernels leave no event, and their
  time lies inside `Torch-Compiled Region` with no op covering it.

Each compile uses its own temporary TORCHINDUCTOR_CACHE_DIR, so neither reuses the other's
kernels. The traces are written gzipped; Python's own frames are not recorded (no
with_stack), which keeps them small (about 2 kB each). libtorch runs 2 threads; on a machine
busy with other work a profiled addmm can take tens of milliseconds instead of tens of
microseconds, so the committed kernel-profile trace is one taken when it was quiet (its step
719 us, the plain one's 696 us). The tests read names, structure and the trace's own times,
never a speed.
"""

import gzip
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def build_model(torch):
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up = torch.nn.Linear(64, 256)
            self.down = torch.nn.Linear(256, 64)
            self.norm = torch.nn.LayerNorm(64)

        def forward(self, x):
            return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))

    return torch.nn.Sequential(Block(), Block()).eval()


def capture(kernel_profile: bool, out_name: str) -> None:
    cache = tempfile.mkdtemp(prefix="replay_inductor_")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
    import torch
    import torch._dynamo
    import torch._inductor.config as inductor_config
    from torch.profiler import ProfilerActivity, profile, schedule

    torch._dynamo.reset()
    torch.set_num_threads(2)
    inductor_config.cpp.enable_kernel_profile = kernel_profile
    model = build_model(torch)
    compiled = torch.compile(model)
    x = torch.randn(8, 64)
    with torch.no_grad():
        for _ in range(3):
            compiled(x)
        raw = os.path.join(cache, "trace.json")
        with profile(
            activities=[ProfilerActivity.CPU],
            record_shapes=True,
            schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
        ) as prof:
            for _ in range(2):
                compiled(x)
                prof.step()
        prof.export_chrome_trace(raw)
    with open(raw, "rb") as src, gzip.open(os.path.join(HERE, out_name), "wb", 9) as dst:
        shutil.copyfileobj(src, dst)
    shutil.rmtree(cache, ignore_errors=True)
    print(f"wrote {out_name} ({os.path.getsize(os.path.join(HERE, out_name))} bytes)")


def main() -> int:
    which = sys.argv[1] if len(sys.argv) > 1 else "both"
    # Each capture in its own process: Inductor's config and caches are process-wide.
    if which == "both":
        import subprocess

        for mode in ("kernel_profile", "plain"):
            subprocess.run([sys.executable, os.path.abspath(__file__), mode], check=True)
        return 0
    if which == "kernel_profile":
        capture(True, "mlp_kernel_profile.json.gz")
    elif which == "plain":
        capture(False, "mlp_plain.json.gz")
    else:
        print(f"unknown mode {which!r}: kernel_profile, plain or both", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
