"""Accuracy on whole public agent code bases: ``python bench/realworld.py --repos DIR [--show] [--only NAME]``.

``bench/realworld/manifest.json`` pins each repository to a commit; ``bench/realworld/truth/<owner>__<name>.json``
holds its ground truth, written from reading the code before the linter ran on it:

- ``required``: a real defect a finding of ``code`` must report, its line within ``lines`` of ``path``;
- ``wrong``: a place where a finding of one of ``codes`` would be a false positive (a look-alike);
- ``acceptable``: debatable; a finding there counts neither way;
- ``judged``: findings outside every labelled place, judged after reading them (``verdict`` right or wrong).

Each repository is expected, unpacked at its pinned commit, in ``DIR/<owner>__<name>`` (or ``DIR/<name>``
for an entry that names itself: the same repository at several commits; see ``bench/realworld/README.md``).
The linter runs twice per repository, with the default rules and with ``--select ALL`` (one analysis: the
default rules' findings are the ALL run's without the opt-in codes); the table gives required found, false
positives, findings no label covers (``unjudged``: read them, then judge them) and the time of the run. Opt-in
codes count only in the ALL run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from dispatchlint.plan import RunOptions

from dispatchlint.engine import analyse
from dispatchlint.findings import Finding
from dispatchlint.rules import all_rules

HERE = Path(__file__).resolve().parent / "realworld"
OPT_IN = {code for code, rule in all_rules().items() if not rule.default}


@dataclass(frozen=True)
class Label:
    kind: str
    codes: Tuple[str, ...]
    path: str
    first: int
    last: int
    why: str
    #: Written for the default rules only (the labelled cases' convention): a finding of an opt-in code there
    #: is not judged by it.
    default_rules: bool = False

    def covers(self, finding: Finding) -> bool:
        return (
            not (self.default_rules and finding.code in OPT_IN)
            and self.path in (finding.path, "*")
            and self.first <= finding.span.line <= self.last
            and (not self.codes or finding.code in self.codes)
        )


@dataclass
class Score:
    required: int = 0
    found: int = 0
    true_positives: int = 0
    false_positives: int = 0
    neutral: int = 0
    unjudged: List[Finding] = field(default_factory=list)
    wrong: List[Tuple[Finding, str]] = field(default_factory=list)
    missed: List[Label] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, other: "Score") -> None:
        self.required += other.required
        self.found += other.found
        self.true_positives += other.true_positives
        self.false_positives += other.false_positives
        self.neutral += other.neutral
        self.unjudged.extend(other.unjudged)
        self.seconds += other.seconds


def load_labels(truth: Mapping[str, Any]) -> List[Label]:
    labels = []
    for entry in list(truth.get("labels", [])) + list(truth.get("judged", [])):
        # a finding judged right after the run is a true positive, but not a label the run is scored against
        kind = entry.get("kind") or ("right" if entry.get("verdict") == "right" else "wrong")
        codes = tuple(entry.get("codes") or ([entry["code"]] if "code" in entry else []))
        first, last = entry["lines"]
        default_rules = entry.get("rules") == "default"
        labels.append(Label(kind, codes, entry["path"], int(first), int(last), entry.get("why", ""), default_rules))
    return labels


def score(findings: Sequence[Finding], labels: Sequence[Label], select_all: bool) -> Score:
    """DL001 (a file Python rejects) is not scored: it says nothing about tool calls."""
    findings = [finding for finding in findings if finding.code != "DL001"]
    result = Score()
    counted = [label for label in labels if label.kind == "required" and (select_all or not set(label.codes) & OPT_IN)]
    result.required = len(counted)
    found = set()
    for finding in findings:
        hit = next((label for label in counted if label.covers(finding)), None)
        if hit is not None:
            found.add(id(hit))
            result.true_positives += 1
            continue
        if any(label.kind == "right" and label.covers(finding) for label in labels):
            result.true_positives += 1
            continue
        wrong = next((label for label in labels if label.kind == "wrong" and label.covers(finding)), None)
        if wrong is not None:
            result.false_positives += 1
            result.wrong.append((finding, wrong.why))
        elif any(label.kind in ("acceptable", "required") and label.covers(finding) for label in labels):
            result.neutral += 1  # debatable, or a required place found by a finding of another code
        else:
            result.unjudged.append(finding)
    result.found = len(found)
    result.missed = [label for label in counted if id(label) not in found]
    return result


def run(repo_dir: Path, use_cache: bool) -> Tuple[List[Finding], float]:
    """Every rule's findings (a rule's findings do not depend on which other rules run) and the wall time."""
    started = time.perf_counter()
    results = analyse([repo_dir], RunOptions(select=("ALL",), use_cache=use_cache, jobs=2), cwd=repo_dir)
    return [finding for result in results for finding in result.findings], time.perf_counter() - started


#: The parts of the benchmark reported apart: the blind part is chosen and labelled by people who have not read
#: the linter's code, and is scored once, at the end of a change.
GROUPS = {
    "original": "first 30 repositories",
    "added": "repositories added with their labels (issue 18)",
    "seen": "blind parts, after their one scoring",
    "blind": "blind part",
}


def group_of(entry: Mapping[str, Any]) -> str:
    if entry.get("blind"):
        return "blind"
    if entry.get("blind_scored"):
        return "seen"
    return "added" if entry.get("added") else "original"


def print_totals(title: str, totals: Mapping[bool, Score]) -> None:
    for select_all, rules in ((False, "default rules"), (True, "--select ALL")):
        total = totals[select_all]
        positives = total.true_positives + total.false_positives
        print(
            f"{title}, {rules}: recall {percent(total.found, total.required)} ({total.found}/{total.required}), "
            f"precision {percent(total.true_positives, positives)} ({total.true_positives}/{positives}), "
            f"{len(total.unjudged)} unjudged"
        )


def percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, required=True, help="folder holding <owner>__<name> checkouts")
    parser.add_argument("--only", action="append", default=[], help="score only repositories containing this")
    parser.add_argument("--show", action="store_true", help="list missed labels, false and unjudged findings")
    parser.add_argument(
        "--cache", action="store_true", help="keep facts in the user cache folder (faster reruns)"
    )
    parser.add_argument(
        "--blind", action="store_true", help="score the blind part too (once, at the end of a change: see README)"
    )
    options = parser.parse_args(argv)
    manifest = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
    groups: Dict[str, Dict[bool, Score]] = {}
    print("| repository | gate | required found (default) | FP (default) | required found (ALL) | FP (ALL) | "
          "unjudged | time (s) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    missing = []
    crashed: List[str] = []
    for entry in manifest["repositories"]:
        slug = entry.get("name") or entry["repo"].replace("/", "__")
        if options.only and not any(part in slug for part in options.only):
            continue
        if entry.get("blind") and not options.blind:
            continue
        totals = groups.setdefault(group_of(entry), {False: Score(), True: Score()})
        checkout = options.repos / slug
        truth = json.loads((HERE / "truth" / f"{slug}.json").read_text(encoding="utf-8"))
        if truth["commit"] != entry["commit"]:
            raise SystemExit(f"{slug}: truth is for {truth['commit']}, manifest pins {entry['commit']}")
        if not checkout.is_dir():
            missing.append(slug)
            continue
        labels = load_labels(truth)
        try:
            findings, seconds = run(checkout, options.cache)
        except Exception as error:  # noqa: BLE001 - a crash scores as no findings, and is said
            print(f"| {slug} | crashed: {type(error).__name__} | | | | | | |")
            crashed.append(slug)
            findings, seconds = [], 0.0
        scores = {}
        for select_all in (False, True):
            shown = [finding for finding in findings if select_all or finding.code not in OPT_IN]
            scores[select_all] = score(shown, labels, select_all)
            scores[select_all].seconds = seconds if select_all else 0.0
            totals[select_all].add(scores[select_all])
        default, every = scores[False], scores[True]
        unjudged = {(f.code, f.path, f.span.line) for f in default.unjudged + every.unjudged}
        print(
            f"| {slug} | {'yes' if truth.get('gate') else 'no'} | {default.found}/{default.required} | "
            f"{default.false_positives} | {every.found}/{every.required} | {every.false_positives} | "
            f"{len(unjudged)} | {every.seconds:.1f} |"
        )
        if options.show:
            for label in every.missed:
                print(f"    missed   {label.codes} {label.path}:{label.first}-{label.last}  {label.why}")
            for finding, why in every.wrong:
                print(f"    wrong    {finding.code} {finding.path}:{finding.span.line}  {finding.message}  [{why}]")
            for finding in every.unjudged:
                print(f"    unjudged {finding.code} {finding.path}:{finding.span.line}  {finding.message}")
    print()
    everything = {False: Score(), True: Score()}
    for group, totals in sorted(groups.items()):
        for select_all in (False, True):
            everything[select_all].add(totals[select_all])
        print_totals(GROUPS[group], totals)
    if len(groups) > 1:
        print_totals("all repositories", everything)
    print(f"analysis time: {everything[True].seconds:.1f} s")
    if crashed:
        print(f"crashed (scored as no findings): {', '.join(crashed)}")
    if missing:
        print(f"not found under {options.repos}: {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
