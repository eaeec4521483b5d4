"""Where `capture_trace.py --compile` keeps Inductor's files, decided before torch is imported.

A compiled capture keeps Inductor's cache of that run in an `inductor/` folder beside the
trace file (`--out results/t.json` -> `results/inductor/`), with TORCHINDUCTOR_CACHE_DIR at
`inductor/cache`: torch reads that variable whenever it writes a file, and setting it before
torch is imported makes sure nothing of the run lands in the user's default cache. Torch-free.
"""
import os

# torch.compile's modes that `--compile` takes; `--compile` alone is the first.
MODES = ("default", "reduce-overhead", "max-autotune")


def inductor_dir(out):
    """The `inductor/` folder beside the trace file `out`."""
    return os.path.join(os.path.dirname(os.path.abspath(out)), "inductor")


def cache_dir(out):
    return os.path.join(inductor_dir(out), "cache")


def _flag_value(argv, flag):
    """The value of `flag` in `argv` (`--flag V` or `--flag=V`), "" when it has none, None
    when absent."""
    for i, arg in enumerate(argv):
        if arg == flag:
            return argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else ""
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1:]
    return None


def set_cache_env_from_argv(argv):
    """Points TORCHINDUCTOR_CACHE_DIR at the run's `inductor/cache` when `argv` asks for
    --compile (read by hand: the real parser, after torch's import, reports a bad line)."""
    out = _flag_value(argv, "--out")
    if _flag_value(argv, "--compile") is not None and out:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir(out)
