"""What the informational options print, as text or JSON: ``--list-rules``, ``--explain``, ``--show-files``,
``--show-settings``, and ``--statistics``."""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Mapping, Sequence

from dispatchlint.findings import Finding
from dispatchlint.report._payload import RuleDoc
from dispatchlint.report._visible import visible

if TYPE_CHECKING:  # the engine imports the report package's neighbours; only its types are needed here
    from dispatchlint.plan import RunPlan

_VERSION = 1


def _json(payload: Dict[str, Any]) -> str:
    return json.dumps({"version": _VERSION, **payload}, indent=2) + "\n"


def render_rule_list(rules: Mapping[str, RuleDoc], machine: bool) -> str:
    if machine:
        listed = [
            {"code": code, "name": rule.name, "default": rule.default, "summary": rule.description}
            for code, rule in rules.items()
        ]
        return _json({"rules": listed})
    lines = [f"{code}  {rule.name:<24} {'default' if rule.default else 'opt-in'}" for code, rule in rules.items()]
    return "\n".join(lines) + "\n"


def render_explanation(rule: RuleDoc, machine: bool) -> str:
    if machine:
        return _json(
            {"code": rule.code, "name": rule.name, "default": rule.default, "documentation": rule.documentation}
        )
    return f"# {rule.code} {rule.name}\n\n{rule.documentation}\n"


def render_statistics(findings: Sequence[Finding], rules: Mapping[str, RuleDoc], machine: bool) -> str:
    """How many findings of each rule, and how many of them ``--fix`` can fix (``[*]``, as Ruff marks them)."""
    counts = Counter(finding.code for finding in findings)
    fixable = Counter(finding.code for finding in findings if finding.fixable)
    if machine:
        listed = [
            {"code": code, "name": rules[code].name, "count": counts[code], "fixable": fixable[code]}
            for code in sorted(counts)
        ]
        return _json({"statistics": listed})
    marks = {code: "[*] " if fixable[code] else "    " for code in counts}
    return "".join(f"{counts[code]:>5}  {code}  {marks[code]}{rules[code].name}\n" for code in sorted(counts))


def _shown(path: Path, cwd: Path) -> str:
    return Path(os.path.relpath(path, cwd)).as_posix()


def render_files(plans: Sequence["RunPlan"], cwd: Path, machine: bool) -> str:
    """Every file the run analyses, in every project; those outside the given paths are analysed (for linking)
    but not reported."""
    files = sorted(
        ((source, plan.reported(source)) for plan in plans for source in plan.files),
        key=lambda item: _shown(item[0].path, cwd),
    )
    if machine:
        listed = [{"path": _shown(s.path, cwd), "module": s.module, "reported": reported} for s, reported in files]
        return _json({"files": listed})
    return "".join(
        visible(_shown(source.path, cwd)) + ("" if reported else "  (analysed, not reported)") + "\n"
        for source, reported in files
    )


def settings_of(plan: "RunPlan") -> Dict[str, Any]:
    """The resolved settings: where they come from, then every configuration key with its value."""
    config = plan.config
    settings: Dict[str, Any] = {
        "root": str(plan.root),
        "config": str(plan.config_source) if plan.config_source else None,
        "cache": str(plan.cache) if plan.cache else None,
        "rules": list(plan.rules),
    }
    for item in dataclasses.fields(config):
        if item.name == "origin":
            continue  # where the keys are written: "config" above
        value = getattr(config, item.name)
        if item.name == "per_file_ignores":
            value = {pattern: list(codes) for pattern, codes in value}
        elif isinstance(value, tuple):
            value = list(value)
        settings[item.name.replace("_", "-")] = value
    return settings


def render_settings(plans: Sequence["RunPlan"], machine: bool) -> str:
    """Each project's settings (one project per root the paths lie in), as TOML-like text or JSON."""
    if machine:
        return _json({"projects": [settings_of(plan) for plan in plans]})
    blocks = []
    for plan in plans:
        lines = []
        for key, value in settings_of(plan).items():
            if value is None:
                lines.append(f"# {key}: none")
            elif isinstance(value, dict):
                table = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items())
                lines.append(f"{key} = {{ {table} }}" if table else f"{key} = {{}}")
            else:
                lines.append(f"{key} = {json.dumps(value)}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)
