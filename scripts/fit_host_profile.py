#!/usr/bin/env python3
"""Fits the host section of a calibration profile on at most three GPU-truth configurations.

Where no GPU is at hand, the host model's two framework costs (the dispatcher's per op event
and the interpreter's per top-level op) cannot be measured by `replay calibrate --host-only`;
the recorded truth of a machine kind can stand in for them: this script searches a grid of
both (and of the launch cost of the launches the replay did not measure: TorchScript fusion
groups) for the values whose host-model predictions (`replay predict --isolated --host-times
model`) land closest to the unprofiled truth of the chosen configurations, and writes them as
the `host` section of the template profile, saying which configurations it was fitted on.
(A launch inside an op the replay did not measure, such as a TorchScript fusion group, takes
the trace's own ratio of unprofiled to profiled time: no constant of its own.)
Everything else (each op's own host time) still comes from each folder's isolated.json, which
the replay measured without the profiler in the same run as that folder's truth.

The default fit set is the three configurations whose truth is tightest (smallest p90/p10):
chosen by the truth's quality, before any prediction is looked at.

    scripts/fit_host_profile.py [--truth DIR] [--fit a,b,c] [--template profiles/x.json] [--out P]
"""

import argparse
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_truth  # noqa: E402

DISPATCH_US = [0.4, 0.6, 0.8, 1.0, 1.2, 1.4]
INTERPRETER_US = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
# A launch outside any op (rare): the trace's own less the profiler's cost when unset.
LAUNCH_US = [None]


def tightest(truth_dir, names, count=3):
    spread = []
    for name in names:
        t = gpu_truth.truth(os.path.join(truth_dir, name))
        spread.append((t["p90_us"] / t["p10_us"], name))
    return [name for _, name in sorted(spread)[:count]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--truth", default=gpu_truth.DEFAULT_TRUTH, help="the GPU-truth folder of one machine kind")
    parser.add_argument("--fit", help="comma-separated configurations to fit on (at most 3) [default: the 3 tightest truths]")
    parser.add_argument("--template", default=os.path.join(gpu_truth.REPO, "profiles", "h200_sxm_datasheet.json"))
    parser.add_argument("--out", help="where to write the profile with its host section [default: the template]")
    parser.add_argument("--device", default="NVIDIA H200")
    args = parser.parse_args()

    names = gpu_truth.configurations(args.truth)
    fit = args.fit.split(",") if args.fit else tightest(args.truth, names)
    if len(fit) > 3 or not set(fit) <= set(names):
        sys.exit(f"fit_host_profile: --fit takes at most 3 of {', '.join(names)}")
    truths = {n: gpu_truth.truth(os.path.join(args.truth, n))["median_us"] for n in fit}
    print(f"fitting on {', '.join(fit)} (truth medians: "
          + ", ".join(f"{truths[n]:.0f} us" for n in fit) + ")", file=sys.stderr)

    best = None
    grid = list(itertools.product(DISPATCH_US, INTERPRETER_US, LAUNCH_US))
    for i, (dispatch, interpreter, launch) in enumerate(grid):
        host = {
            "machine": {"device": args.device},
            "source": "fitting",
            "dispatch_us_per_op": dispatch,
            "interpreter_us_per_op": interpreter,
            "launch_us": launch,
        }
        path = gpu_truth.with_host_section(args.template, host)
        try:
            errors = {
                n: gpu_truth.error_percent(
                    gpu_truth.predict(os.path.join(args.truth, n), "model", path)["predicted_us"], truths[n])
                for n in fit
            }
        finally:
            os.unlink(path)
        # The worst configuration first, then the mean: no one configuration given up.
        score = (max(abs(e) for e in errors.values()), sum(abs(e) for e in errors.values()) / len(errors))
        if best is None or score < best[0]:
            best = (score, host, errors)
        print(f"[{i + 1}/{len(grid)}] dispatch {dispatch} interpreter {interpreter} launch {launch}: "
              + ", ".join(f"{n} {e:+.1f} %" for n, e in errors.items()), file=sys.stderr)

    (worst, mean), host, errors = best
    with open(args.template) as f:
        profile = json.load(f)
    host["source"] = (
        f"fitted by scripts/fit_host_profile.py on {', '.join(fit)} of {os.path.basename(args.truth)} "
        f"(grid search, worst {worst:.1f} %, mean {mean:.1f} % on those); each op's own host time "
        "comes from the isolated.json of the run that is predicted")
    host["notes"] = {n: f"fit error {e:+.2f} %" for n, e in errors.items()}
    host = {k: v for k, v in host.items() if v is not None}
    profile["host"] = host
    out = args.out or args.template
    with open(out, "w") as f:
        json.dump(profile, f, indent=2)
        f.write("\n")
    print(json.dumps(host, indent=2))
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
