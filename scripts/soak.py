#!/usr/bin/env python3
"""The soak (issue 34): one long `replay isolated` run with its memory sampled throughout.

  .venv/bin/python scripts/soak.py [--duration 3600] [--trace T | --kernels F] [--out results/soak.json]

One `replay isolated --noise 0` process replays a real signature file (by default the A100
cudagraph training trace's 419 signatures, classified here) for about --duration seconds: each
replayable signature gets an equal share of the time, in five rounds, so every op is replayed
again and again over the whole run. The resident memory of the process tree (`replay` and the
`replay-torch` it runs) is read from /proc every --interval seconds, and with it each process's
peak since the sample before (VmHWM, reset through /proc/PID/clear_refs at every sample), so a
round's highest RSS is its true peak, not the highest sample. The report
(results/soak.json, rewritten as the run goes) cuts the run into its five rounds' spans of
time: every round replays the same ops, so each should allocate alike. It gives the lowest and
highest RSS of the second round (after the first's warm-up) against the last's (goal: within
5 %), the least-squares slope after warm-up in MB per hour, and whether the results are all
valid (isolated.json is complete and has a row per signature with a known status).
"""
import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
DEFAULT_TRACE = REPO.parent / "shared" / "traces" / "kineto" / "a100_train_cudagraph_rank0.json.gz"
STATUSES = {"ok", "included", "unsupported", "failed", "oom", "estimated", "skipped"}
GOAL = 0.05
# The run's rounds (`isolated --rounds`): every replayable signature is replayed in each, so
# each round allocates what the others do; the first is the warm-up.
ROUNDS = 5


def replay_bin():
    return pathlib.Path(os.environ.get("REPLAY_BIN", TARGET / "release" / "replay"))


def tree(pid):
    """`pid` and all its descendants (from /proc/PID/task/*/children)."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in pathlib.Path(f"/proc/{p}/task").glob("*/children"):
            try:
                todo.extend(int(c) for c in task.read_text().split())
            except OSError:
                pass
    return found


def rss_bytes(pid):
    """The process tree's resident memory now, and the sum of each process's peak since the
    last call (VmHWM, which writing 5 to /proc/PID/clear_refs resets): a peak between two
    samples is caught, not only one that a sample happens to land on. Where the reset is
    refused, the peak is the sample's own RSS."""
    total = peak = 0
    for p in tree(pid):
        rss = hwm = 0
        try:
            for line in pathlib.Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
        except OSError:
            continue
        try:
            pathlib.Path(f"/proc/{p}/clear_refs").write_text("5")
        except OSError:
            hwm = rss
        total += rss
        peak += max(hwm, rss)
    return total, peak


def windows(samples, count):
    """The run cut into `count` equal spans of time: each span's lowest and highest RSS."""
    if not samples:
        return []
    length = samples[-1][0] or 1.0
    spans = [[] for _ in range(count)]
    for t, rss, peak in samples:
        spans[min(int(t / length * count), count - 1)].append((rss, peak))
    return [{"from": i / count, "to": (i + 1) / count, "samples": len(span),
             "floor_bytes": min((r for r, _ in span), default=None),
             "peak_bytes": max((p for _, p in span), default=None)}
            for i, span in enumerate(spans)]


def validate(output_dir, signatures):
    path = output_dir / "isolated.json"
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        return {"valid": False, "why": f"{path}: {error}"}
    rows = document.get("results") or document.get("signatures") or []
    statuses = {}
    for row in rows:
        status = str(row.get("status", "")).split(":")[0]
        statuses[status] = statuses.get(status, 0) + 1
    unknown = sorted(set(statuses) - STATUSES)
    complete = document.get("complete") is True
    valid = complete and len(rows) == signatures and not unknown
    why = None if valid else (f"{len(rows)} rows for {signatures} signatures; complete: {complete}; "
                              f"unknown statuses {unknown}")
    return {"valid": valid, "complete": complete, "rows": len(rows), "statuses": statuses, "why": why}


def report(args, command, samples, started, extra):
    spans = windows(samples, ROUNDS)
    warm, end = (spans[1], spans[-1]) if len(spans) == ROUNDS else ({}, {})

    def ratio(key):
        return end[key] / warm[key] if warm.get(key) and end.get(key) else None

    ratios = {key: ratio(key) for key in ("floor_bytes", "peak_bytes")}
    return {
        "benchmark": "soak",
        "date": started,
        "machine": {"cores": os.cpu_count(), "load_average": list(os.getloadavg())},
        "command": command,
        "interval_s": args.interval,
        "elapsed_s": samples[-1][0] if samples else 0.0,
        "rss_after_warmup": warm,
        "rss_at_end": end,
        "end_over_warmup": {"floor": ratios["floor_bytes"], "peak": ratios["peak_bytes"]},
        "peak_rss_bytes": max((p for _, _, p in samples), default=None),
        "goal": f"RSS at the end within {GOAL:.0%} of RSS after warm-up (the last round's lowest "
                f"and highest RSS against the second round's; the highest from each process's "
                f"VmHWM, reset at every sample)",
        "goal_met": None if None in ratios.values() else all(abs(r - 1) <= GOAL for r in ratios.values()),
        "rss_by_round": spans,
        **extra,
        "samples": [[round(t, 3), r, p] for t, r, p in samples],
    }


def write(path, document):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(document, indent=1) + "\n")
    tmp.replace(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=3600.0, help="seconds the isolated run should last")
    parser.add_argument("--trace", type=pathlib.Path, default=DEFAULT_TRACE, help="trace to classify")
    parser.add_argument("--kernels", type=pathlib.Path, help="a signature file instead of --trace")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between RSS samples")
    parser.add_argument("--threads", type=int, default=1, help="libtorch threads of the replay")
    parser.add_argument("--out", type=pathlib.Path, default=REPO / "results" / "soak.json")
    args = parser.parse_args(argv)

    replay = replay_bin()
    if not replay.exists():
        print(f"error: {replay} is not built: make build", file=sys.stderr)
        return 2
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="replay-soak-") as tmp:
        tmp = pathlib.Path(tmp)
        kernels = args.kernels
        if kernels is None:
            kernels = tmp / "signatures.json"
            subprocess.run([replay, "classify", "--trace", args.trace, "--out", kernels],
                           check=True, stdout=subprocess.DEVNULL)
        signatures = len(json.loads(kernels.read_text())["signatures"])
        # A short pass tells which signatures replay (the rest take no time), so that the
        # replayable ones share the whole duration.
        probe = tmp / "probe"
        subprocess.run([replay, "isolated", "--kernels", kernels, "--device", "cpu", "-q",
                        "--output-dir", probe, "--max-time", "0.01", "--rounds", "1",
                        "--min-samples", "1", "--threads", str(args.threads)],
                       check=True, stdout=subprocess.DEVNULL)
        replayable = validate(probe, signatures)["statuses"].get("ok", 0) or 1
        per_item = args.duration / replayable
        output_dir = tmp / "isolated"
        command = [str(replay), "isolated", "--kernels", str(kernels), "--device", "cpu", "-q",
                   "--output-dir", str(output_dir), "--noise", "0", "--max-time", f"{per_item:.4f}",
                   "--rounds", str(ROUNDS), "--threads", str(args.threads)]
        extra = {"signatures": signatures, "replayable": replayable, "max_time_per_item_s": per_item}
        print(f"soak: {signatures} signatures ({replayable} replayable), {per_item:.2f} s each, "
              f"about {args.duration:.0f} s; samples every {args.interval} s -> {args.out}", flush=True)
        samples = []
        start = time.monotonic()
        last_write = start
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while process.poll() is None:
            rss, peak = rss_bytes(process.pid)
            if rss:
                samples.append((time.monotonic() - start, rss, peak))
            if time.monotonic() - last_write >= 30:
                write(args.out, report(args, command, samples, started, {**extra, "running": True}))
                last_write = time.monotonic()
            time.sleep(args.interval)
        stderr = process.stderr.read()
        extra["exit_code"] = process.returncode
        extra["results"] = validate(output_dir, signatures)
        if process.returncode != 0:
            extra["stderr_tail"] = stderr[-2000:]
        document = report(args, command, samples, started, extra)
        write(args.out, document)
    warm, end = document["rss_after_warmup"], document["rss_at_end"]

    def mb(span, key):
        return f"{(span.get(key) or 0) / 1e6:.1f}"

    print(f"soak: {document['elapsed_s']:.0f} s; RSS lowest/highest in round 2 {mb(warm, 'floor_bytes')}/"
          f"{mb(warm, 'peak_bytes')} MB, in round {ROUNDS} {mb(end, 'floor_bytes')}/{mb(end, 'peak_bytes')} MB "
          f"(goal within {GOAL:.0%}: {document['goal_met']}); results valid: {extra['results']['valid']}")
    return 0 if process.returncode == 0 and extra["results"]["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
