# The two set-up commands of the README:
#   make run   installs what is missing, builds, runs the main job on its built-in default
#   make test  runs every test
# Both build in release: the tests time real work, and sharing one profile means one build.
# The workspace builds two executables: target/release/replay (torch-free, crates/core) and
# target/release/replay-torch (links libtorch), which replay runs for the model commands.

SHELL := /bin/bash
CARGO ?= cargo
# The kernels in cuda/ must really be compiled: fail the build instead of embedding nothing.
export REPLAY_REQUIRE_NVCC := 1
# pyo3's build script (crates/python, the Python package's extension module) reads the
# interpreter from here.
export PYO3_PYTHON := $(CURDIR)/.venv/bin/python

.PHONY: run test setup build clean-results

setup:
	@scripts/setup

build: setup
	$(CARGO) build --release --locked --workspace
	scripts/install_python_package.sh

# The main job on its built-in default: BLOOM-560M (real architecture, random weights),
# sequence length 5, on the CPU, predicted from its kernels and compared with the real model.
MODEL ?= models/bloom-560m.pt
run: build
	@test -f $(MODEL) || ./target/release/replay export --model bloom-560m --out $(MODEL)
	./target/release/replay compare --model $(MODEL) --device cpu --seq-len 5 --warmup 10 --runs 100 --output-dir results

# libtorch picks its CPU kernels by the vector width the CPU has (avx512 on Xeons and on Zen 4/5,
# avx2 elsewhere), and each rounds float32 differently. The tests that compare libtorch's float
# results with values recorded on one machine or with a float64 reference run a second time on
# its scalar kernels (ATEN_CPU_CAPABILITY=default) and on its AVX2 ones where the CPU has AVX2, so
# that no vendor's or width's vector path can fail CI unseen. The first run uses what the CPU has.
NUMERIC_TESTS := float_tolerance scan_torch_backend scan_bench::the_inputs quant_recipes mhc_profiled_module fusion_groups::a_group_s_kernel

# The run's own scratch folder, emptied as it starts (never the user's Inductor cache): the
# integration tests leave there the Inductor cache of their one cold compile of bloom-tiny
# (tests/integration/compiled_bloom_tiny.rs), from which test_scripts.py's capture of the same
# model compiles warm (issue 52: a cold compile is a minute of C++ compiles).
TEST_SHARE := $(CURDIR)/target/make-test-share
test: export REPLAY_TEST_SHARE := $(TEST_SHARE)
# Compiles that take Inductor's default cache (AOTInductor's exports: the integration fixture and
# test_scripts.py build the same bloom-tiny package) share one in the run's folder, cold once per
# run on any machine, instead of the user's /tmp/torchinductor_$USER (a capture sets its own).
test: export TORCHINDUCTOR_CACHE_DIR := $(TEST_SHARE)/inductor-default
test: setup
	rm -rf $(TEST_SHARE) && mkdir -p $(TEST_SHARE)
	$(CARGO) test --release --locked --workspace
	for cap in default $$(grep -qw avx2 /proc/cpuinfo && echo avx2); do \
	  echo "make test: the numeric tests again on libtorch's $$cap CPU kernels"; \
	  ATEN_CPU_CAPABILITY=$$cap $(CARGO) test --release --locked --workspace --test integration \
	    -- $(NUMERIC_TESTS) || exit 1; \
	done
	# The Python package's extension module: a cdylib with no test harness, which cargo test
	# does not build. The same selection of targets resolves the same features, so this
	# compiles the module and pyo3 only, nothing of the workspace again.
	$(CARGO) build --release --locked --workspace --lib --tests
	.venv/bin/python scripts/test_scripts.py
	scripts/install_python_package.sh
	.venv/bin/python -m pytest -q crates/python/tests
	scripts/gpu_bundle.sh target/gpu-bundle
	.venv/bin/python scripts/test_gpu_check.py
	rm -rf $(TEST_SHARE)

# The inner loop: the torch-free packages' unit and integration tests and the layout checks
# (replay-core, replay-cli and its `replay` executable, replay-tracegen), nothing that links
# libtorch: about two minutes after a one-line change in crates/core.
.PHONY: test-fast
test-fast:
	$(CARGO) test --release --locked -p replay-core -p replay-cli -p replay-tracegen

clean-results:
	rm -rf results/*

# signatures/ holds the classified files of the two H100 traces in ../shared/traces.
.PHONY: signatures signatures-check bench-classify bench-classify-vs-hta bench-python
signatures: build
	REPLAY_BIN=target/release/replay scripts/regenerate_signatures.sh

signatures-check: build
	REPLAY_BIN=target/release/replay scripts/regenerate_signatures.sh --check

# Parse + classify throughput and memory on a >= 100 MB trace, in process and end to end, the start-up
# and `predict` timings, and HolisticTraceAnalysis on the same trace in a throw-away venv ("unavailable"
# with the reason when it cannot be installed): one report, results/bench_classify.json (replay's own
# side also in target/bench/classify_throughput.json).
bench-classify: setup
	$(CARGO) build --release --locked
	scripts/bench_classify_vs_hta.sh

# The Python package (replay_kernels): import time, a 1 MB trace loaded and classified, and
# load_trace(...).signatures() on bench-classify's >= 100 MB trace against HTA 0.5's
# TraceAnalysis load of the same file in a throw-away venv (results/bench_python.json).
bench-python: build
	.venv/bin/python scripts/bench_python.py

# The same run, under its former name.
bench-classify-vs-hta: bench-classify

# Issue 33's huge traces: replay-tracegen's synthetic Kineto traces of 1-30 GB piped into
# `replay classify --trace -` (on files while replay cannot read a pipe), time, GB/s and peak RSS
# at each size; 8 gzipped ranks x 1 GB in one call; the in-memory path and HTA (throw-away venv,
# under an RSS watchdog) on the largest files that fit (results/bench_huge.json). The inputs are
# piped or written under target/bench/huge/ and deleted. ARGS="--sizes 1G,2G" or ARGS=--quick.
.PHONY: bench-huge
bench-huge: setup
	$(CARGO) build --release --locked -p replay-cli -p replay-tracegen
	.venv/bin/python scripts/bench_huge.py $(ARGS)

# Issue 34's signature files of very many signatures: `replay isolated --device cpu` on generated
# files of 10^5, 10^6 and 10^7 signatures (copies of the shipped BERT memcpy, not replayable by
# default: ARGS="--kind copy" replays them), time and peak RSS of each (results/
# bench_many_signatures.json). The files are written under target/bench/many_signatures/ and
# deleted. ARGS="--sizes 1e5,1e6" or ARGS=--quick.
.PHONY: bench-many-signatures
bench-many-signatures: build
	.venv/bin/python scripts/bench_many_signatures.py $(ARGS)

# An AOTInductor package timed by `replay full` and from Python (torch._inductor.aoti_load_package)
# side by side, bloom-tiny and gpt2-small on the CPU (results/bench_aoti.json; issue 30's goal).
.PHONY: bench-aoti
bench-aoti: build
	.venv/bin/python scripts/bench_aoti.py

# Issue 30's compiled-model goals on the CPU: compare --compile of zoo models (replayed share of
# the step, best error) three times each, beside the eager compare of the same model
# (results/bench_compiled.json). Choose models with ARGS="--models bloom-tiny".
.PHONY: bench-compiled
bench-compiled: build
	.venv/bin/python scripts/bench_compiled.py $(ARGS)

# Kill-and-resume (issue 34): 100 random SIGKILLs across isolated, bench scan, bench quant, bench
# mhc and calibrate on small grids, each resumed with --resume and compared with an uninterrupted
# run (results/kill_resume.json). ARGS="--kills 2" for a short one.
.PHONY: bench-resume
bench-resume: build
	.venv/bin/python scripts/kill_resume.py $(ARGS)

# Replay coverage of the H100 traces on the CPU and run-to-run noise (results/bench_isolated.json).
# Issue 50's offline goal: every prediction of each configuration of the H200's GPU truth
# (../shared/gpu-truth/) beside the unprofiled truth, the host model with the host section of
# profiles/h200_sxm_datasheet.json (fitted on three named configurations by
# scripts/fit_host_profile.py): results/bench_gpu_truth.json and docs/benchmarks/gpu-truth.md.
.PHONY: bench-gpu-truth
bench-gpu-truth: setup
	$(CARGO) build --release --locked -p replay-cli
	.venv/bin/python scripts/bench_gpu_truth.py $(ARGS)
	.venv/bin/python scripts/bench_gpu_truth.py --truth results/gpu/2026-11-30-h200 \
	  --json results/bench_gpu_truth_2026-11-30.json --markdown docs/benchmarks/gpu-truth-2026-11-30.md

# `replay sequence`'s memory plan on the shared traces: sum of op inputs, planned and measured peak,
# step time before/after (ARGS="--before /path/to/replay-without-plan"); results/bench_sequence_memory.json.
.PHONY: bench-sequence-memory
bench-sequence-memory: build
	.venv/bin/python scripts/bench_sequence_memory.py $(ARGS)

.PHONY: bench-isolated
bench-isolated: build
	.venv/bin/python scripts/bench_isolated.py

# The semiring-scan suite with the seed's defaults (Log, phase both, backends cpu and torch, on the
# CPU) into results/scan/, then its tables and plots into results/scan/plots/ (index.html).
.PHONY: bench-scan bench-scan-anchors
bench-scan: build
	./target/release/replay bench scan --device cpu --output-dir results/scan
	./target/release/replay bench scan analyze --input results/scan/benchmark_full.csv --output-dir results/scan/plots

# The mHC suite at the seed's default size (B=16, T=4096, D=7168, n=4, bfloat16; needs ~11.4 GiB
# of host memory, torch's stage 1 another 21 GiB, refused as an oom row where it would not fit),
# the batch-size sweep at T=1024 with the offload answer, and the goals as JSON.
.PHONY: bench-mhc
bench-mhc: build
	./target/release/replay bench mhc --warmup 1 --iters 3 --output-dir results/mhc
	./target/release/replay bench mhc --sweep-bs --seq 1024 --warmup 1 --iters 3 --output-dir results/mhc/sweep
	.venv/bin/python scripts/bench_mhc_goals.py results/mhc/benchmark_results.csv results/mhc/sweep/benchmark_results.csv --out results/bench_mhc.json

# replay's scan (cpu, torch backends) against torch-struct and flash-semicrf on the CPU, in a
# throw-away venv; T=, K=, C= choose a smaller grid (results/bench_scan_anchors.json and .md).
bench-scan-anchors: build
	scripts/bench_scan_vs_anchors.sh

# torchao's quantization microbenchmarks: the CPU example config (every recipe replay implements)
# into results/quant/cpu_example/, then the same Linears against torchao's quantize_ in a
# throw-away venv (output agreement and time ratio: results/bench_quant_torchao.{json,md}).
.PHONY: bench-quant bench-quant-torchao
bench-quant: build
	./target/release/replay bench quant --config configs/quant/cpu_example.yml

bench-quant-torchao: build
	scripts/bench_quant_vs_torchao.sh

# replay calibrate's memory bandwidth (its own copy and triad) against likwid-bench, round by
# round on the same working sets (installs Debian's likwid when missing).
.PHONY: bench-bandwidth-likwid
bench-bandwidth-likwid: build
	scripts/bench_bandwidth_vs_likwid.sh

# Renders results/report.html in headless Chromium (apt-get install chromium) to results/report.png.
.PHONY: report-screenshot
report-screenshot:
	scripts/screenshot_report.sh results/report.html results/report.png

# Prediction accuracy of compare across the model zoo (bloom-560m, gpt2-small, bert-base, t5-small,
# resnet50, bloom-tiny) at two sizes each, three times, 2 threads (results/bench_accuracy.json).
.PHONY: bench-accuracy
bench-accuracy: build
	.venv/bin/python scripts/bench_accuracy.py

# What a lent GPU machine needs beside the working tree (target/gpu-bundle/, < 48 MiB, carried as
# target/gpu-bundle.tar.xz, about 10 MiB), and the
# prepared check that runs there: scripts/gpu_check.sh (docs/concepts/gpu-runs.md).
.PHONY: gpu-bundle gpu-check-cpu bench-gpu-rehearsal
gpu-bundle: build
	scripts/gpu_bundle.sh target/gpu-bundle --archive

# The same check on this machine's CPU, every stage in seconds (also run by `make test`).
gpu-check-cpu: gpu-bundle
	scripts/gpu_check.sh --all --device cpu --quick --deadline 300 --out target/gpu-check-cpu

# The GPU run's full rehearsal on this CPU: `--all --device cpu --deadline 420` ends inside its
# deadline with every stage ok (results/bench_gpu_rehearsal.json).
bench-gpu-rehearsal: gpu-bundle
	.venv/bin/python scripts/bench_gpu_rehearsal.py

# A real Slurm cluster of one node on this machine (needs root; installs Debian's slurm-wlm and
# munge when missing): scripts/slurm/replay-array.sbatch runs `isolated` over the two H100
# signature files and a small scan grid as CPU arrays, merges them, and checks the merged
# results against single-process runs; a cancelled shard must be named by its merge job. Not
# part of `make test`. docs/concepts/clusters.md.
.PHONY: test-slurm
test-slurm: build
	scripts/slurm/test_slurm.sh

# Issue 34's soak: one `replay isolated --noise 0` run of about an hour (DURATION seconds) on the
# A100 cudagraph training trace's signatures, its process tree's RSS sampled every second and
# compared round by round (results/soak.json, rewritten as it goes).
.PHONY: soak
DURATION ?= 3600
soak: build
	.venv/bin/python scripts/soak.py --duration $(DURATION)

# Fuzzing, not part of `make test` (which replays the saved corpus and regressions): each
# target of fuzz/ (cargo-fuzz, libFuzzer, nightly Rust; cargo-fuzz installed when missing)
# for FUZZ_SECONDS seconds (default 60), or only FUZZ_TARGETS. Grows and minimises
# fuzz/corpus/, copies any finding to fuzz/regressions/, appends the figures to
# results/fuzz.json.
.PHONY: fuzz
fuzz: setup
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60) scripts/fuzz.sh $(FUZZ_TARGETS)
