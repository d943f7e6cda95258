"""``--format sarif``: SARIF 2.1.0, as GitHub code scanning accepts it (one run, rules with their help)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Sequence

from dispatchlint import __version__
from dispatchlint.rules import Finding, Related, all_rules

_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _region(item: "Finding | Related") -> Dict[str, Any]:
    span = item.span
    return {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
    }


def _location(item: "Finding | Related") -> Dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": item.path}, "region": _region(item)}}


def _rules() -> List[Dict[str, Any]]:
    described = []
    for code, rule in all_rules().items():
        documentation = rule.documentation()
        summary = documentation.split("## Why is this bad?")[0].replace("## What it does", "").strip()
        described.append(
            {
                "id": code,
                "name": rule.name,
                "shortDescription": {"text": summary.splitlines()[0] if summary else rule.name},
                "fullDescription": {"text": " ".join(summary.split())},
                "help": {"text": documentation, "markdown": documentation},
                "defaultConfiguration": {"level": "error" if rule.default else "warning"},
            }
        )
    return described


def render_sarif(findings: Sequence[Finding]) -> str:
    rules = _rules()
    index = {rule["id"]: number for number, rule in enumerate(rules)}
    results = []
    for finding in findings:
        result: Dict[str, Any] = {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": rules[index[finding.code]]["defaultConfiguration"]["level"],
            "message": {"text": finding.message},
            "locations": [_location(finding)],
        }
        if finding.trace:  # GitHub code scanning shows a code flow step by step
            steps = [{"location": {**_location(item), "message": {"text": item.message}}} for item in finding.trace]
            result["codeFlows"] = [{"threadFlows": [{"locations": steps}]}]
        if finding.related:
            result["relatedLocations"] = [
                {"id": number, **_location(item), "message": {"text": item.message}}
                for number, item in enumerate(finding.related)
            ]
        results.append(result)
    log = {
        "$schema": _SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "dispatchlint", "version": __version__, "rules": rules}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
