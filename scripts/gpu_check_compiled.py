"""The GPU check's compiled stage: torch.compile on the device (scripts/gpu_check.py runs it
after compare; issue 30's GPU goal). Its summaries of kernels.json and of an isolated.json are
what the summary keeps."""
import os

from gpu_check_runner import load_json, ok, per_kernel_budget, record


def kernels_summary(kernels):
    """What capture --compile recorded in inductor/kernels.json: per kernel its kind, trace
    name and how many argument layouts it was seen with; for a Triton kernel, the launch data
    the recorder found (cubin and cache_hash: replay's reader looks in the kept cache without)."""
    rows = []
    for k in (kernels or {}).get("kernels", []):
        row = {"name": k.get("name"), "kind": k.get("kind"), "trace_name": k.get("trace_name"),
               "layouts": len(k.get("layouts") or k.get("calls") or [])}
        if k.get("kind") == "triton":
            row.update({key: k.get(key) for key in ("cubin", "cache_hash", "num_warps", "shared_mem")})
        rows.append(row)
    kinds = {}
    for r in rows:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    return {"count": len(rows), "kinds": kinds, "kernels": rows[:40]}


def isolated_summary(isolated):
    """An isolated.json: signatures by status and tier, and every row that did not end ok or is
    a generated kernel (tier 4: a Triton launch's failure names the kernel and the driver's
    error; its method says how it ran)."""
    by_status, rows = {}, []
    for r in (isolated or {}).get("results", []):
        key = f"tier{r.get('tier')}/{r.get('status')}"
        by_status[key] = by_status.get(key, 0) + 1
        if r.get("status") not in ("ok", "included") or r.get("tier") == 4:
            rows.append({k: r.get(k) for k in ("id", "name", "tier", "status", "method", "predicted_us",
                                               "trace_mean_us", "error", "message", "reason")})
    results = (isolated or {}).get("results", [])
    total = sum(r.get("trace_total_us") or 0 for r in results)
    replayed = sum(r.get("trace_total_us") or 0 for r in results if r.get("status") in ("ok", "included"))
    generated = [r for r in results if r.get("tier") == 4]
    gen_total = sum(r.get("trace_total_us") or 0 for r in generated)
    gen_replayed = sum(r.get("trace_total_us") or 0 for r in generated if r.get("status") == "ok")
    return {"by_tier_status": by_status, "rows": rows[:40],
            # Shares of the trace's kernel time (tier 4: of the generated kernels' time).
            "replayed_share": replayed / total if total else None,
            "generated_replayed_share": gen_replayed / gen_total if gen_total else None}


def stage_compiled(ctx, entry):
    """torch.compile on the device: capture --compile of gpt2-small on a GPU with 90 s or more,
    else bloom-tiny (Inductor's kernels recorded
    in inductor/kernels.json: Triton on a GPU, C++ on the CPU), classify, isolated with that
    Inductor cache (on a GPU its tier 4 is each Triton kernel's cubin launched by
    cuLaunchKernel, tier4_generated/triton_kernel.rs: the rows say ok, or the kernel and the
    driver's error); then, with room left, an AOTInductor package compiled for the device
    (export --format pt2 --aoti) and timed by `replay full` without Python."""
    out = os.path.join(ctx.work, "capture")
    trace = os.path.join(out, "trace.json")
    # Issue 30's GPU goal is gpt2-small's Triton kernels; bloom-tiny (seconds to compile) with
    # --quick, on the CPU, or when the slice is short.
    model = "gpt2-small" if ctx.device.startswith("cuda") and not ctx.quick and ctx.slice_s >= 90 else "bloom-tiny"
    entry["model"] = model
    try:
        r = ctx.run([ctx.replay, "capture", "--compile", "--zoo", model, "--device", ctx.device,
                     "--out", trace], 480)
        entry["capture"] = record(r)
    finally:
        entry["kernels"] = kernels_summary(load_json(os.path.join(out, "inductor", "kernels.json")))
    ctx.checkpoint()
    if ok(r):
        sig = os.path.join(out, "signatures.json")
        r = ctx.run([ctx.replay, "classify", "--trace", trace, "--out", sig], 60)
        entry["classify"] = record(r)
        if ok(r):
            iso = os.path.join(ctx.work, "isolated")
            budget = per_kernel_budget(min(ctx.stage_left() * 0.3, 60), 20, ceiling=0.2)
            try:
                r = ctx.run([ctx.replay, "isolated", "--kernels", sig, "--device", ctx.device,
                             "--max-time-per-kernel", str(budget), "--output-dir", iso, "--quiet"], 300)
                entry["isolated"] = record(r)
            finally:
                entry["isolated_summary"] = isolated_summary(load_json(os.path.join(iso, "isolated.json")))
        ctx.checkpoint()
    # The AOTInductor package: its compile took 25-94 s on the 2-core VM; on 16 cores, less.
    if ctx.stage_left() < 90:
        entry["aoti"] = {"skipped": f"{ctx.stage_left():.0f} s left in the slice; the package needs about 90 s"}
        return
    package = os.path.join(ctx.work, "aoti", "bloom-tiny.pt2")
    r = ctx.run([ctx.replay, "export", "--model", "bloom-tiny", "--format", "pt2", "--aoti",
                 "--device", ctx.device, "--out", package], 480)
    entry["aoti"] = {"export": record(r)}
    ctx.checkpoint()
    if ok(r):
        r = ctx.run([ctx.replay, "full", "--model", package, "--device", ctx.device, "--warmup", "10",
                     "--runs", "100", "--output-dir", os.path.join(ctx.work, "aoti", "full")], 120)
        entry["aoti"]["full"] = record(r)
        entry["aoti"]["timing"] = load_json(os.path.join(ctx.work, "aoti", "full", "full_model_timing.json"))
        if os.path.exists(package):
            os.remove(package)  # megabytes of compiled code: the archive travels back
