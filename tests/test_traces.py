"""Every finding names its path: for DL101, where the model's arguments come from, each call that hands them on,
the sink; for DL201, the tool, its gate and the second parse; for DL301, the repair and the late restore."""

from __future__ import annotations

import json
import shutil

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


def test_a_function_handed_on_twice_is_traced_through_both_receivers(run_cli) -> None:
    findings = run_cli(TAINT, "--format", "json").findings()
    trace = _finding(findings, "opsagent/loop.py", 43)["trace"]
    messages = [step["message"] for step in trace]
    assert [(step["path"], step["line"]) for step in trace] == [
        ("opsagent/loop.py", 41),
        ("opsagent/loop.py", 43),
        ("opsagent/middleware.py", 34),
        ("opsagent/middleware.py", 40),
        ("opsagent/loop.py", 43),
    ]
    assert "run_timed" in messages[1] and "_timed" in messages[2]


def test_text_protocol_trace_starts_at_the_model_reply_and_names_the_parse(run_cli) -> None:
    findings = run_cli(FIXTURES / "text_protocol", "--format", "json", "--select", "DL102").findings()
    trace = _finding(findings, "scribe/agent.py", 42)["trace"]
    assert [(step["path"], step["line"]) for step in trace] == [
        ("scribe/agent.py", 24),  # reply = response.choices[0].message.content
        ("scribe/agent.py", 27),  # self._execute_tool_call(line)
        ("scribe/agent.py", 31),  # match = re.match(r"(\w+)\((.*)\)", tool_call)
        ("scribe/agent.py", 42),  # self.tools[tool_name](**kwargs)
    ]
    assert "text reply" in trace[0]["message"] and "_execute_tool_call" in trace[1]["message"]
    assert "parsed" in trace[2]["message"] and trace[-1]["message"].startswith("sink:")


def test_handrolled_parse_trace_names_the_tool_the_gate_and_the_parse(run_cli) -> None:
    findings = run_cli(FIXTURES / "example", "--format", "json").findings()
    trace = _finding(findings, "taskbot/builtin.py", 13)["trace"]
    assert [(step["path"], step["line"]) for step in trace] == [
        ("taskbot/builtin.py", 29),  # "plan": _plan in BUILTIN_EXECUTORS
        ("taskbot/gate.py", 83),  # def coerce_tool_args
        ("taskbot/builtin.py", 13),  # steps = json.loads(steps)
    ]
    assert "tool `plan`" in trace[0]["message"] and "coerce_tool_args" in trace[1]["message"]


def test_late_restore_trace_shows_the_repair_then_the_restore(run_cli) -> None:
    findings = run_cli(FIXTURES / "sanitized_names", "--format", "json").findings()
    trace = next(f for f in findings if f["code"] == "DL301")["trace"]
    assert [(step["path"], step["line"]) for step in trace] == [("mailroom/gate.py", 14), ("mailroom/gate.py", 22)]


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


def test_a_gate_that_never_restores_the_names_is_traced_to_its_repair(tmp_path, run_cli) -> None:
    """No restore at all: the trace is the repair by property name alone (and the run does not fail)."""
    project = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sanitized_names", project)
    gate = project / "mailroom" / "gate.py"
    gate.write_text(gate.read_text().replace("return unrename_args(parameters, repaired)", "return repaired"))
    findings = run_cli(project, "--format", "json").findings()
    trace = next(f for f in findings if f["code"] == "DL301")["trace"]
    assert [(step["path"], step["line"]) for step in trace] == [("mailroom/gate.py", 14)]
    assert "without restoring" in next(f for f in findings if f["code"] == "DL301")["message"]
