# The two set-up commands of the README:
#   make run   installs what is missing, builds, runs the main job on its built-in default
#   make test  runs every test
# Both build in release: the tests time real work, and sharing one profile means one build.

SHELL := /bin/bash
CARGO ?= cargo
# The kernels in cuda/ must really be compiled: fail the build instead of embedding nothing.
export REPLAY_REQUIRE_NVCC := 1

.PHONY: run test setup build clean-results

setup:
	@scripts/setup

build: setup
	$(CARGO) build --release --locked

run: build
	./target/release/replay devices

test: setup
	$(CARGO) test --release --locked
	.venv/bin/python scripts/test_scripts.py

clean-results:
	rm -rf results/*
