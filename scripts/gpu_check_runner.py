"""The GPU check's clock and command runner: every command in its own process group, killed
with its whole tree when its stage's slice or the run's deadline comes, and recorded.

Used by scripts/gpu_check.py and scripts/gpu_check_stages.py; nothing here knows a stage.
"""
import json
import os
import signal
import subprocess
import tempfile
import threading
import time


class StageCut(Exception):
    """The stage's slice ran out: what it finished stays in its entry, the next stage starts."""


class Log:
    """Everything the stages ran, with their output, in OUT/gpu_check.log."""

    def __init__(self, path):
        self.file = open(path, "a")
        self.lock = threading.Lock()

    def line(self, text):
        stamp = time.strftime("%H:%M:%S")
        with self.lock:
            print(f"[{stamp}] {text}", flush=True)
            self.file.write(f"[{stamp}] {text}\n")
            self.file.flush()

    def block(self, text):
        with self.lock:
            self.file.write(text if text.endswith("\n") else text + "\n")
            self.file.flush()


class Clock:
    """The run's deadline and the current stage's slice, on the monotonic clock."""

    def __init__(self, deadline_s, reserve_s, already_s=0.0):
        # already_s: seconds the command spent before this process started (the wrapper's
        # checks), which count towards the deadline.
        self.started = time.monotonic() - max(0.0, already_s)
        self.deadline_s = deadline_s
        # The stages end `reserve_s` before the deadline: the last archive, the summary and the
        # process's exit fit in it.
        self.end = self.started + max(0.0, deadline_s - reserve_s)
        self.stage_end = self.end

    def elapsed(self):
        return time.monotonic() - self.started

    def left(self):
        """Seconds left to the stages as a whole."""
        return max(0.0, self.end - time.monotonic())

    def stage_left(self):
        return max(0.0, min(self.stage_end, self.end) - time.monotonic())

    def open_stage(self, slice_s):
        self.stage_end = min(self.end, time.monotonic() + slice_s)


class Children:
    """The process groups of the commands running now, so that a watchdog can kill them all."""

    def __init__(self):
        self.groups = set()
        self.lock = threading.Lock()

    def add(self, pgid):
        with self.lock:
            self.groups.add(pgid)

    def discard(self, pgid):
        with self.lock:
            self.groups.discard(pgid)

    def kill_all(self):
        with self.lock:
            groups = list(self.groups)
        for pgid in groups:
            kill_group(pgid)


CHILDREN = Children()


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _text(value):
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


# Below this many seconds left in its slice a command is not started: it could not finish.
MIN_COMMAND_S = 2.0


def run(log, clock, cmd, timeout, cwd=None, checkpoint=None, background=False):
    """Runs cmd in its own process group with at most `timeout` seconds and never past the
    stage's slice; returns {cmd, rc, seconds, stdout, stderr_tail}. A command the slice stops
    is killed with every process it started and raises StageCut after it is recorded through
    `checkpoint(result)`; a command that outlives its own timeout has rc 'timeout'."""
    cmd = [str(c) for c in cmd]
    left = clock.stage_left()
    if left < MIN_COMMAND_S:
        raise StageCut(f"{left:.1f} s left in the stage's slice: `{' '.join(cmd)}` not started")
    limit = min(timeout, left)
    by_slice = limit < timeout
    log.line("$ " + " ".join(cmd) + f"   (limit {limit:.0f} s{', the slice' if by_slice else ''})")
    start = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=cwd, start_new_session=True)
    except OSError as e:
        result = {"cmd": " ".join(cmd), "rc": "not started", "seconds": 0.0, "stdout": "",
                  "stderr_tail": str(e)}
        if checkpoint:
            checkpoint(result)
        return result
    CHILDREN.add(p.pid)
    killed = False
    try:
        out, err = p.communicate(timeout=limit)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        kill_group(p.pid)
        killed = True
        out, err = p.communicate()
        rc = "cut" if by_slice else "timeout"
        err = _text(err) + (f"\n(watchdog: killed with its process group after {limit:.0f} s, "
                            f"{'the end of the stage slice' if by_slice else 'its own timeout'})")
    finally:
        CHILDREN.discard(p.pid)
        if not killed:
            # Anything it left running in its group goes with it.
            kill_group(p.pid)
    seconds = round(time.monotonic() - start, 2)
    out, err = _text(out), _text(err)
    log.block(out)
    if err.strip():
        log.block("--- stderr\n" + err)
    log.line(f"  -> exit {rc} in {seconds} s")
    result = {"cmd": " ".join(cmd), "rc": rc, "seconds": seconds, "stdout": out,
              "stderr_tail": err[-2000:]}
    if checkpoint:
        checkpoint(result)
    if rc == "cut":
        raise StageCut(f"the slice ended while `{' '.join(cmd[:4])} …` ran ({seconds} s): killed")
    return result


class Background:
    """A command started now and waited for later (the model exports that run while the
    selftest does), in its own process group; `wait` never outlasts the stage's slice."""

    def __init__(self, log, cmd):
        self.log, self.cmd = log, [str(c) for c in cmd]
        self.started = time.monotonic()
        log.line("$ (background) " + " ".join(self.cmd))
        # Its output goes to a file, never a pipe nobody reads while the stage runs.
        self.output = tempfile.TemporaryFile(mode="w+")
        # Niced: it must not slow the stage being timed meanwhile.
        self.proc = subprocess.Popen(["nice", "-n", "10", *self.cmd], stdout=self.output,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        CHILDREN.add(self.proc.pid)
        self.result = None

    def wait(self, clock):
        if self.result is not None:
            return self.result
        left = clock.stage_left()
        try:
            self.proc.wait(timeout=max(0.1, left))
        except subprocess.TimeoutExpired:
            raise StageCut(f"the slice ended waiting for `{' '.join(self.cmd[:4])} …` "
                           f"(running for {time.monotonic() - self.started:.0f} s)")
        CHILDREN.discard(self.proc.pid)
        seconds = round(time.monotonic() - self.started, 2)
        self.output.seek(0)
        out = self.output.read()
        self.output.close()
        self.log.block(out)
        self.log.line(f"  -> (background) exit {self.proc.returncode} in {seconds} s: {' '.join(self.cmd[:4])}")
        self.result = {"cmd": " ".join(self.cmd), "rc": self.proc.returncode, "seconds": seconds,
                       "stdout": out, "stderr_tail": out[-2000:]}
        return self.result

    def kill(self):
        kill_group(self.proc.pid)
        CHILDREN.discard(self.proc.pid)


def ok(result):
    return result["rc"] == 0


def record(result):
    """A command's result as the summary keeps it (no full output)."""
    r = {k: v for k, v in result.items() if k != "stdout"}
    if ok(result):
        r.pop("stderr_tail", None)
    return r


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def finite(value):
    """value with every NaN or infinity made null: summary.json stays strict JSON."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def write_json_atomic(path, value):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(finite(value), f, indent=2, allow_nan=False, default=str)
        f.write("\n")
    os.replace(tmp, path)


def per_kernel_budget(seconds, signatures, floor=0.005, ceiling=0.5):
    """--max-time-per-kernel that fits `signatures` replays into `seconds` (warm-ups, rounds
    and the process's start take the rest: a third is kept for them)."""
    return round(max(floor, min(ceiling, seconds * 0.66 / max(1, signatures))), 4)


# Where the check finds its files, and the report fields every stage reads.

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def signed_error(part):
    """replay's signed prediction error of a report part, under its name before or after issue 29."""
    value = part.get("prediction_error_percent")
    return part.get("error_percent") if value is None else value


def bundle_dir():
    return os.environ.get("REPLAY_GPU_BUNDLE") or os.path.join(ROOT, "target/gpu-bundle")


def model_file(name, dtype):
    return f"{name}{'' if dtype == 'float32' else '-' + dtype}.pt"


def find_model(models_dir, name, dtype="float32"):
    """An exported model already at hand: carried in the bundle, kept in --models-dir, or the
    one `make run` exports into models/."""
    for folder in (os.path.join(bundle_dir(), "models"), models_dir, os.path.join(ROOT, "models")):
        path = os.path.join(folder, model_file(name, dtype))
        if os.path.exists(path):
            return path
    return None
