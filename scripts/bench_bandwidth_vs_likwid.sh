#!/usr/bin/env bash
# replay's memory bandwidth against likwid-bench (Debian's `likwid`: hand-written copy and
# STREAM triad kernels with non-temporal stores, threads pinned), in one run on the CPU.
# replay's own copy and triad should reach at least 95 % of likwid's figure.
#
#   scripts/bench_bandwidth_vs_likwid.sh                  # the seed's quick sizes, 128,256 MB
#   SIZES=64,128,256,512 ROUNDS=7 scripts/bench_bandwidth_vs_likwid.sh
#
# Working sets match: replay's size_mb is one array of size_mb MiB of float32, so likwid gets
# 2·size_mb MiB for the copy (a, b) and 3·size_mb MiB for the triad (a, b, c), on every core
# (`-w N:<kB>:<threads>`). Both count bytes alike (each array read plus the one written, no
# write-allocate). likwid reports bytes over its whole run, so replay's figure compared is
# its mean-latency bandwidth (`achieved_bandwidth_gbps`, the seed's). The two are interleaved
# round by round, so a neighbour's load on a shared machine falls on both; the report gives
# each side's median and spread over the rounds and replay's share of likwid's median.
#
# Replay's side is `replay calibrate --operations memory` (the seed's trials: 5 quick, 10 full,
# after 3 warm-ups). likwid-bench is installed with apt-get when missing; when it cannot be, the
# script says so and exits 3.
#
# On a shared machine a neighbour's work takes cores from both sides at random, so the rounds
# are kept short (likwid runs LIKWID_ITERATIONS sweeps, about as long as replay's trials take)
# and many; the report also gives the share between each side's best round, the one a
# neighbour disturbed least, and the load average around the run.
#
# Environment: SIZES [128,256] (calibrate's quick sizes, or its full 64,128,256,512), ROUNDS
# [9], LIKWID_ITERATIONS [40], THREADS [every logical core], REPLAY_BIN
# [target/release/replay], OUT [results/bench_bandwidth_likwid.json].
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-128,256}
ROUNDS=${ROUNDS:-9}
TRIALS=$([ "$SIZES" = 128,256 ] && echo 5 || echo 10)
LIKWID_ITERATIONS=${LIKWID_ITERATIONS:-40}
THREADS=${THREADS:-$(nproc)}
OUT=${OUT:-results/bench_bandwidth_likwid.json}
PYTHON=${PYTHON:-python3}

if ! command -v likwid-bench >/dev/null 2>&1; then
  echo "== likwid-bench is missing: apt-get install likwid"
  if ! { apt-get install -y likwid >/dev/null 2>&1 ||
         { apt-get update >/dev/null 2>&1 && apt-get install -y likwid >/dev/null 2>&1; }; }; then
    echo "bench_bandwidth_vs_likwid: likwid-bench is not installed and apt-get could not install likwid (offline, or not root?)" >&2
    exit 3
  fi
fi

# The non-temporal variants this machine's likwid-bench offers, widest first: the copy is
# likwid's double-precision one (bytes are bytes), the triad its single-precision STREAM triad
# a = b + s·c (likwid's `triad` is a four-array kernel, not STREAM's).
listed=$(likwid-bench -a 2>/dev/null | sed -n 's/^\([a-z0-9_]*\) - .*/\1/p')
pick() {
  for k in "$@"; do
    if grep -qx "$k" <<<"$listed"; then echo "$k"; return 0; fi
  done
  return 1
}
if ! likwid_copy=$(pick copy_mem_avx512 copy_mem_avx copy_mem_sse copy_mem) ||
   ! likwid_triad=$(pick stream_sp_mem_avx512 stream_sp_mem_avx stream_sp_mem_sse stream_mem_avx512 stream_mem_avx stream_mem_sse); then
  echo "bench_bandwidth_vs_likwid: likwid-bench lists no non-temporal copy or triad kernel" >&2
  exit 3
fi
echo "== likwid kernels: $likwid_copy, $likwid_triad on $THREADS threads"

# Replay's side is `replay calibrate --operations memory` itself: the quick sizes (128, 256 MB)
# or the full ones (64, 128, 256, 512 MB), as SIZES says.
REPLAY=${REPLAY_BIN:-target/release/replay}
case "$SIZES" in
  128,256) mode=--quick ;;
  64,128,256,512) mode= ;;
  *) echo "bench_bandwidth_vs_likwid: SIZES must be calibrate's quick 128,256 or full 64,128,256,512" >&2; exit 2 ;;
esac
if [ ! -x "$REPLAY" ]; then
  echo "bench_bandwidth_vs_likwid: $REPLAY is missing: run make build first" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
IFS=',' read -r -a sizes <<<"$SIZES"
for round in $(seq 1 "$ROUNDS"); do
  echo "== round $round of $ROUNDS"
  for size in "${sizes[@]}"; do
    for kernel in copy triad; do
      arrays=2; name=$likwid_copy
      if [ "$kernel" = triad ]; then arrays=3; name=$likwid_triad; fi
      kb=$((arrays * size * 1048576 / 1000))
      likwid-bench -t "$name" -i "$LIKWID_ITERATIONS" -w "N:${kb}kB:$THREADS" >"$work/likwid_${round}_${size}_${kernel}.txt" 2>&1 ||
        { echo "bench_bandwidth_vs_likwid: likwid-bench -t $name failed:" >&2; tail -5 "$work/likwid_${round}_${size}_${kernel}.txt" >&2; exit 1; }
    done
  done
  "$REPLAY" calibrate --operations memory $mode --threads "$THREADS" --quiet --output "$work/replay_${round}.json" >/dev/null
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

mkdir -p "$(dirname "$OUT")"
"$PYTHON" - "$work" "$OUT" "$ROUNDS" "$SIZES" "$THREADS" "$likwid_copy" "$likwid_triad" \
  "$load_before" "$load_after" "$TRIALS" "$LIKWID_ITERATIONS" <<'EOF'
import json, re, statistics, sys, platform, datetime
work, out, rounds, sizes, threads, lcopy, ltriad, load_before, load_after, trials, iters = sys.argv[1:]
rounds, threads = int(rounds), int(threads)
sizes = [int(s) for s in sizes.split(",")]

def likwid_gbps(path):
    text = open(path).read()
    m = re.search(r"MByte/s:\s*([0-9.]+)", text)
    if not m:
        sys.exit(f"no MByte/s in {path}:\n{text[-500:]}")
    return float(m.group(1)) / 1e3

def spread(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "runs": xs}

replay = [json.load(open(f"{work}/replay_{r}.json")) for r in range(1, rounds + 1)]
cpu = open("/proc/cpuinfo").read()
model = re.search(r"model name\s*:\s*(.*)", cpu)
report = {
    "what": "memory bandwidth, replay calibrate --operations memory against likwid-bench",
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "cpu": model.group(1) if model else platform.processor(),
    "device": replay[0]["metadata"]["device"],
    "threads": threads,
    "likwid_kernels": {"copy": lcopy, "triad": ltriad},
    "rounds": rounds,
    "replay_trials_per_round": int(trials),
    "likwid_iterations_per_round": int(iters),
    "load_average_before": load_before,
    "load_average_after": load_after,
    "bandwidth": "GB/s (1e9 bytes), each array read plus the one written; replay's is bytes over its mean latency of a round, likwid's bytes over its whole run",
    "sizes": [],
}
ok = True
for size in sizes:
    entry = {"size_mb": size}
    for kernel in ("copy", "triad"):
        key = f"memory_{kernel}_replay_size_mb={size}"
        ours = [r["operation_profiles"][key]["achieved_bandwidth_gbps"] for r in replay]
        theirs = [likwid_gbps(f"{work}/likwid_{r}_{size}_{kernel}.txt") for r in range(1, rounds + 1)]
        share = statistics.median(ours) / statistics.median(theirs)
        paired = [o / t for o, t in zip(ours, theirs)]
        best_share = max(ours) / max(theirs)
        ok &= share >= 0.95
        extra = replay[0]["operation_profiles"][key]["extra_params"]
        entry[kernel] = {
            "replay_gbps": spread(ours),
            "likwid_gbps": spread(theirs),
            "replay_share_of_likwid": share,
            "paired_share_per_round": spread(paired),
            "best_round_share": best_share,
            "reaches_95_percent": share >= 0.95,
            "replay_isa": extra.get("isa"),
            "replay_streaming_stores": extra.get("streaming_stores"),
            "replay_pinned": extra.get("pinned"),
        }
    key = f"memory_copy_libtorch_size_mb={size}"
    torch = [r["operation_profiles"][key]["achieved_bandwidth_gbps"] for r in replay]
    entry["libtorch_copy_gbps"] = spread(torch)
    entry["libtorch_share_of_likwid_copy"] = statistics.median(torch) / entry["copy"]["likwid_gbps"]["median"]
    report["sizes"].append(entry)
report["all_reach_95_percent"] = ok
json.dump(report, open(out, "w"), indent=2)
print(f"{'size':>6} {'kernel':>6} {'replay GB/s (min..max)':>24} {'likwid GB/s (min..max)':>24} {'share':>7} {'best':>7}")
rng = lambda s: f"{s['median']:.1f} ({s['min']:.0f}..{s['max']:.0f})"
for e in report["sizes"]:
    for kernel in ("copy", "triad"):
        k = e[kernel]
        print(f"{e['size_mb']:>6} {kernel:>6} {rng(k['replay_gbps']):>24} {rng(k['likwid_gbps']):>24} {100 * k['replay_share_of_likwid']:>6.1f}% {100 * k['best_round_share']:>6.1f}%")
    print(f"{e['size_mb']:>6} {'torch':>6} {rng(e['libtorch_copy_gbps']):>24} {'':>24} {100 * e['libtorch_share_of_likwid_copy']:>6.1f}%")
print(f"load average before {load_before}, after {load_after}")
EOF
echo "== wrote $OUT"
