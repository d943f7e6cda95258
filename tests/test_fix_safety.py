"""The fix never corrupts: bytes it does not mean to change stay (BOM, CRLF, indentation), a module is re-parsed
and compiled before it is written, files are replaced all or none, a read-only file is refused, and what cannot
be fixed is said in the finding. Plus the unsafe-fix switch, exit codes and the pre-commit hook."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, subprocess_env, write_project
from dispatchlint.fix import FixError, _codegen, _write, write_all
from fixproject import copy_project, fix_cases, python_sources

CASES = {case.name: case for case in fix_cases()}
EXAMPLE_FIXED = FIXTURES / "fix_example" / "expected_fixed" / "taskbot" / "builtin.py"


def test_crlf_and_bom_are_kept(run_cli, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    builtin = project / "taskbot" / "builtin.py"
    builtin.write_bytes(b"\xef\xbb\xbf" + builtin.read_bytes().replace(b"\n", b"\r\n"))
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert builtin.read_bytes() == b"\xef\xbb\xbf" + EXAMPLE_FIXED.read_bytes().replace(b"\n", b"\r\n")


def test_generated_code_uses_the_module_indentation(run_cli, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    builtin = project / "taskbot" / "builtin.py"
    builtin.write_text(builtin.read_text(encoding="utf-8").replace("    ", "  "), encoding="utf-8")
    assert run_cli(project, "--fix").exit_code == 0
    expected = EXAMPLE_FIXED.read_text(encoding="utf-8").replace("    ", "  ")
    assert builtin.read_text(encoding="utf-8") == expected


def test_a_read_only_file_is_refused_and_nothing_is_written(run_cli, tmp_path: Path) -> None:
    case = CASES["fix_registered"]
    project = copy_project(case.before, tmp_path / "project")
    registry = project / "pantry" / "registry.py"
    registry.chmod(0o444)
    before = python_sources(project)
    result = run_cli(project, "--fix")
    assert result.exit_code == 2
    assert "pantry/registry.py: the file is read-only; no file was changed" in result.stderr
    assert python_sources(project) == before
    assert stat.S_IMODE(registry.stat().st_mode) == 0o444
    assert run_cli(project, "--diff").exit_code == 1  # showing the fix writes nothing, so it still works


def test_a_failed_replace_rolls_back_the_files_already_written(run_cli, tmp_path: Path, monkeypatch) -> None:
    case = CASES["fix_registered"]
    project = copy_project(case.before, tmp_path / "project")
    (project / "pantry" / "extras.py").chmod(0o640)
    before = python_sources(project)
    real_replace = os.replace
    calls = []

    def fail_second(source: str, target: str) -> None:
        if str(target).endswith(".py"):  # not the journal
            calls.append(target)
            if len(calls) == 2:
                raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(_write.os, "replace", fail_second)
    result = run_cli(project, "--fix")
    assert result.exit_code == 2
    assert "No space left on device; no file was changed" in result.stderr
    assert len(calls) == 3  # the first file, the failing second, the first file restored
    assert python_sources(project) == before
    assert stat.S_IMODE((project / "pantry" / "extras.py").stat().st_mode) == 0o640
    assert not [path for path in project.rglob("*.dispatchlint")]
    assert not [path for path in project.iterdir() if path.name.startswith(".dispatchlint-fix-journal")]


def test_a_rewrite_that_does_not_compile_is_never_written(run_cli, tmp_path: Path, monkeypatch) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    before = python_sources(project)
    broken = "def {0}(name, executor):\n    return await executor\n"  # parses, but Python will not compile it
    monkeypatch.setattr(_codegen, "gate_wrapper", lambda name, *args: broken.format(name))
    result = run_cli(project, "--fix")
    assert result.exit_code == 2
    assert "taskbot/builtin.py: the rewritten module does not parse" in result.stderr
    assert python_sources(project) == before


def test_file_mode_is_kept(run_cli, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    builtin = project / "taskbot" / "builtin.py"
    builtin.chmod(0o750)
    assert run_cli(project, "--fix").exit_code == 0
    assert stat.S_IMODE(builtin.stat().st_mode) == 0o750


def test_unsafe_fixes_wait_for_the_switch(run_cli, tmp_path: Path) -> None:
    case = CASES["fix_unrename"]
    project = copy_project(case.before, tmp_path / "project")
    before = python_sources(project)
    result = run_cli(project, "--fix")
    assert result.exit_code == 1
    assert "DL301" in result.stdout
    assert result.stderr == "1 more fix available with --unsafe-fixes\n"
    assert python_sources(project) == before


def test_exit_code_after_fix_reflects_what_is_left(run_cli, tmp_path: Path) -> None:
    tools = (
        "import json\n\n"
        "from agent.gate import coerce_tool_args\n\n\n"
        "def plan(args):\n    return args\n\n\n"
        "TOOLS = {'plan': plan}\n"
        "A = B = {'plan': plan}  # two names for one table: not fixed automatically\n\n\n"
        "def run(call):\n"
        "    name = call.function.name\n"
        "    args = json.loads(call.function.arguments)\n"
        "    TOOLS[name](args)\n"
        "    return A[name](args)\n\n\n"
        "def run_gated(name, args):\n"
        "    return TOOLS[name](coerce_tool_args(name, args))\n"
    )
    gate = "def coerce_tool_args(tool_name, args):\n    return dict(args)\n"
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/gate.py": gate, "agent/tools.py": tools})
    result = run_cli(project, "--fix", "--format", "json")
    assert result.exit_code == 1
    assert "Rewriting agent/tools.py: wrap `TOOLS` with `coerce_tool_args`" in result.stderr
    fixed = (project / "agent" / "tools.py").read_text(encoding="utf-8")
    left = fixed.splitlines().index("    return A[name](args)") + 1
    assert [(f["code"], f["line"], f["fixable"]) for f in result.findings()] == [("DL101", left, False)]
    assert "_RAW_TOOLS = {'plan': plan}\n" in fixed and "A = B = {'plan': plan}  # two names" in fixed


def test_no_schema_source_means_no_fix_and_says_what_to_configure(run_cli, tmp_path: Path) -> None:
    project = copy_project(FIXTURES / "no_gate_project", tmp_path / "project")
    findings = run_cli(project, "--select", "DL102", "--format", "json").findings()
    assert findings and not any(f["fixable"] for f in findings)
    assert all('schemas = "module:NAME"' in f["fix_help"] for f in findings)


def test_configured_schema_source_is_used(run_cli, tmp_path: Path) -> None:
    files = {
        "bot/__init__.py": "",
        "bot/specs.py": "SPECS = [{'name': 'add', 'parameters': {'type': 'object', 'properties': {}}}]\n"
        "BY_NAME = {spec['name']: spec['parameters'] for spec in SPECS}\n",
        "bot/tools.py": (
            "import json\n\n"
            "def add(a, b):\n    return a + b\n\n"
            "TOOLS = {'add': add}\n\n"
            "def run(name, raw):\n    return TOOLS[name](**json.loads(raw))\n"
        ),
    }
    project = write_project(tmp_path, files, {"schemas": "bot.specs:BY_NAME"})
    result = run_cli(project, "--select", "DL102", "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    fixed = (project / "bot" / "tools.py").read_text(encoding="utf-8")
    assert "from bot.specs import BY_NAME" in fixed
    assert "_RAW_TOOLS = {'add': add}\nTOOLS = wrap_table(_RAW_TOOLS, BY_NAME)\n" in fixed


def test_each_app_is_wrapped_with_its_own_schema_table(run_cli, tmp_path: Path) -> None:
    """Two apps of one repository with the same tool names and no gate: each table is wrapped with the schema
    table of its own app, never the other's (which would tie the apps together with an import)."""
    files = {}
    for app in ("app_a", "app_b"):
        files[f"{app}/__init__.py"] = ""
        files[f"{app}/specs.py"] = (
            "NUMBER = {'type': 'integer'}\n"
            "SCHEMAS = {'add': {'type': 'object', 'properties': {'a': NUMBER, 'b': NUMBER}}}\n"
        )
        files[f"{app}/tools.py"] = (
            "import json\n\n"
            "def add(a, b):\n    return a + b\n\n"
            "TOOLS = {'add': add}\n\n"
            "def run(name, raw):\n    return TOOLS[name](**json.loads(raw))\n"
        )
    project = write_project(tmp_path, files)
    result = run_cli(project, "--select", "DL102", "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    for app in ("app_a", "app_b"):
        fixed = (project / app / "tools.py").read_text(encoding="utf-8")
        assert f"from {app}.specs import SCHEMAS" in fixed, fixed
        assert "TOOLS = wrap_table(_RAW_TOOLS, SCHEMAS)" in fixed, fixed
        # the fixed tool now gets repaired arguments: the model's "2" and "3" arrive as numbers
        call = f'from {app}.tools import run; print(run(\'add\', \'{{"a": "2", "b": "3"}}\'))'
        done = subprocess.run([sys.executable, "-c", call], capture_output=True, text=True, env=subprocess_env(project))
        assert done.stdout.strip() == "5", done.stderr


def test_a_parse_the_schema_does_not_cover_stays_and_the_finding_says_why(run_cli, tmp_path: Path) -> None:
    files = {
        "agent/__init__.py": "",
        "agent/gate.py": "def coerce_tool_args(tool_name, args):\n    return dict(args)\n",
        "agent/tools.py": (
            "import json\n\n"
            "SCHEMAS = {'plan': {'type': 'object', 'properties': {'steps': {'type': 'array'}}}}\n\n"
            "def plan(args):\n"
            "    steps = json.loads(args['steps'])\n"
            "    extra = json.loads(args['extra'])\n"
            "    return steps, extra\n\n"
            "TOOLS = {'plan': plan}\n"
        ),
        "agent/loop.py": (
            "from agent.gate import coerce_tool_args\nfrom agent.tools import TOOLS\n\n"
            "def run(name, args):\n    return TOOLS[name](coerce_tool_args(name, args))\n"
        ),
    }
    project = write_project(tmp_path, files)
    findings = {f["line"]: f for f in run_cli(project, "--format", "json").findings()}
    assert findings[6]["fixable"] and not findings[7]["fixable"]
    assert findings[7]["fix_help"] == "no automatic fix: no schema of `plan` declares `extra`"
    run_cli(project, "--fix")
    fixed = (project / "agent" / "tools.py").read_text(encoding="utf-8")
    assert "    steps = args['steps']\n    extra = json.loads(args['extra'])\n" in fixed


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("pre-commit") is None, reason="pre-commit is not installed")
def test_pre_commit_hooks_in_a_real_repository(tmp_path: Path) -> None:
    """``pre-commit try-repo`` installs this repository's hooks and runs them on a fresh git repository."""
    hooks = tmp_path / "hooks"
    shutil.copytree(REPO, hooks, ignore=shutil.ignore_patterns(".git", ".venv", "*.egg-info", "__pycache__", ".*cache"))
    project = copy_project(FIXTURES / "example", tmp_path / "project")
    for repository in (hooks, project):
        git = ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci"]
        subprocess.run(["git", "init", "-q"], cwd=repository, check=True)
        subprocess.run(["git", "add", "-A"], cwd=repository, check=True)
        subprocess.run(git + ["commit", "-qm", "init"], cwd=repository, check=True)

    def hook(name: str) -> subprocess.CompletedProcess:
        command = ["pre-commit", "try-repo", str(hooks), name, "--all-files"]
        environment = {**os.environ, "PYTHONPATH": ""}
        return subprocess.run(command, cwd=project, capture_output=True, text=True, env=environment)

    check = hook("dispatchlint")
    assert check.returncode == 1 and "DL101" in check.stdout
    fix = hook("dispatchlint-fix")
    assert fix.returncode == 1 and "files were modified by this hook" in fix.stdout
    assert (project / "taskbot" / "builtin.py").read_bytes() == EXAMPLE_FIXED.read_bytes()
    assert hook("dispatchlint").returncode == 0


def _tools_module(gate_import: str, gate_call: str) -> str:
    return (
        f"import json\n\n{gate_import}\n\n\n"
        "def coerce_tool_args(text):\n    return text.strip()\n\n\n"
        "def plan(args):\n    return args\n\n\n"
        "TOOLS = {'plan': plan}\n\n\n"
        "def run(call):\n"
        "    name = call.function.name\n"
        "    return TOOLS[name](json.loads(call.function.arguments))\n\n\n"
        f"def run_gated(name, args):\n    return TOOLS[name]({gate_call}(name, args))\n"
    )


@pytest.mark.parametrize("aliased", [True, False], ids=["gate-imported-under-another-name", "gate-name-taken"])
def test_the_wrapper_uses_the_gate_under_the_module_own_name(aliased: bool, run_cli, tmp_path: Path) -> None:
    gate_import = "from agent.gate import coerce_tool_args as repair" if aliased else "import agent.gate"
    tools = _tools_module(gate_import, "repair" if aliased else "agent.gate.coerce_tool_args")
    gate = "def coerce_tool_args(tool_name, args):\n    return dict(args)\n"
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/gate.py": gate, "agent/tools.py": tools})
    findings = run_cli(project, "--format", "json").findings()
    assert [(f["code"], f["fixable"]) for f in findings] == [("DL101", aliased)]
    result = run_cli(project, "--fix")
    fixed = (project / "agent" / "tools.py").read_text(encoding="utf-8")
    if aliased:
        assert result.exit_code == 0 and "        return call(repair(name, args))\n" in fixed
    else:
        assert result.exit_code == 1 and fixed == tools


def test_a_file_changed_after_the_analysis_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "tools.py"
    path.write_bytes(b"TOOLS = {}  # saved by an editor meanwhile\n")
    with pytest.raises(FixError, match="changed while it was being fixed"):
        write_all({path: (b"TOOLS = {}\n", b"TOOLS = dict()\n")})
    assert path.read_bytes() == b"TOOLS = {}  # saved by an editor meanwhile\n"


def test_a_chain_resumed_after_an_arm_of_another_kind_is_coerced_once_ahead_of_the_ladder(
    run_cli, tmp_path: Path
) -> None:
    """``elif self.manager.has_tool(name):`` between two name arms: both name chains share one if statement, so
    one coercion goes ahead of the whole statement (it used to crash the fix planner)."""
    loop = (
        "import json\n\nfrom agent.gate import handle_function_call\n\n\n"
        "def clarify(question):\n    return question\n\n\n"
        "class Agent:\n"
        "    def __init__(self, manager):\n        self.manager = manager\n\n"
        "    def _invoke_tool(self, name, raw):\n"
        "        args = json.loads(raw)\n"
        "        if name == 'todo':\n            return list(args['todos'])\n"
        "        elif self.manager and self.manager.has_tool(name):\n            return self.manager.call(name, args)\n"
        "        elif name == 'clarify':\n            return clarify(question=args.get('question'))\n"
        "        else:\n            return handle_function_call(name, args)\n"
    )
    gate = (
        "def coerce_tool_args(tool_name, args):\n    return dict(args)\n\n\n"
        "def handle_function_call(tool_name, args):\n"
        "    args = coerce_tool_args(tool_name, args)\n    return {'tool': tool_name, 'args': args}\n"
    )
    project = write_project(tmp_path, {"agent/__init__.py": "", "agent/gate.py": gate, "agent/loop.py": loop})
    assert {code for code, _ in run_cli(project, "--format", "json").locations()} == {"DL101"}
    result = run_cli(project, "--fix")
    assert result.exit_code == 0, result.stdout + result.stderr
    fixed = (project / "agent" / "loop.py").read_text(encoding="utf-8")
    assert fixed.count("args = coerce_tool_args(name, args)") == 1
    assert fixed.index("args = coerce_tool_args(name, args)") < fixed.index("if name == 'todo':")
    compile(fixed, "loop.py", "exec")
