#!/usr/bin/env python3
"""The model's own memory peak in one step, from its allocator's statistics (issue 51 part B).

What `replay sequence`'s memory plan is compared with on an Execution Trace pair whose traces
recorded no allocator events (`[memory]`): the model that was captured (a zoo model, with the
capture's defaults: seed 0, token ids [batch, seq-len]) is built again and run for one step,
no_grad as `capture_trace.py` runs it.

On the CPU, libtorch's allocator reports each allocation and free to the profiler when
`profile_memory=True` (c10's ProfiledCPUMemoryReporter; its running total is the `[memory]`
events' `Total Allocated`). The profiler is started before the model is built, so the total
counts the parameters and inputs too; the step's peak is the most it reached between the start
and end of the step's `record_function` span, after one unprofiled-by-span warm-up step. On CUDA,
`torch.cuda.max_memory_allocated` after `reset_peak_memory_stats`.

Prints one JSON object: held_before_bytes (parameters, inputs and whatever the model keeps
before the step), peak_bytes (the most allocated during the step, the held bytes included),
parameters_bytes, inputs_bytes, how (what measured it).
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function  # noqa: E402

import model_source  # noqa: E402
from script_io import UsageError  # noqa: E402

STEP = "replay::model_memory_peak_step"


def build(args, dev):
    loaded = model_source.load(None, args.zoo, dev)
    vocab = loaded.vocab or 1000
    g = torch.Generator().manual_seed(args.seed)
    ids = torch.randint(0, vocab, (args.batch, args.seq_len), generator=g).to(dev)
    return loaded.module, [ids]


def tensor_bytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def on_cpu(args):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "memory.json")
        with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
            model, inputs = build(args, torch.device("cpu"))
            model(*inputs)  # the warm-up step: what the first call allocates once
            with record_function(STEP):
                model(*inputs)
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    span = [e for e in events if e.get("name") == STEP and e.get("ph") == "X"]
    if not span:
        raise RuntimeError("the profiler recorded no step span")
    start, end = span[0]["ts"], span[0]["ts"] + span[0]["dur"]
    memory = [(e["ts"], e["args"]["Total Allocated"]) for e in events
              if e.get("name") == "[memory]" and "Total Allocated" in e.get("args", {})]
    before = [total for ts, total in memory if ts < start]
    during = [total for ts, total in memory if start <= ts <= end]
    if not during:
        raise RuntimeError("the profiler recorded no allocation during the step")
    held = before[-1] if before else 0
    return {"held_before_bytes": held, "peak_bytes": max([held, *during]),
            "allocator_events_in_step": len(during),
            "how": "the CPU allocator's reports to torch.profiler (profile_memory=True, `[memory]` "
                   "events' Total Allocated), the profiler started before the model was built"}, model, inputs


def on_cuda(args, dev):
    model, inputs = build(args, dev)
    with torch.no_grad():
        model(*inputs)
        torch.cuda.synchronize(dev)
        held = torch.cuda.memory_allocated(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        model(*inputs)
        torch.cuda.synchronize(dev)
    return {"held_before_bytes": held, "peak_bytes": torch.cuda.max_memory_allocated(dev),
            "how": "torch.cuda.max_memory_allocated after reset_peak_memory_stats"}, model, inputs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zoo", required=True, metavar="NAME", help="a model of the zoo (zoo.py)")
    p.add_argument("--seq-len", type=int, default=5)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seed", type=int, default=0, help="seed of the random token ids")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    args = p.parse_args(argv)
    try:
        if args.seq_len < 1 or args.batch < 1:
            raise UsageError("--seq-len and --batch must be at least 1")
        torch.set_num_threads(args.threads)
        dev = torch.device(args.device)
        if dev.type == "cuda":
            result, model, inputs = on_cuda(args, dev)
        else:
            result, model, inputs = on_cpu(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    result.update(model=args.zoo, device=str(dev), batch=args.batch, seq_len=args.seq_len,
                  parameters_bytes=tensor_bytes(model.parameters()),
                  inputs_bytes=tensor_bytes(inputs), torch=torch.__version__)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
