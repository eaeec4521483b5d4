"""Errors: Python exceptions with the messages of the `replay` command, naming the file."""

import subprocess

import pytest

import replay_kernels as rk


def cli_error(replay, *args):
    done = subprocess.run([str(replay), *args], capture_output=True, text=True)
    assert done.returncode == 2
    return done.stderr.splitlines()[0].removeprefix("error: ")


def test_a_missing_trace_is_file_not_found_naming_it(tmp_path, replay):
    path = tmp_path / "nowhere.json.gz"
    with pytest.raises(FileNotFoundError) as raised:
        rk.load_trace(path)
    assert str(path) in str(raised.value)
    assert str(raised.value).splitlines()[0] == cli_error(replay, "classify", "--trace", str(path))


def test_a_malformed_trace_names_the_file_and_the_place(tmp_path, replay):
    path = tmp_path / "broken.json"
    path.write_text('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1,')
    with pytest.raises(rk.ReplayInputError) as raised:
        rk.load_trace(path)
    message = str(raised.value)
    assert str(path) in message
    assert message.splitlines()[0] == cli_error(replay, "classify", "--trace", str(path))


def test_a_bad_what_if_is_an_input_error(traces):
    trace = rk.load_trace(traces / "cpu_only.json.gz")
    with pytest.raises(rk.ReplayInputError, match="tier9"):
        trace.predict(what_if=["tier9*2"])


def test_a_result_file_of_the_wrong_kind_names_it(traces):
    with pytest.raises(rk.ReplayInputError) as raised:
        rk.read_isolated(traces / "cpu_only.json.gz")
    assert "cpu_only.json.gz" in str(raised.value)
