#!/usr/bin/env python3
"""The prepared GPU check: every stage in one command that ends before its deadline; run it
through scripts/gpu_check.sh.

  gpu_check.sh --all [--deadline 420] [--device cuda|cpu] [--quick] [--out DIR]
  gpu_check.sh --stage NAME[,NAME] [...]              (some stages, sharing the deadline)

Stages, in the order of what we learn per minute, with their weights (slices below):
  selftest  10  replay devices; replay selftest (every tier, the scan, mHC and bandwidth
                kernels against their references); replay selftest --model bloom-tiny
                (carried in the bundle). bloom-560m is exported in the background meanwhile.
  truth      8  replay isolated of the two H100 signature files on the device: per signature
                its isolated median against the trace's own mean per invocation, per tier, and
                each trace's step predicted from the isolated durations. On an H200 it says so:
                the errors are then H200 against H100 (1.4x the memory bandwidth). Then PARAM's
                linear pair: a V100 trace recorded without shapes classified with its Execution
                Trace, and the ET's iteration re-run on the device with the model's data flow
  compare   40  the host's costs on this machine first (replay calibrate --host-only: dispatch,
                interpreter, launch, sync, copies, the profiler per event; host/host.json in
                the archive), then replay compare (which measures the host section again in
                its own process, the truth's: host.json in its folder) of the zoo as
                ../shared/gpu-truth/ holds it, as many as the slice has room for, in order:
                bloom-560m float32 seq-len 5 (--energy nvml on CUDA), bloom-560m bfloat16 128,
                gpt2-small 128, bert-base 128, resnet50 batch 8, t5-small 16, gpt2-small 5,
                resnet50 batch 1; every configuration's folder (trace, signatures, isolated,
                sequence, full timing, report, gzipped) in the archive (quick: bloom-tiny)
  compiled  10  torch.compile on the device: capture --compile of bloom-tiny (Inductor's Triton
                kernels recorded on a GPU), classify, isolated with the Inductor cache; an
                AOTInductor package for the device timed by replay full when 90 s are left.
                On the CPU only with --stage compiled
  scan       6  replay bench scan: cuda,torch on a GPU (cpu,torch on the CPU), forward and
                both, Log/Max/Entropy, the largest grid that fits the slice, every case checked
                against the float64 reference before it is timed
  quant      5  replay bench quant: every recipe (on CUDA its CUDA kernels) on bfloat16
                Linears, each checked against dequantize-then-matmul; the llama shapes too on a
                GPU with a slice of 60 s or more. Rows into summary.json only
  mhc        5  replay bench mhc at B=1 and B=16 (T=1024): --device cuda (torch and the fused
                CUDA Sinkhorn) and the offload simulation (--device cpu with the GPU present);
                on the CPU the --quick size. Rows into summary.json only
  calibrate  4  replay calibrate --quick on the device (bf16 and every fusion pattern too with a
                slice of 60 s or more)
  cpu       12  scripts/bench_isolated.py (noise) and scripts/bench_accuracy.py on the CPU at
                --cpu-threads: bloom-tiny, then bloom-560m when three repeats fit what is
                left (as long as the compare stage's case took on this CPU, or a minute each)

Slices: the stages share the deadline less a reserve (10 s, for the last archive and the
summary). Each stage, when it starts, gets the seconds still left times its weight over the
weights of the stages still to run, so time an early stage does not use goes to the later
ones; a CUDA stage skipped on a machine without CUDA takes none. With the default 420 s and
nothing left over: selftest 41 s, truth 33, compare 164, compiled 41, scan 25, quant 20,
mhc 20, calibrate 16, cpu 49. --device cpu and --quick have weights of their own, from what their
work takes on a 2-core machine (cpu: 15 10 28 20 9 8 2 4 24; quick: 16 15 14 20 5 7 3 6 34).
Each stage sizes its work to its slice (time budgets per kernel and per
case, the scan grid, whether a second case fits). --slice STAGE=S sets one stage's slice.

The deadline is kept whatever happens: every command runs in its own process group and is
killed with everything it started when its stage's slice ends; the stage is then recorded as
`cut`, with what it finished, and the next stage starts. A watchdog thread ends the whole run
a few seconds before the deadline (a hang outside any command included), recording the stage
it stopped. summary.json is rewritten atomically after every command, so a killed run still
brings its figures back; OUT holds at most 8 files (summary.json, gpu_check.log, one archive
per stage except quant, mhc and cpu, whose figures are all in summary.json). A failed command is
recorded (exit status, output tail) and the stage goes on.

Statuses per stage: ok, failed (a command or a check failed), cut (its slice ran out), skipped
(needs CUDA here, with the reason). Exit status: 1 when a stage failed, else 0.
--quick shrinks every stage to seconds (bloom-tiny, small budgets); it needs about 90 s on a
2-core machine, so `make test` runs `--all --device cpu --quick --deadline 600` (every stage
ok; it ends when the work does: --quick sizes its work as for a deadline of 300 s at most, the
rest is room for a loaded machine) and `--deadline 60` with the test hooks (cut stages, the watchdogs, the deadline kept).
Test hooks: REPLAY_GPU_CHECK_HANG=STAGE starts that stage with a command that never returns;
REPLAY_GPU_CHECK_HANG_PYTHON=STAGE makes the check itself hang there (the watchdog's case).
"""
import argparse
import os
import platform
import shutil
import sys
import tarfile
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_check_runner import (CHILDREN, Background, Clock, Log, StageCut, load_json, ok,  # noqa: E402
                              record, run, write_json_atomic)
from gpu_check_stages import (ROOT, STAGE_FUNCTIONS, bundle_dir, find_model, model_file,  # noqa: E402
                              test_hook_hang)

STAGES = ("selftest", "truth", "compare", "compiled", "scan", "quant", "mhc", "calibrate", "cpu")
# compare holds the host-aware prediction against the truth of the zoo (issue 50: every loan
# grows the truth), the figure a loan is worth most for.
WEIGHTS = {"selftest": 10, "truth": 8, "compare": 40, "compiled": 10, "scan": 6, "quant": 5, "mhc": 5,
           "calibrate": 4, "cpu": 12}
# --device cpu (the rehearsal here): what each stage needs on a 2-core CPU, where bloom-560m's
# capture and compare take a minute and the mhc and calibrate stages seconds.
CPU_WEIGHTS = {"selftest": 15, "truth": 10, "compare": 28, "compiled": 20, "scan": 9, "quant": 8, "mhc": 2,
               "calibrate": 4, "cpu": 24}
# --quick: each stage's share of what its quick work took on a 2-core machine (fixed costs,
# the Python captures above all, dominate there).
QUICK_WEIGHTS = {"selftest": 16, "truth": 15, "compare": 14, "compiled": 20, "scan": 5, "quant": 7, "mhc": 3,
                 "calibrate": 6, "cpu": 34}
CUDA_STAGES = ("selftest", "truth", "compare", "compiled", "scan", "quant", "mhc", "calibrate")
# Stages whose whole result is in summary.json: no archive of their own, so the output folder
# stays within MAX_OUT_FILES.
SUMMARY_ONLY_STAGES = ("mhc", "quant", "cpu")
# Stages that --all runs on a GPU only: on a 2-core CPU the compiled capture alone takes a
# minute (scripts/test_compile.py tests that path); `--stage compiled` runs it there.
GPU_ONLY_IN_ALL = ("compiled",)
MAX_OUT_FILES = 8
DEFAULT_DEADLINE_S = 420
QUICK_SIZING_DEADLINE_S = 300.0
RESERVE_S = 10.0
# A stage with less than this is not started (recorded as cut).
MIN_STAGE_S = 2.0


def replay_bin():
    return os.environ.get("REPLAY_BIN") or os.path.join(ROOT, "target/release/replay")


class Context:
    """What a stage sees: the binary, the device, its slice and a folder of its own."""

    def __init__(self, args, log, clock, replay, gpu_name, checkpoint, exports):
        self.log, self.clock, self.replay = log, clock, replay
        self.device, self.quick = args.device, args.quick
        self.models_dir, self.cpu_threads = args.models_dir, args.cpu_threads
        self.gpu_name, self._checkpoint, self.exports = gpu_name, checkpoint, exports
        self.work = None
        self.slice_s = 0.0
        # --quick sizes its work as if the deadline were QUICK_SIZING_DEADLINE_S at most: a
        # longer deadline (room for a loaded machine) lengthens the slices the watchdog keeps,
        # not the work.
        self.sizing_scale = min(1.0, QUICK_SIZING_DEADLINE_S / args.deadline) if args.quick else 1.0
        self.sizing_end = 0.0
        # What one stage measured that a later one sizes its work by (compare_cpu_s).
        self.notes = {}

    def run(self, cmd, timeout):
        return run(self.log, self.clock, cmd, timeout, checkpoint=lambda _r: self._checkpoint())

    def checkpoint(self):
        self._checkpoint()

    def stage_left(self):
        """Seconds the stage sizes its remaining work by (its slice, scaled under --quick)."""
        return min(self.clock.stage_left(), max(0.0, self.sizing_end - time.monotonic()))

    def open_stage(self, slice_s):
        self.clock.open_stage(slice_s)
        self.slice_s = slice_s * self.sizing_scale
        self.sizing_end = time.monotonic() + self.slice_s

    def model(self, name, dtype, entry):
        """The exported model's path: at hand, exported in the background since the start
        (waited for within the slice), or exported now; None with the failure in entry."""
        found = find_model(self.models_dir, name, dtype)
        if found:
            return found
        path = os.path.join(self.models_dir, model_file(name, dtype))
        background = self.exports.get((name, dtype))
        if background is not None:
            r = background.wait(self.clock)
        else:
            os.makedirs(self.models_dir, exist_ok=True)
            r = self.run([self.replay, "export", "--model", name, "--dtype", dtype, "--out", path], 480)
        if ok(r) and os.path.exists(path):
            entry.setdefault("exports", []).append(record(r))
            return path
        entry.setdefault("exports", []).append(record(r) | {"error": f"exporting {name} ({dtype}) failed"})
        return None


def cuda_status(log, clock, replay):
    """(available, reason, devices JSON) from `replay devices --json`."""
    import json
    r = run(log, clock, [replay, "devices", "--json"], 60)
    devices = None
    if ok(r):
        try:
            devices = json.loads(r["stdout"])
        except ValueError:
            devices = None
    # `replay devices --json` serialises the CUDA side as {"Ok": inventory} or {"Err": why}.
    cuda = (devices or {}).get("cuda") if isinstance(devices, dict) else None
    inventory = cuda.get("Ok") if isinstance(cuda, dict) else None
    if isinstance(inventory, dict) and inventory.get("devices"):
        return True, None, devices
    reason = cuda.get("Err") if isinstance(cuda, dict) else None
    if reason is None and not ok(r):
        reason = "replay devices failed: " + r["stderr_tail"].strip()[-300:]
    return False, reason or "replay devices lists no CUDA device", devices


def machine(devices):
    """The machine, named from `replay devices --json` (never by initialising CUDA in this
    process: it would hold the GPU, and its memory, for the whole run)."""
    info = {"hostname": platform.node(), "cpu_cores": os.cpu_count(), "python": sys.version.split()[0]}
    try:
        import torch  # the wrapper checked that this is the torch of the bundle
        info["torch"] = torch.__version__
    except Exception as e:  # noqa: BLE001 - the summary says what went wrong, the run goes on
        info["torch"] = f"not importable: {e}"
    cuda = (devices or {}).get("cuda") if isinstance(devices, dict) else None
    gpus = ((cuda or {}).get("Ok") or {}).get("devices") or [] if isinstance(cuda, dict) else []
    if gpus:
        gpu = gpus[0]
        info["gpu"] = gpu.get("name")
        info["gpu_memory_gib"] = round((gpu.get("total_memory_bytes") or 0) / 2**30, 1)
        info["gpu_sms"] = gpu.get("multiprocessors")
        info["gpu_count"] = len(gpus)
    gpu = info.get("gpu") or ""
    info["kind"] = (next((k for k in ("H200", "H100", "A100", "L40S") if k in gpu), None) or gpu
                    if gpu else "cpu")
    manifest = load_json(os.path.join(bundle_dir(), "manifest.json"))
    if manifest:
        info["bundle"] = {k: manifest.get(k) for k in ("commit", "built_at", "torch_version", "total_bytes")}
    return info


def archive(work, out, stage):
    """OUT/<stage>.tar.gz of the stage's files (replacing an earlier one)."""
    path = os.path.join(out, f"{stage}.tar.gz")
    tmp = path + ".tmp"
    with tarfile.open(tmp, "w:gz") as tar:
        tar.add(work, arcname=stage)
    os.replace(tmp, path)
    return os.path.basename(path)


def count_failed(value):
    """Commands in a stage's entry that did not exit 0, and checks that failed."""
    n = 0
    if isinstance(value, dict):
        if "rc" in value and "cmd" in value and value["rc"] != 0:
            n += 1
        if "error" in value and isinstance(value["error"], str):
            n += 1
        for k, v in value.items():
            if k != "stdout":
                n += count_failed(v)
    elif isinstance(value, list):
        n += sum(count_failed(v) for v in value)
    return n


def parse_slices(values, parser):
    slices = {}
    for value in values or []:
        stage, _, seconds = value.partition("=")
        if stage not in STAGES:
            parser.error(f"--slice {value}: unknown stage {stage!r}; stages: {', '.join(STAGES)}")
        try:
            slices[stage] = float(seconds)
        except ValueError:
            parser.error(f"--slice {value}: {seconds!r} is not a number of seconds")
        if not slices[stage] > 0:
            parser.error(f"--slice {value}: the slice must be more than 0 seconds")
    return slices


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog=__doc__.split("\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="every stage in order (the default)")
    which.add_argument("--stage", metavar="NAME[,NAME...]",
                       help="these stages only (in the order above), sharing the deadline as --all does")
    ap.add_argument("--deadline", type=float, default=DEFAULT_DEADLINE_S, metavar="SECONDS",
                    help=f"the command ends before this many seconds, whatever happens (default {DEFAULT_DEADLINE_S})")
    ap.add_argument("--slice", action="append", metavar="STAGE=SECONDS",
                    help="give a stage this many seconds instead of its share (repeatable)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                    help="device of every stage but cpu (default cuda)")
    ap.add_argument("--quick", action="store_true", help="every stage in seconds (bloom-tiny, small budgets)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results/gpu_check"),
                    help="output folder: summary.json, gpu_check.log, one archive per stage")
    ap.add_argument("--cpu-threads", type=int, default=None,
                    help="libtorch threads of the cpu stage (default: half the cores, at most 8, at "
                         "least 1; 2 with --quick)")
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "target/gpu-check-models"),
                    help="exported models are kept here (never in --out, whose files travel back)")
    args = ap.parse_args(argv)
    if args.cpu_threads is None:
        args.cpu_threads = 2 if args.quick else max(1, min(8, (os.cpu_count() or 2) // 2))
    if args.cpu_threads < 1:
        ap.error("--cpu-threads must be at least 1")
    if not args.deadline > RESERVE_S + MIN_STAGE_S:
        ap.error(f"--deadline {args.deadline:g}: at least {RESERVE_S + MIN_STAGE_S:g} s are needed")
    args.slices = parse_slices(args.slice, ap)
    if args.stage in (None, "all"):
        args.stages = STAGES
    else:
        wanted = args.stage.split(",")
        unknown = [w for w in wanted if w not in STAGES]
        if unknown:
            ap.error(f"--stage {args.stage}: unknown stage(s) {', '.join(unknown)}; stages: {', '.join(STAGES)}")
        args.stages = tuple(st for st in STAGES if st in wanted)
    return args


class Summary:
    """summary.json, rewritten atomically after every command and stage (one writer at a time:
    the watchdog thread may write it too)."""

    def __init__(self, path):
        self.path = path
        self.value = load_json(path) or {}
        self.value.setdefault("stages", {})
        self.lock = threading.Lock()

    def write(self):
        with self.lock:
            write_json_atomic(self.path, self.value)


def start_exports(args, replay, log, cuda_ok):
    """The models the compare stage needs that are not at hand, exported in the background
    while selftest runs (bloom-560m is 2.2 GB in float32: carrying it would break the 64 MiB
    the working tree may weigh). bfloat16 only on a GPU, where its case fits."""
    exports = {}
    if args.quick or "compare" not in args.stages or (args.device == "cuda" and not cuda_ok):
        return exports
    wanted = [("bloom-560m", "float32")] + ([("bloom-560m", "bfloat16")] if args.device == "cuda" else [])
    for name, dtype in wanted:
        if find_model(args.models_dir, name, dtype) is None:
            os.makedirs(args.models_dir, exist_ok=True)
            path = os.path.join(args.models_dir, model_file(name, dtype))
            exports[(name, dtype)] = Background(log, [replay, "export", "--model", name, "--dtype", dtype,
                                                      "--out", path])
    return exports


def main(argv=None):
    args = parse_args(argv)
    try:
        already = time.time() - float(os.environ.get("REPLAY_GPU_CHECK_T0", ""))
    except ValueError:
        already = 0.0
    clock = Clock(args.deadline, RESERVE_S, already if 0 <= already < 300 else 0.0)
    replay = replay_bin()
    if not os.access(replay, os.X_OK):
        print(f"gpu_check: {replay} is not an executable (make gpu-bundle)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    log = Log(os.path.join(args.out, "gpu_check.log"))
    summary = Summary(os.path.join(args.out, "summary.json"))
    s = summary.value
    s["deadline_s"] = args.deadline
    s["started"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    s["replay"] = run(log, clock, [replay, "--version"], 30)["stdout"].strip()
    cuda_ok, cuda_reason, devices = cuda_status(log, clock, replay)
    s["cuda_available"] = cuda_ok
    s.pop("cuda_unavailable_reason", None)
    if not cuda_ok:
        s["cuda_unavailable_reason"] = cuda_reason
    if devices is not None:
        s["devices"] = devices
    s["machine"] = machine(devices)
    s["results_name"] = f"{time.strftime('%Y-%m-%d')}-{str(s['machine']['kind']).lower().replace(' ', '-')}-summary.json"
    s["slices_s"] = {}
    summary.write()

    current = {"stage": None}

    def watchdog():
        """The backstop: the stages overran the run's end (a hang outside any command); kill
        what runs, record the stage, write the summary and leave before the deadline."""
        CHILDREN.kill_all()
        stage = current["stage"]
        if stage is not None:
            entry = s["stages"].setdefault(stage, {})
            entry["status"] = "cut"
            entry["cut"] = "watchdog: the run's deadline came while this stage ran; the check was ended"
        s["wall_s"] = round(clock.elapsed(), 1)
        s["ended_by_watchdog"] = True
        summary.write()
        log.line(f"watchdog: the deadline came during stage {stage}; summary written, exiting")
        os._exit(1)

    timer = threading.Timer(max(0.0, clock.end - time.monotonic() + RESERVE_S / 2), watchdog)
    timer.daemon = True
    timer.start()

    exports = start_exports(args, replay, log, cuda_ok)
    ctx = Context(args, log, clock, replay, s["machine"].get("gpu"), summary.write, exports)
    explicit = args.stage not in (None, "all")

    def skip_reason(st):
        if st in CUDA_STAGES and args.device == "cuda" and not cuda_ok:
            return f"needs CUDA: {cuda_reason}"
        if st in GPU_ONLY_IN_ALL and args.device == "cpu" and not explicit:
            return "--all runs it on a GPU only (a minute of compiling on a 2-core CPU); --stage compiled runs it here"
        return None

    runnable = [st for st in args.stages if skip_reason(st) is None]
    failures = 0
    for stage in args.stages:
        entry = {"device": args.device if stage in CUDA_STAGES else "cpu", "quick": args.quick,
                 "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        s["stages"][stage] = entry
        if stage not in runnable:
            entry["status"] = "skipped"
            entry["skipped"] = skip_reason(stage)
            entry["wall_s"] = 0.0
            log.line(f"stage {stage}: skipped ({entry['skipped']})")
            summary.write()
            continue
        later = runnable[runnable.index(stage):]
        weights = QUICK_WEIGHTS if args.quick else (CPU_WEIGHTS if args.device == "cpu" else WEIGHTS)
        share = clock.left() * weights[stage] / sum(weights[x] for x in later)
        slice_s = min(args.slices.get(stage, share), clock.left())
        s["slices_s"][stage] = round(slice_s, 1)
        started = time.monotonic()
        if slice_s < MIN_STAGE_S:
            entry.update({"status": "cut", "cut": f"not started: {slice_s:.1f} s left of the deadline",
                          "wall_s": 0.0})
            log.line(f"stage {stage}: not started ({entry['cut']})")
            summary.write()
            continue
        ctx.open_stage(slice_s)
        current["stage"] = stage
        log.line(f"stage {stage} on {entry['device']}{' (quick)' if args.quick else ''}: "
                 f"slice {slice_s:.0f} s of {clock.left():.0f} s left")
        ctx.work = tempfile.mkdtemp(prefix=f"gpu-check-{stage}-")
        try:
            if test_hook_hang(stage):
                ctx.run(["sleep", "3600"], 3600)
            if stage in os.environ.get("REPLAY_GPU_CHECK_HANG_PYTHON", "").split(","):
                time.sleep(3600)
            STAGE_FUNCTIONS[stage](ctx, entry)
            entry["status"] = "ok"
        except StageCut as e:
            entry["status"] = "cut"
            entry["cut"] = str(e)
            log.line(f"stage {stage}: cut: {e}")
        except Exception as e:  # noqa: BLE001 - one broken stage must not end the others
            entry["error"] = f"{type(e).__name__}: {e}"
            log.line(f"stage {stage}: {entry['error']}")
        if stage not in SUMMARY_ONLY_STAGES:
            entry["archive"] = archive(ctx.work, args.out, stage)
        shutil.rmtree(ctx.work, ignore_errors=True)
        current["stage"] = None
        entry["wall_s"] = round(time.monotonic() - started, 1)
        failed_commands = count_failed({k: v for k, v in entry.items() if k != "cut"})
        entry["failed_commands"] = failed_commands
        if entry.get("status") != "cut" and failed_commands:
            entry["status"] = "failed"
            failures += 1
        s["wall_s"] = round(clock.elapsed(), 1)
        summary.write()
        log.line(f"stage {stage}: {entry['status']} in {entry['wall_s']} s, {failed_commands} failed command(s)")

    for background in exports.values():
        background.kill()
    timer.cancel()
    s["wall_s"] = round(clock.elapsed(), 1)
    s["statuses"] = {name: e.get("status") for name, e in s["stages"].items() if name in args.stages}
    summary.write()
    files = sorted(os.listdir(args.out))
    if len(files) > MAX_OUT_FILES:
        log.line(f"warning: {len(files)} files in {args.out}; only {MAX_OUT_FILES} come back from the GPU machine")
    log.line(f"done in {s['wall_s']} s of {args.deadline:g}: "
             + ", ".join(f"{k} {v}" for k, v in s["statuses"].items()))
    log.line(f"summary: {summary.path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
