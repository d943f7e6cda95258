"""Every DL101 names its path: where the model's arguments come from, each call that hands them on, the sink."""

from __future__ import annotations

import json

from conftest import FIXTURES

TAINT = FIXTURES / "taint_flows"


def _finding(findings, path, line):
    return next(f for f in findings if f["path"] == path and f["line"] == line)


def test_json_trace_follows_a_lambda_through_the_runner(run_cli) -> None:
    findings = run_cli(TAINT, "--format", "json").findings()
    trace = _finding(findings, "opsagent/loop.py", 15)["trace"]
    assert [(step["path"], step["line"]) for step in trace] == [
        ("opsagent/loop.py", 11),  # args = json.loads(tool_call.function.arguments)
        ("opsagent/loop.py", 15),  # handed to run_middleware with the lambda
        ("opsagent/middleware.py", 11),  # execute(tool_args) calls the lambda
        ("opsagent/loop.py", 15),  # fn(agent, next_args, ctx): the sink
    ]
    assert trace[0]["message"].startswith("source:")
    assert "run_middleware" in trace[1]["message"]
    assert "the lambda in `execute_tool`" in trace[2]["message"]
    assert trace[-1]["message"].startswith("sink:")


def test_chain_arm_trace_goes_through_the_closure(run_cli) -> None:
    findings = run_cli(TAINT, "--format", "json").findings()
    trace = _finding(findings, "opsagent/model_tools.py", 19)["trace"]
    lines = [(step["path"], step["line"]) for step in trace]
    assert lines[0] == ("opsagent/model_tools.py", 18)
    assert ("opsagent/middleware.py", 11) in lines
    assert any("invoke_tool._execute` as `next_args`" in step["message"] for step in trace)
    assert lines[-1] == ("opsagent/model_tools.py", 19)


def test_sarif_carries_the_trace_as_a_code_flow(run_cli) -> None:
    log = json.loads(run_cli(TAINT, "--format", "sarif").stdout)
    results = log["runs"][0]["results"]
    flows = [r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 15]
    assert flows
    steps = flows[0]["codeFlows"][0]["threadFlows"][0]["locations"]
    uris = [step["location"]["physicalLocation"]["artifactLocation"]["uri"] for step in steps]
    assert uris == ["opsagent/loop.py", "opsagent/loop.py", "opsagent/middleware.py", "opsagent/loop.py"]
    assert all(step["location"]["message"]["text"] for step in steps)


def test_verbose_text_prints_the_trace(run_cli) -> None:
    quiet = run_cli(TAINT).stdout
    verbose = run_cli(TAINT, "--verbose").stdout
    assert "trace:" not in quiet
    assert "trace:" in verbose
    assert "1. opsagent/loop.py:11:12: source: the model's arguments" in verbose
