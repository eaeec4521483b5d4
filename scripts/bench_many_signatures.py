#!/usr/bin/env python3
"""`make bench-many-signatures`: `replay isolated` on signature files of very many signatures
(issue 34: ten million signatures in one file, streamed, memory bounded).

  .venv/bin/python scripts/bench_many_signatures.py [--sizes 1e5,1e6,1e7] [--quick]
      [--kind copy|skipped] [--timeout S] [--out FILE] [--work-dir DIR]
  .venv/bin/python scripts/bench_many_signatures.py --generate N --kind K --out FILE

Inputs are generated, never committed: N copies of a real signature (the tier-1 memcpy of
signatures/h100_bert_small_infer.json, each its own replay unit) with distinct ids and names,
written streaming under target/bench/many_signatures/ and deleted after their run. --kind copy
leaves them replayable (each unit is a host memcpy measured for --max-time 0.0001 s, one
round, one sample); --kind skipped marks them not replayable, so that a unit costs nothing
and what is measured is replay's own handling of the file (reading, grouping, results).

Each run is `replay isolated --device cpu --kernels FILE` under scripts/measured_run.py: wall
time, CPU time, peak RSS (os.wait4's ru_maxrss) and a watchdog that kills it past --rss-cap
(default 50 % of the memory available at the start) or --timeout. The results (rows checked:
one per signature) go to results/bench_many_signatures.json (--out) as each run ends, with the
date and the machine's load: on a shared machine the timings are rough. --quick runs 200 (read
whole) and 10^4 (streamed, in windows) skipped signatures: the self-test's seconds.
"""
import argparse
import datetime
import json
import os
import pathlib
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measured_run  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "signatures" / "h100_bert_small_infer.json"


def template():
    """The source file without its signatures, and its tier-1 memcpy signature."""
    with open(SOURCE) as f:
        data = json.load(f)
    sig = next(s for s in data["signatures"] if s.get("kind") == "memcpy")
    data["signatures"] = []
    return data, sig


def generate(n, kind, path):
    """Writes a signature file of `n` copies of the template signature, streaming."""
    head, sig = template()
    if kind == "skipped":
        sig = dict(sig, replayable=False, reason="bench_many_signatures: not replayed")
    name = sig["name"]
    body = json.dumps(head, indent=1)
    before, after = body.split('"signatures": []')
    with open(path, "w") as f:
        f.write(before + '"signatures": [\n')
        for i in range(n):
            sig["id"] = f"{i:016x}"
            sig["name"] = f"{name} [{i}]"
            f.write(("" if i == 0 else ",\n") + json.dumps(sig))
        f.write("\n]" + after)


def load():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def run_one(replay, n, kind, work, cap, timeout):
    path = work / f"signatures_{n}.json"
    generate(n, kind, path)
    size = path.stat().st_size
    out = work / f"out_{n}"
    cmd = [replay, "isolated", "--device", "cpu", "--kernels", path, "--output-dir", out,
           "--max-time", "0.0001", "--rounds", "1", "--min-samples", "1", "--quiet"]
    result = measured_run.run(cmd, cap=cap, timeout=timeout)
    rows = None
    complete = None
    if result["rc"] == 0:
        with open(out / "isolated.json") as f:
            done = json.load(f)
        rows = len(done["results"])
        complete = done["complete"]
        ids = {r["id"] for r in done["results"]}
        assert len(ids) == n == rows, (n, rows, len(ids))
    path.unlink()
    shutil.rmtree(out, ignore_errors=True)
    return {
        "signatures": n,
        "kind": kind,
        "file_bytes": size,
        "rc": result["rc"],
        "wall_s": round(result["wall_s"], 3),
        "user_s": round(result["user_s"], 3),
        "sys_s": round(result["sys_s"], 3),
        "peak_rss_bytes": result["peak_rss_bytes"],
        "peak_rss_per_signature_bytes": round(result["peak_rss_bytes"] / n, 1),
        "killed_by_cap": result["killed_by_cap"],
        "timed_out": result["timed_out"],
        "rows": rows,
        "complete": complete,
        "stderr_tail": result["stderr_tail"][-500:] if result["rc"] else "",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1e5,1e6,1e7")
    parser.add_argument("--kind", choices=["copy", "skipped"], default="skipped")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--rss-cap", type=float, default=None, help="bytes")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench_many_signatures.json"))
    parser.add_argument("--work-dir", default=str(ROOT / "target" / "bench" / "many_signatures"))
    parser.add_argument("--replay", default=str(ROOT / "target" / "release" / "replay"))
    parser.add_argument("--generate", type=int, help="only write a file of N signatures to --out")
    args = parser.parse_args()
    if args.generate is not None:
        generate(args.generate, args.kind, args.out)
        return 0
    sizes = [200, 10000] if args.quick else [int(float(s)) for s in args.sizes.split(",")]
    cap = args.rss_cap or 0.5 * available_bytes()
    work = pathlib.Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    report = {
        "what": "replay isolated --device cpu on generated signature files of N signatures",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "load_before": load(),
                    "mem_available_bytes": available_bytes()},
        "rss_cap_bytes": int(cap),
        "runs": [],
    }
    for n in sizes:
        report["runs"].append(run_one(args.replay, n, args.kind, work, cap, args.timeout))
        report["machine"]["load_after"] = load()
        pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)
        r = report["runs"][-1]
        print(f"{n} signatures ({r['file_bytes'] / 1e6:.0f} MB): rc {r['rc']}, "
              f"{r['wall_s']} s, peak RSS {r['peak_rss_bytes'] / 2**20:.0f} MiB")
    return 0 if all(r["rc"] == 0 for r in report["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
