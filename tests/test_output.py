"""Machine output that does not depend on the working folder: SARIF locations, fingerprints, rule metadata and
the run's problems; JSON's documentation URLs and errors; GitHub annotation levels; the baseline."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO, subprocess_env, valid_sarif
from dispatchlint.locations import SuppressionScope
from dispatchlint.report._json_text import indented_json
from dispatchlint.report._plain_text import plain_text
from dispatchlint.rules import all_rules

EXAMPLE = FIXTURES / "example"


def _results(log: dict) -> list:
    return log["runs"][0]["results"]


def _uris_and_fingerprints(log: dict) -> list:
    return sorted(
        (item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], item["partialFingerprints"])
        for item in _results(log)
    )


def test_sarif_is_the_same_from_the_root_a_sub_folder_and_above(run_cli) -> None:
    at_root = valid_sarif(run_cli(EXAMPLE, "--format", "sarif").stdout)
    below = valid_sarif(run_cli(EXAMPLE / "taskbot", "--format", "sarif").stdout)
    above = valid_sarif(run_cli(FIXTURES, "--format", "sarif", "example").stdout)
    assert _uris_and_fingerprints(at_root) == _uris_and_fingerprints(below) == _uris_and_fingerprints(above)
    assert {uri for uri, _ in _uris_and_fingerprints(at_root)} == {
        "taskbot/builtin.py",
        "taskbot/loop.py",
        "taskbot/pool.py",
    }
    run = at_root["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": EXAMPLE.resolve().as_uri() + "/"}}
    assert run["columnKind"] == "unicodeCodePoints"
    for item in _results(at_root):
        located = [item["locations"][0]] + item.get("relatedLocations", [])
        located += [
            step["location"] for flow in item.get("codeFlows", []) for step in flow["threadFlows"][0]["locations"]
        ]
        assert all(loc["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%" for loc in located)


_LATER = """import json

from taskbot.builtin import BUILTIN_EXECUTORS


def run_later(agent, tool_call, ctx):
    arguments = json.loads(tool_call.function.arguments)
    return BUILTIN_EXECUTORS[tool_call.function.name](agent, arguments, ctx)
"""


def _json_paths(document: dict) -> list:
    return [
        item["path"]
        for finding in document["findings"]
        for item in [finding, *finding["edits"], *finding["related"], *finding["trace"]]
    ] + [error["path"] for error in document["errors"]]


@pytest.mark.parametrize("output_format", ["json", "github"])
def test_json_and_github_output_is_the_same_from_the_root_a_sub_folder_and_above(
    tmp_path: Path, run_cli, output_format: str
) -> None:
    """Their paths are absolute, as Ruff's are in these formats, and the findings come in the order of those paths
    (from ``taskbot/``, ``../zzz/later.py`` would sort before ``builtin.py``)."""
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    (project / "zzz").mkdir()
    (project / "zzz" / "later.py").write_text(_LATER, encoding="utf-8")
    at_root = run_cli(project, "--format", output_format)
    below = run_cli(project / "taskbot", "--format", output_format, "..")
    above = run_cli(tmp_path, "--format", output_format, "example")
    assert at_root.exit_code == below.exit_code == above.exit_code == 1
    assert at_root.stdout == below.stdout == above.stdout
    root = project.resolve().as_posix()
    if output_format == "json":
        document = json.loads(at_root.stdout)
        paths = _json_paths(document)
        assert len(paths) > len(document["findings"]) == 4
        assert all(path.startswith(root + "/") for path in paths), paths
    else:
        files = [line.split("file=", 1)[1].split(",", 1)[0] for line in at_root.stdout.splitlines()]
        assert files == [f"{root}/taskbot/builtin.py", f"{root}/taskbot/loop.py", f"{root}/taskbot/pool.py"] + [
            f"{root}/zzz/later.py"
        ]


def test_sarif_fingerprints_are_stable_across_runs_and_copies(tmp_path: Path, run_cli) -> None:
    copy = tmp_path / "elsewhere" / "example"
    shutil.copytree(EXAMPLE, copy)
    first = valid_sarif(run_cli(EXAMPLE, "--format", "sarif").stdout)
    again = valid_sarif(run_cli(EXAMPLE, "--format", "sarif").stdout)
    moved = valid_sarif(run_cli(copy, "--format", "sarif").stdout)
    assert _uris_and_fingerprints(first) == _uris_and_fingerprints(again) == _uris_and_fingerprints(moved)
    fingerprints = [item["partialFingerprints"]["dispatchlint/v1"] for item in _results(first)]
    assert len(set(fingerprints)) == len(fingerprints) == 3


def test_sarif_uris_are_percent_encoded(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project)
    (project / "taskbot" / "pool.py").rename(project / "taskbot" / "pool runner é.py")
    log = valid_sarif(run_cli(project, "--format", "sarif").stdout)
    uris = {uri for uri, _ in _uris_and_fingerprints(log)}
    assert "taskbot/pool%20runner%20%C3%A9.py" in uris


def test_sarif_rules_carry_sentences_help_and_their_reference_section(run_cli) -> None:
    log = valid_sarif(run_cli(EXAMPLE, "--format", "sarif").stdout)
    reference = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        short, full = rule["shortDescription"]["text"], rule["fullDescription"]["text"]
        assert short[0].isupper() and short.endswith(".") and not short.startswith("Opt-in"), short
        assert full.endswith(".") and short in full
        explained = run_cli(EXAMPLE, "--explain", rule["id"]).stdout
        assert rule["help"]["markdown"].strip() in explained
        page, anchor = rule["helpUri"].split("#")
        assert page.endswith("/docs/rules.md")
        assert f"\n## {rule['id']} {rule['name']}\n" in reference and anchor == f"{rule['id'].lower()}-{rule['name']}"
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert levels["DL101"] == "error" and levels["DL102"] == "warning" and levels["DL401"] == "warning"


def test_sarif_rule_texts_are_plain_text_and_the_markdown_is_kept(run_cli) -> None:
    """A SARIF ``text`` is shown as written: every rule's short description is one sentence, and no ``text``
    carries Markdown (code spans, headings, fences, links); ``help.markdown`` is the page ``--explain`` prints."""
    log = valid_sarif(run_cli(EXAMPLE, "--format", "sarif", "--select", "ALL").stdout)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == list(all_rules())
    for rule in rules:
        short, markdown = rule["shortDescription"]["text"], rule["help"]["markdown"]
        assert short.endswith(".") and not re.search(r"[.!?]\s", short), short
        headings = re.findall(r"^## .+$", markdown, re.MULTILINE)  # the sections of a rule page
        assert "## What it does" in headings and "`" in markdown
        for text in (short, rule["fullDescription"]["text"], rule["help"]["text"]):
            assert "`" not in text and not re.search(r"\]\((https?:|#|\.)", text), text
            assert not set(headings) & set(text.split("\n")), text
        assert markdown.strip() in run_cli(EXAMPLE, "--explain", rule["id"]).stdout
        # the help text says what the page says: each heading's title on its line, each example's code indented
        help_lines = rule["help"]["text"].split("\n")
        assert all(heading[3:] in help_lines for heading in headings), headings
        for block in re.findall(r"^```\w*\n(.*?)^```$", markdown, re.MULTILINE | re.DOTALL):
            assert all(f"    {line}" in help_lines for line in block.splitlines() if line.strip()), block


def test_plain_text_reads_a_link_as_its_text_and_url_but_not_code_that_looks_like_one() -> None:
    markdown = (
        "## Use instead\nSee [the keys](https://example.org/configuration.md#keys); `T[name](args)` is code.\n"
        "```python\n# loop.py\nT[name](**args)\n```\n```toml\n[tool.dispatchlint]\n```"
    )
    assert plain_text(markdown) == (
        "Use instead\nSee the keys (https://example.org/configuration.md#keys); T[name](args) is code.\n"
        "    # loop.py\n    T[name](**args)\n\n    [tool.dispatchlint]"
    )


def _broken_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example with a file that does not parse and one that cannot be read."""
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    (project / "taskbot" / "broken.py").write_text("def broken(:\n    pass\n", encoding="utf-8")
    (project / "taskbot" / "secret.py").write_text("x = 1\n", encoding="utf-8")
    original = os.open

    def failing(path, flags, *args):  # type: ignore[no-untyped-def]
        if Path(path).name == "secret.py":
            raise PermissionError(13, "Permission denied")
        return original(path, flags, *args)

    monkeypatch.setattr(os, "open", failing)
    return project


def test_sarif_invocation_reports_unreadable_and_unparsable_files(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _broken_project(tmp_path, monkeypatch)
    result = run_cli(project, "--format", "sarif")
    assert result.exit_code == 2
    invocation = valid_sarif(result.stdout)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = {
        (note["descriptor"]["id"], note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], note["level"])
        for note in invocation["toolExecutionNotifications"]
    }
    assert notes == {
        ("unreadable-file", "taskbot/secret.py", "error"),
        ("parse-error", "taskbot/broken.py", "warning"),
    }
    clean = valid_sarif(run_cli(EXAMPLE, "--format", "sarif").stdout)["runs"][0]["invocations"][0]
    assert clean == {"executionSuccessful": True, "toolExecutionNotifications": []}


def test_json_reports_the_run_errors_and_each_rule_url(
    tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _broken_project(tmp_path, monkeypatch)
    result = run_cli(project, "--format", "json")
    data = json.loads(result.stdout)
    assert result.exit_code == 2
    assert sorted((error["path"], error["kind"]) for error in data["errors"]) == [
        (f"{project.resolve()}/taskbot/broken.py", "parse-error"),
        (f"{project.resolve()}/taskbot/secret.py", "unreadable-file"),
    ]
    broken = next(error for error in data["errors"] if error["kind"] == "parse-error")
    assert broken["line"] == 1 and broken["message"]
    for finding in data["findings"]:
        assert finding["url"].endswith(f"/docs/rules.md#{finding['code'].lower()}-{finding['name']}")


def test_github_annotation_level_follows_the_rule(run_cli) -> None:
    errors = run_cli(EXAMPLE, "--format", "github").stdout.splitlines()
    assert errors and all(line.startswith(f"::error file={EXAMPLE}/taskbot/") for line in errors)
    notes = run_cli(FIXTURES / "fix_no_gate", "--format", "github", "--select", "DL102").stdout.splitlines()
    agent = FIXTURES / "fix_no_gate" / "tinker" / "agent.py"
    assert len(notes) == 2 and all(line.startswith(f"::warning file={agent},line=") for line in notes)


def test_github_annotates_an_unreadable_file(tmp_path: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _broken_project(tmp_path, monkeypatch)
    lines = run_cli(project, "--format", "github").stdout.splitlines()
    folder = project.resolve() / "taskbot"
    assert any(line.startswith(f"::error file={folder}/secret.py,") and "cannot read" in line for line in lines)
    assert any(line.startswith(f"::error file={folder}/broken.py,") and "DL001" in line for line in lines)


# Baseline ------------------------------------------------------------------------------------------------------


def _with_new_bypass(project: Path) -> None:
    pool = project / "taskbot" / "pool.py"
    pool.write_text(
        pool.read_text(encoding="utf-8")
        + "\n\ndef again(agent, tool_call, ctx):\n"
        + "    arguments = json.loads(tool_call.function.arguments)\n"
        + "    return BUILTIN_EXECUTORS[tool_call.function.name](agent, arguments, ctx)\n",
        "utf-8",
    )


def test_a_baseline_made_at_the_root_holds_in_a_sub_folder(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    baseline = tmp_path / "baseline.json"
    assert run_cli(project, "--baseline", str(baseline), "--update-baseline").exit_code == 0
    below = run_cli(project / "taskbot", "--baseline", str(baseline), "--format", "json")
    assert below.exit_code == 0 and below.findings() == []
    assert "3 findings hidden by the baseline" in below.stderr
    above = run_cli(tmp_path, "--baseline", str(baseline), "--format", "json", "example")
    assert above.exit_code == 0 and above.findings() == []
    _with_new_bypass(project)
    later = run_cli(project / "taskbot", "--baseline", str(baseline), "--format", "json")
    assert [(f["code"], f["path"]) for f in later.findings()] == [("DL101", "pool.py")]
    assert later.exit_code == 1 and "3 findings hidden" in later.stderr


def test_update_baseline_rewrites_it_and_drops_stale_entries(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    baseline = tmp_path / "baseline.json"
    run_cli(project, "--baseline", str(baseline), "--update-baseline")
    builtin = project / "taskbot" / "builtin.py"  # the hand-rolled parse goes: its entry is stale
    builtin.write_text(builtin.read_text(encoding="utf-8").replace("json.loads(steps)", "list(steps)"), "utf-8")
    _with_new_bypass(project)
    updated = run_cli(project, "--baseline", str(baseline), "--update-baseline")
    assert updated.exit_code == 0
    assert "Recorded 3 findings" in updated.stderr and "1 stale entry dropped" in updated.stderr
    recorded = json.loads(baseline.read_text(encoding="utf-8"))["findings"]
    assert sorted(entry["code"] for entry in recorded) == ["DL101", "DL101", "DL101"]
    assert run_cli(project, "--baseline", str(baseline), "--format", "json").findings() == []


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not a dispatchlint baseline (invalid JSON"),
        ('{"findings": []}', "not a dispatchlint baseline (no version)"),
        ('{"version": 7, "findings": []}', "baseline version 7 is not one this dispatchlint reads"),
        ('{"version": 1, "findings": {"a": 1}}', "findings must be a list of fingerprints"),
        ("[]", "not a dispatchlint baseline (no version)"),
    ],
)
def test_a_bad_baseline_is_a_clear_error(tmp_path: Path, run_cli, content: str, message: str) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(content, encoding="utf-8")
    result = run_cli(EXAMPLE, "--baseline", str(baseline))
    assert result.exit_code == 2 and message in result.stderr and "internal error" not in result.stderr
    assert result.stdout == ""


def test_a_baseline_in_a_missing_folder_is_a_clear_error(tmp_path: Path, run_cli) -> None:
    baseline = tmp_path / "missing" / "baseline.json"
    result = run_cli(EXAMPLE, "--baseline", str(baseline), "--update-baseline")
    assert result.exit_code == 2 and f"folder {baseline.parent} does not exist" in result.stderr
    assert "internal error" not in result.stderr


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_a_missing_baseline_is_an_error_that_names_it_and_records_nothing(
    tmp_path: Path, run_cli, output_format: str
) -> None:
    """A mistyped path must not record today's findings and pass every later run: only --update-baseline
    records."""
    baseline = tmp_path / "baselin.json"
    result = run_cli(EXAMPLE, "--baseline", str(baseline), "--format", output_format)
    assert result.exit_code == 2 and result.stdout == ""
    advice = f"record it with --baseline {baseline} --update-baseline"
    assert f"error: {baseline}: the baseline does not exist; {advice}" in result.stderr
    assert "Recorded" not in result.stderr and not baseline.exists()
    assert run_cli(EXAMPLE, "--baseline", str(baseline), "--exit-zero").exit_code == 2


def test_a_missing_baseline_stops_a_fix_before_it_writes(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    before = {path: path.read_bytes() for path in project.rglob("*.py")}
    result = run_cli(project, "--fix", "--baseline", str(tmp_path / "missing.json"))
    assert result.exit_code == 2 and "the baseline does not exist" in result.stderr
    assert {path: path.read_bytes() for path in project.rglob("*.py")} == before


def test_update_baseline_needs_a_baseline(run_cli) -> None:
    result = run_cli(EXAMPLE, "--update-baseline")
    assert result.exit_code == 2 and "--update-baseline needs --baseline FILE" in result.stderr


# Python's own line splitting -----------------------------------------------------------------------------------


def test_a_form_feed_shifts_neither_lines_nor_snippets_nor_suppressions(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    loop = project / "taskbot" / "loop.py"
    source = loop.read_text(encoding="utf-8")
    loop.write_text("# section one\x0c still line one\n\x0c\n" + source, encoding="utf-8")
    lines = loop.read_text(encoding="utf-8").split("\n")
    number = next(n for n, line in enumerate(lines, start=1) if "return fn(agent, args, ctx)" in line)
    text = run_cli(project, "taskbot/loop.py")
    assert f"taskbot/loop.py:{number}:16: DL101" in text.stdout
    assert f"{number} |         return fn(agent, args, ctx)" in text.stdout
    baseline = tmp_path / "baseline.json"
    run_cli(project, "--baseline", str(baseline), "--update-baseline")
    keys = [entry["fingerprint"] for entry in json.loads(baseline.read_text(encoding="utf-8"))["findings"]]
    assert "DL101|taskbot/loop.py|return fn(agent, args, ctx)|1" in keys
    lines[number - 1] += "  # dispatchlint: ignore[DL101]"
    loop.write_text("\n".join(lines), encoding="utf-8")
    assert ("DL101", f"taskbot/loop.py:{number}") not in run_cli(project, "--format", "json").locations()


# Fixes as data ---------------------------------------------------------------------------------------------------


def _apply(project: Path, edits: list) -> None:
    """Apply edits (line ranges, paths relative to ``project``) bottom-up, as a client would."""
    by_file: dict = {}
    for edit in edits:
        by_file.setdefault(edit["path"], []).append(edit)
    for path, items in by_file.items():
        target = project / path
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
        for edit in sorted(items, key=lambda item: item["line"], reverse=True):
            assert edit["column"] == edit["end_column"] == 1
            lines[edit["line"] - 1 : edit["end_line"] - 1] = [edit["replacement"]]
        target.write_text("".join(lines), encoding="utf-8")


def test_json_edits_are_what_fix_writes(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    findings = run_cli(project, "--format", "json").findings()
    dl201 = next(f for f in findings if f["code"] == "DL201")  # deleting the parse brings the table's wrapping
    assert {edit["path"] for edit in dl201["edits"]} == {"taskbot/builtin.py"}
    _apply(project, dl201["edits"])
    expected = (FIXTURES / "fix_example" / "expected_fixed" / "taskbot" / "builtin.py").read_text("utf-8")
    assert (project / "taskbot" / "builtin.py").read_text("utf-8") == expected
    assert all(f["edits"] for f in findings if f["fixable"])


def test_fix_in_json_shows_the_edits_of_the_fixes_it_leaves(tmp_path: Path, run_cli) -> None:
    """The unsafe fix ``--fix`` holds keeps its edits, planned on the code as fixed (what a later run sees): the
    example's safe fixes are written, the unrename gate's unsafe one is left."""
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    shutil.copytree(FIXTURES / "fix_unrename" / "postbox", project / "postbox")
    before = run_cli(project, "--format", "json").findings()
    fixed = run_cli(project, "--fix", "--format", "json")
    assert "Rewriting taskbot/builtin.py" in fixed.stderr
    [left] = [f for f in fixed.findings() if f["fixable"]]
    assert left["code"] == "DL301" and left["fix_safety"] == "unsafe" and left["edits"]
    assert len(before) > len(fixed.findings()) and fixed.findings() == run_cli(project, "--format", "json").findings()


def test_json_edits_are_empty_without_a_fix(run_cli) -> None:
    findings = run_cli(FIXTURES / "fw_langchain_tools", "--format", "json").findings()
    unfixable = [f for f in findings if not f["fixable"]]
    assert unfixable and all(f["edits"] == [] for f in unfixable)


def test_sarif_fixes_carry_the_safe_edits(run_cli) -> None:
    log = valid_sarif(run_cli(EXAMPLE, "--format", "sarif").stdout)
    results = _results(log)
    assert results and all(len(item["fixes"]) == 1 for item in results)
    changes = results[0]["fixes"][0]["artifactChanges"]
    assert [change["artifactLocation"] for change in changes] == [
        {"uri": "taskbot/builtin.py", "uriBaseId": "%SRCROOT%"}
    ]
    inserted = "".join(r["insertedContent"]["text"] for r in changes[0]["replacements"])
    assert "_RAW_BUILTIN_EXECUTORS" in inserted


def test_sarif_leaves_out_unsafe_fixes(run_cli) -> None:
    log = valid_sarif(run_cli(FIXTURES / "fix_unrename", "--format", "sarif").stdout)
    unsafe = [item for item in _results(log) if item["ruleId"] == "DL301"]
    assert unsafe and all("fixes" not in item for item in unsafe)


#: What a report's JSON may hold, awkward where an encoder can go wrong: escapes, a lone surrogate, a line
#: separator, empty and nested containers, tuples, a huge integer, a string enum.
_AWKWARD = {
    'é\u2028"\\\x00\ud800': ["", [], {}, (1, -2), True, False, None, {"nested": [[{}], ()]}],
    "n": 10**30,
    "scope": SuppressionScope.LINE,
}


def test_reports_are_indented_byte_for_byte_as_json_dumps_indents_them(run_cli) -> None:
    assert indented_json(_AWKWARD) == json.dumps(_AWKWARD, indent=2)
    for args in (("--format", "sarif"), ("--format", "json"), ("--select", "ALL", "--format", "json")):
        printed = run_cli(EXAMPLE, *args).stdout
        assert printed == json.dumps(json.loads(printed), indent=2) + "\n"


def test_the_report_stage_imports_neither_the_rules_nor_the_fixer() -> None:
    """Every format is given its data (rules' documentation, fixes as edits); it never asks the stages for it."""
    code = (
        "import sys, dispatchlint.report\n"
        "print(sorted(m for m in sys.modules if m.startswith(('dispatchlint.rules', 'dispatchlint.fix'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


#: A tool name that would start a workflow command on a line of its own.
_WORKFLOW_COMMAND = "plan\\n::error file=owned.py,line=1::owned"
#: What a source line, a file name or a tool name may hold that acts on a terminal: hide the rest (ESC[8m), ring,
#: erase, a C1 CSI, a right-to-left override.
_ATTACKS = "\x1b[8m\x07\x08\x9b2J\u202e"
#: Characters that must never reach the reader raw (a line break ends every line, a tab is a tab).
_CONTROLS = {chr(code) for code in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x202E]} - {"\n", "\t"}


def _hostile_example(tmp_path: Path) -> Path:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    for name in ("builtin.py", "gate.py"):
        path = project / "taskbot" / name
        path.write_text(path.read_text(encoding="utf-8").replace('"plan"', f'"{_WORKFLOW_COMMAND}"'), "utf-8")
    loop = project / "taskbot" / "loop.py"
    text = loop.read_text(encoding="utf-8")
    text = text.replace("return fn(agent, args, ctx)\n", f"return fn(agent, args, ctx)  # {_ATTACKS}\n")
    (project / "taskbot" / f"l{_ATTACKS}oop.py").write_text(text + "# dispatchlint: ignore[DL9]\n", "utf-8")
    return project


@pytest.mark.parametrize(
    "args",
    [(), ("--color", "always"), ("-v",), ("--format", "github"), ("--show-files",), ("--graph",), ("--statistics",)],
)
def test_control_characters_from_the_project_are_shown_as_visible_escapes(
    tmp_path: Path, run_cli, args: tuple
) -> None:
    """Every human format, and the warnings on stderr: no character of a tool name, a file name or a source line
    can start a workflow command or drive the terminal."""
    project = _hostile_example(tmp_path)
    result = run_cli(project, *args)
    output = result.stdout + result.stderr
    if "--color" in args:
        output = output.replace("\x1b[1m", "").replace("\x1b[31m", "").replace("\x1b[0m", "")  # the run's own colours
    assert not _CONTROLS & set(output), sorted(_CONTROLS & set(output))
    assert not any(line.startswith("::error file=owned.py") for line in output.splitlines())
    if args in ((), ("-v",), ("--format", "github")):
        assert "plan␊::error file=owned.py" in output.replace("%3A", ":").replace("%2C", ",")
    if args in ((), ("--show-files",)):
        assert "l␛[8m␇␈\\u009b2J\\u202eoop.py" in output
    if args == ():
        assert "# ␛[8m␇␈\\u009b2J\\u202e" in output and "unknown rule code 'DL9'" in result.stderr


def test_carets_stay_under_the_span_after_escaped_characters(tmp_path: Path, run_cli) -> None:
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    loop = project / "taskbot" / "loop.py"
    text = loop.read_text(encoding="utf-8")
    loop.write_text(text.replace("return fn(agent, args, ctx)\n", 'return "\x9b\x1b" and fn(agent, args, ctx)\n'))
    lines = run_cli(project).stdout.splitlines()
    shown = next(line for line in lines if line.startswith("26 | "))
    carets = lines[lines.index(shown) + 1]
    assert shown == '26 |         return "\\u009b␛" and fn(agent, args, ctx)'
    assert carets.index("^") == shown.index("fn(") and carets.count("^") == len("fn(agent, args, ctx)")


FIXTURES_WITH_FINDINGS = sorted(path for path in FIXTURES.iterdir() if (path / "expected.txt").is_file())


@pytest.mark.parametrize("fixture", FIXTURES_WITH_FINDINGS, ids=lambda path: path.name)
def test_a_message_says_the_effect_and_the_fix_and_the_reason_there_is_none_goes_on_a_help_line(
    fixture: Path, run_cli
) -> None:
    """As Ruff prints it: the message first, then ``help: no automatic fix: ...`` on a line of its own (JSON:
    ``fix_help``; SARIF, GitHub and the editor: the message, then the help line); no message names an empty
    function (a pair of backticks with nothing between them)."""
    findings = run_cli(fixture, "--select", "ALL", "--format", "json").findings()
    text = run_cli(fixture, "--select", "ALL").stdout
    sarif = valid_sarif(run_cli(fixture, "--select", "ALL", "--format", "sarif").stdout)
    sarif_messages = sorted(result["message"]["text"] for result in sarif["runs"][0]["results"])
    annotations = run_cli(fixture, "--select", "ALL", "--format", "github").stdout
    helps = [f["fix_help"] for f in findings if f["fix_help"]]
    assert annotations.count("%0Ahelp: ") == len(helps)  # GitHub's escape of a line break, not a visible "\n"
    for finding in findings:
        assert "no automatic fix" not in finding["message"] and "unsafe fix:" not in finding["message"]
        assert "``" not in finding["message"].replace("```", ""), finding["message"]
        help_line = finding["fix_help"]
        if finding["fixable"] and finding["fix_safety"] == "safe":
            assert help_line is None
        if help_line is not None:
            assert help_line.startswith(("no automatic fix: ", "unsafe fix: "))
            assert f"  help: {help_line}\n" in text
    expected = sorted(f["message"] + (f"\nhelp: {f['fix_help']}" if f["fix_help"] else "") for f in findings)
    assert sarif_messages == expected
