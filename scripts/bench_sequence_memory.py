#!/usr/bin/env python3
"""`replay sequence`'s memory on the shared traces (issue 51, part B).

For each trace of ../shared/traces (or those named with --traces): `replay sequence --device cpu
--max-time 5 --memory-budget 8G`, reading from its sequence.json the plan (the sum of every
op's inputs, i.e. the footprint without a plan, and the planned peak) and the measured peaks, and
the process's peak resident set (GNU time); where the trace recorded the model's allocator
(`[memory]` events), its own peak (`Total Allocated`); for the Execution Trace pairs of our own
(bloom-tiny's, recorded with `capture --execution-trace`: the shared pairs' Kineto traces carry no
record-function ids and link by op order and shapes, linear's, or are refused, resnet's), the zoo model run again for one step with its
allocator's statistics (`scripts/model_memory_peak.py`). With --before BIN (a `replay` built without
the plan), the same command without --memory-budget gives the step time and resident peak before
the plan, for the step-time comparison. A refused command (exit 2) keeps its reason (the planned
peak it names); a run past --timeout seconds is said so. Writes results/bench_sequence_memory.json
and, over every trace, docs/benchmarks/sequence-memory.md.
"""

import argparse
import datetime
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "traces"
# Execution Trace pairs captured by this project (linked by record-function id), with the zoo
# model and step they recorded: run alone and with the ET, and the model's own peak measured.
OWN_ET = ROOT / "crates" / "core" / "tests" / "data" / "et"
OWN_PAIRS = [(OWN_ET / "bloom_tiny_cpu.json.gz", OWN_ET / "bloom_tiny_cpu.et.json.gz",
              {"zoo": "bloom-tiny", "seq_len": 5, "batch": 1})]


def run(binary, trace, et, out, budget, max_time, timeout):
    cmd = [str(binary), "sequence", "--trace", str(trace), "--device", "cpu",
           "--max-time", str(max_time), "-q", "--output-dir", str(out)]
    if et:
        cmd += ["--execution-trace", str(et)]
    if budget:
        cmd += ["--memory-budget", budget]
    started = time.time()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb=%M", *cmd], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "wall_s": timeout}
    rss = None
    for line in p.stderr.splitlines():
        if line.startswith("maxrss_kb="):
            rss = int(line.split("=", 1)[1]) * 1024
    result = {"exit": p.returncode, "wall_s": round(time.time() - started, 1),
              "max_rss_bytes": rss}
    if p.returncode != 0:
        # The command's own error line (not GNU time's).
        lines = [l for l in p.stderr.splitlines()
                 if l and not l.startswith(("maxrss_kb=", "Command exited", "Command terminated"))]
        killed = p.returncode < 0 or p.returncode in (137, 139)
        result["status"] = "refused" if p.returncode == 2 else ("killed" if killed else "failed")
        result["error"] = lines[-1] if lines else ""
        return result
    seq = json.loads((out / "sequence.json").read_text())
    result["status"] = "ok"
    result["ops"] = len(seq["entries"])
    result["ran"] = sum(1 for e in seq["entries"] if e["status"] == "ok")
    result["oom"] = sum(1 for e in seq["entries"] if e["status"] == "oom")
    result["runs_median_us"] = (seq.get("runs") or {}).get("median_us")
    rt = seq.get("real_time")
    result["real_time_median_us"] = rt["step_us"]["median_us"] if rt else None
    result["memory"] = seq.get("memory")
    return result


def model_peak(trace):
    """The most the model's allocator held in the recorded run (`[memory]` events' `Total
    Allocated`), or None where the trace recorded no allocator events."""
    try:
        with gzip.open(trace) as f:
            events = json.load(f).get("traceEvents", [])
    except (OSError, ValueError):
        return None
    totals = [e.get("args", {}).get("Total Allocated") for e in events
              if isinstance(e, dict) and e.get("name") == "[memory]"]
    totals = [t for t in totals if isinstance(t, (int, float)) and t > 0]
    return int(max(totals)) if totals else None


def measured_model_peak(model):
    """The zoo model's own peak in one step, from its allocator (scripts/model_memory_peak.py),
    or None with the reason on standard error."""
    cmd = [sys.executable, str(ROOT / "scripts" / "model_memory_peak.py"), "--zoo", model["zoo"],
           "--seq-len", str(model["seq_len"]), "--batch", str(model["batch"])]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"  model peak not measured: {p.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    return json.loads(p.stdout.strip().splitlines()[-1])


def mib(b):
    """MiB, with three decimals below 10 MiB (bloom-tiny's whole plan is 0.7 MiB)."""
    if b is None:
        return ""
    return f"{b / 2**20:.3f}" if b < 10 * 2**20 else f"{b / 2**20:.1f}"


def pct(a, b):
    return "" if not a or not b else f"{(a / b - 1) * 100:+.1f} %"


def table(rows):
    lines = [
        "| trace | ran / ops | sum of op inputs (MiB, today) | planned peak (MiB) | held once built (MiB) "
        "| measured peak (MiB) | measured / plan | model's own peak (MiB) | step before (ms) "
        "| step after (ms) | change | outside the plan (MiB) | planned from | plan / model's own |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        a = r["after"]
        model = mib(r.get("model_peak_bytes"))
        if a.get("status") != "ok":
            why = a.get("error", "")[:200].replace("|", "/")
            lines.append(f"| {r['trace']} | {a.get('status')} | | | | | | {model} | | | {why} | | | |")
            continue
        m = a["memory"] or {}
        b = r.get("before") or {}
        before = b.get("runs_median_us") if b.get("status") == "ok" else None
        after = a.get("runs_median_us")
        measured = m.get("measured_peak_bytes")
        planned = m.get("planned_peak_bytes")
        ratio = "" if not measured or not planned else f"{measured / planned:.2f}"
        if b.get("status") == "ok" and b.get("ran") != a["ran"]:
            # Not the same ops: the op calls grouped as one instance changed what is rebuilt.
            change = f"not comparable: before ran {b.get('ran')}/{b.get('ops')}"
        elif before and after:
            change = pct(after, before)
        else:
            change = f"before: {b.get('status')}" if b else ""
        live = m.get("liveness")
        source = (f"ET liveness (outputs {mib(live['live_peak_bytes'])} MiB at most)" if live
                  else "sizes")
        own = r.get("model_peak_bytes")
        versus = "" if not own or not planned else f"{planned / own:.2f}"
        lines.append(
            f"| {r['trace']} | {a['ran']}/{a['ops']} | {mib(m.get('unshared_bytes'))} | "
            f"{mib(planned)} | {mib(m.get('measured_held_bytes'))} | {mib(measured)} | {ratio} | "
            f"{model} | {'' if before is None else f'{before / 1000:.1f}'} | "
            f"{'' if after is None else f'{after / 1000:.1f}'} | {change} | {mib(m.get('unplanned_bytes'))} | "
            f"{source} | {versus} |")
    return "\n".join(lines)


def et_lines(rows):
    """For each run with an Execution Trace that ran both ways: the plan and the peak before
    (the --before binary, same command without --memory-budget) and after."""
    lines = []
    for r in rows:
        a, b = r["after"], r.get("before") or {}
        if "+" not in r["trace"] or a.get("status") != "ok" or b.get("status") != "ok":
            continue
        m, mb = a.get("memory") or {}, b.get("memory") or {}
        live = m.get("liveness") or {}
        def b(v):  # a figure the binary did not write (one built before the plan): a dash
            return "-" if v is None else f"{v:,}"
        lines.append(
            f"- {r['trace']}: planned peak {b(m.get('planned_peak_bytes'))} B (outputs alive at once "
            f"at most {live.get('live_peak_bytes', 0):,} B, against {live.get('outputs_bytes', 0):,} B "
            f"were every output kept; {live.get('external_tensors', 0)} external tensors once each), "
            f"measured peak {b(m.get('measured_peak_bytes'))} B, held once built "
            f"{b(m.get('measured_held_bytes'))} B; before: planned {b(mb.get('planned_peak_bytes'))} B, "
            f"measured {b(mb.get('measured_peak_bytes'))} B, held once built {b(mb.get('measured_held_bytes'))} B; "
            f"the model's own peak {r.get('model_peak_bytes') or 0:,} B.")
    return "\n".join(lines) if lines else "- (none ran)"


PAGE = """# `replay sequence`'s memory on the shared traces (`make bench-sequence-memory`)

Written by `scripts/bench_sequence_memory.py` on {when} at {after_commit}, on this machine's CPU
({cpu_count} cores): `{command}` for every trace of `../shared/traces/` (an
ET pair's Kineto trace once alone, once with `--execution-trace`), and bloom-tiny's Execution
Trace pair of `crates/core/tests/data/et/` the same way; {before}.

- *sum of op inputs*: every op instance with inputs of its own, the footprint before the plan.
- *planned peak*: the plan's buffers (inputs of one size and dtype shared once their op has run,
  parameters each op's own), printed before anything is allocated.
- *held once built*: what libtorch's CPU allocator holds once every op is built, before the first
  run (replay's counting allocator in front of libtorch's): the plan's buffers, the tensors whose
  values matter, host copies' buffers. *measured peak*: the most it held while the ops were built
  and run, i.e. the held bytes plus the largest op's outputs and workspace while it runs, which
  the plan does not count.
- *planned from*: `sizes` (inputs of one size and dtype shared once their op has run), or with
  `--execution-trace` the Execution Trace's liveness (each op's outputs held from its run to the
  last reader of any of them, which lets them go; a tensor from outside the step one buffer for
  all its readers; flowing inputs' stand-ins shared by size and dtype), with the most bytes of
  outputs alive at once.
- *model's own peak*: the recorded run's allocator (`[memory]` events, `Total Allocated`), on the
  recording GPU, where the trace has them; for an Execution Trace pair of our own, the zoo model it
  recorded run again for one step on this CPU, its allocator's reports to the profiler
  (`scripts/model_memory_peak.py`: parameters, inputs and the step's most allocated at once).
  *plan / model's own* is the planned peak over it (the goal on an ET pair: at most 1.5).
- *step before / after*: the median of the runs of the rebuilt ops in order (`runs.median_us`),
  `--max-time {max_time}` each, one after the other on this shared machine while other builds
  were running: these times are not a benchmark (differences of a few per cent, and more on the
  short steps, are noise); the memory figures are.
- *outside the plan*: what the replayers asked for that the plan had not foreseen (an op whose
  launching op cannot run replayed by an enclosing op, whose inputs the plan does not read),
  allocated privately: the measured peak's excess over the plan where it is large.
- *change* compares only runs that rebuilt the same ops: where the before binary ran a different
  number (op calls grouped as one instance since), it says so instead.
- A refused trace (exit 2) names its planned peak; `failed` is a command that stopped with
  another error (its message).

The Execution Trace pairs: the shared ones (`et/linear_*`, `et/resnet_*`, PARAM's test inputs)
record no record-function ids in their Kineto traces and are linked by op order and shapes
(issue 51; [sequence](../commands/sequence.md#linking-by-op-order-and-shapes)). Linear's ET
links all its 710 operators, to the last of the Kineto trace's 40 iterations, and runs. Its
Kineto trace recorded no input shapes: without the ET only the memsets are rebuilt (the other
ops: `the trace recorded no input shapes`). Since 2026-11-29 (after the table's run), with the
ET the ops take its inputs, the re-run step is its iteration (219 of 219 ops rebuilt), each
launch's op is linked to its node and the plan follows the ET's lifetimes: planned and measured
peak 0.74 GiB ([classify](../commands/classify.md#execution-traces---execution-trace),
[sequence](../commands/sequence.md#linking-by-op-order-and-shapes)). Resnet's is refused up front, rightly:
its ET is a ResNet-50 under DDP over three steps, its Kineto trace a ResNet-18 of another run
(at best about 3,100 of the ET's 10,818 operators match, under the 80 % a link needs).
Neither records allocator events, so their model's own peak is not known. bloom-tiny's pair (`crates/core/tests/data/et/`, recorded on a CPU by
`capture --execution-trace`) is the pair that runs: with `--execution-trace` its plan follows the
Execution Trace's lifetimes (*planned from*), and the model's own peak is the zoo model run again
for one step with its allocator's statistics. In bytes, with the Execution Trace:

{et_lines}

{table}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--traces", nargs="*", help="traces (default: every *.json.gz of ../shared/traces)")
    ap.add_argument("--binary", default=str(ROOT / "target" / "release" / "replay"))
    ap.add_argument("--before", help="a replay binary without the memory plan, for the step time before")
    ap.add_argument("--before-label", help="what --before was built from (a commit), for the page")
    ap.add_argument("--budget", default="8G")
    ap.add_argument("--max-time", type=float, default=5.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--out", default=str(ROOT / "results" / "bench_sequence_memory.json"))
    ap.add_argument("--doc", default=str(ROOT / "docs" / "benchmarks" / "sequence-memory.md"))
    ap.add_argument("--rewrite", action="store_true",
                    help="run nothing: write the table and the page again from --out's stored rows")
    args = ap.parse_args()
    if args.rewrite:
        result = json.loads(Path(args.out).read_text())
        result["table"] = table(result["rows"])
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        write_page(result, args)
        return
    traces = [Path(t) for t in args.traces] if args.traces else sorted(
        p for p in SHARED.rglob("*.json.gz") if not p.name.endswith("_et.json.gz"))
    # A Kineto trace with its Execution Trace beside it (`X_kineto` and `X_et`) runs twice:
    # alone, and with the ET (its tensors' identities: outputs flow into their readers).
    runs = []
    for trace in traces:
        runs.append((trace, None, None))
        et = trace.with_name(trace.name.replace("_kineto.json.gz", "_et.json.gz"))
        if et != trace and et.exists():
            runs.append((trace, et, None))
    if not args.traces:
        for trace, et, model in OWN_PAIRS:
            runs += [(trace, None, model), (trace, et, model)]
    model_peaks = {}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (trace, et, model) in enumerate(runs):
            name = (str(trace.relative_to(SHARED)) if SHARED in trace.parents
                    else str(trace.relative_to(ROOT)) if ROOT in trace.parents else str(trace))
            if et:
                name += f" + {et.name}"
            print(f"[{i + 1}/{len(runs)}] {name}", file=sys.stderr, flush=True)
            row = {"trace": name, "model_peak_bytes": model_peak(trace)}
            if model and row["model_peak_bytes"] is None:
                key = json.dumps(model, sort_keys=True)
                if key not in model_peaks:
                    model_peaks[key] = measured_model_peak(model)
                measured = model_peaks[key]
                if measured:
                    row["model_peak_bytes"] = measured["peak_bytes"]
                    row["model_peak"] = measured
            row["after"] = run(args.binary, trace, et, Path(tmp) / f"a{i}", args.budget, args.max_time, args.timeout)
            if args.before and row["after"].get("status") == "ok":
                row["before"] = run(args.before, trace, et, Path(tmp) / f"b{i}", None, args.max_time, args.timeout)
            print(f"  {row['after'].get('status')} {row['after'].get('error', '')}", file=sys.stderr)
            rows.append(row)
    after_commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                  capture_output=True, text=True).stdout.strip() or None
    result = {
        "command": f"replay sequence --device cpu --max-time {args.max_time:g} --memory-budget {args.budget}",
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "after_commit": after_commit, "before": args.before, "before_label": args.before_label,
        "cpu_count": os.cpu_count(), "rows": rows, "table": table(rows),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(result["table"])
    print(f"wrote {out}", file=sys.stderr)
    if not args.traces:
        write_page(result, args)


def write_page(result, args):
    label = result.get("before_label")
    before = (f"before: `{result['before']}` ({label or 'unlabelled'}), the same command without "
              "`--memory-budget`" if result.get("before") else "no before binary given")
    max_time = result["command"].split("--max-time ")[1].split()[0]
    doc = Path(args.doc)
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(PAGE.format(before=before, table=result["table"], max_time=max_time,
                               et_lines=et_lines(result["rows"]),
                               **{k: result[k] for k in ("when", "after_commit", "cpu_count", "command")}))
    print(f"wrote {doc}", file=sys.stderr)

if __name__ == "__main__":
    main()
