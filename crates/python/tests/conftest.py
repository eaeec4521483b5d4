"""Where the tests find the traces (`../shared/traces` beside the repository) and the
`replay` executable they compare with (target/release/replay, or $REPLAY_BIN)."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
TRACES = REPO.parent / "shared" / "traces" / "kineto"


def replay_bin() -> pathlib.Path:
    if os.environ.get("REPLAY_BIN"):
        return pathlib.Path(os.environ["REPLAY_BIN"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "release" / "replay"


@pytest.fixture(scope="session")
def replay() -> pathlib.Path:
    path = replay_bin()
    assert path.exists(), f"{path} is not built: run `cargo build --release` first"
    return path


@pytest.fixture(scope="session")
def traces() -> pathlib.Path:
    assert TRACES.is_dir(), f"the shared traces are not at {TRACES}"
    return TRACES
