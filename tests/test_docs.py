"""The documents a user reads cannot drift from the code: every configuration key is in the reference, every
relative link resolves, the changelog and the license match what the package declares."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from typing import Any, Dict

from conftest import REPO
from dispatchlint import __version__
from dispatchlint.config import _KNOWN_KEYS
from dispatchlint.report.reference import REFERENCE_URL, rule_docs
from dispatchlint.rules import rule_pages

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DOCUMENTS = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]


def test_the_configuration_reference_documents_every_key() -> None:
    reference = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z-]+)` \|", reference, flags=re.MULTILINE))
    assert documented == set(_KNOWN_KEYS)


def test_relative_links_resolve() -> None:
    for document in DOCUMENTS:
        for target in re.findall(r"\]\(([\w./:-]+)(?:#[\w-]*)?\)", document.read_text(encoding="utf-8")):
            if "://" not in target and set(target) != {"."}:  # `T[...](...)` in a code span is no link
                assert (document.parent / target).exists(), f"{document.name} links to missing {target}"


def test_the_changelog_names_the_version_and_the_license_the_package_declares() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert f"## [{__version__}]" in (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert project["version"] == __version__
    license_text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert project["license"]["text"] == "MIT" and license_text.startswith("MIT License")
    assert "the dispatchlint authors" in license_text


def test_no_document_points_to_a_design_file_the_repository_does_not_hold() -> None:
    for path in [*DOCUMENTS, *(REPO / "dispatchlint").rglob("*.py")]:
        assert "DESIGN" not in path.read_text(encoding="utf-8"), path


#: A documented reference to a release: a pre-commit ``rev``, a pip ``@ref`` of the repository, a ``blob/ref``
#: of a rule URL.
_RELEASE_REFERENCE = re.compile(r"(?:rev:\s*|dispatchlint@|/blob/)v(\d+\.\d+\.\d+)")


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lowercase, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_documented_reference_names_this_release_and_every_rule_url_its_section() -> None:
    """The pre-commit ``rev``, the workflow's ``pip install ...@v...`` and each rule's ``helpUri`` name the
    version the package declares, and each rule URL's anchor is a section of the rule reference; once the
    changelog dates the release, its tag exists in a full clone."""
    documents = [*DOCUMENTS, REPO / "docs" / "github-actions.yml"]
    referenced = {
        (document.name, version)
        for document in documents
        for version in _RELEASE_REFERENCE.findall(document.read_text(encoding="utf-8"))
    }
    assert {name for name, _ in referenced} >= {"README.md", "github-actions.yml"}
    assert {version for _, version in referenced} == {__version__}, referenced
    rules_md = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    anchors = {_github_anchor(heading) for heading in re.findall(r"^## (.+)$", rules_md, flags=re.MULTILINE)}
    for doc in rule_docs(rule_pages()).values():
        page, _, anchor = doc.url.partition("#")
        assert page == REFERENCE_URL and f"/blob/v{__version__}/docs/rules.md" in page
        assert anchor in anchors, f"{doc.code}'s URL points at no section of docs/rules.md: #{anchor}"
    released = re.search(rf"^## \[{re.escape(__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", _changelog(), re.M)
    if released and (REPO / ".git").is_dir() and shutil.which("git"):
        shallow = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], **_CAPTURE)
        if shallow.stdout.strip() == "false":
            tag = subprocess.run(
                ["git", "-C", str(REPO), "rev-parse", "--verify", f"v{__version__}^{{commit}}"], **_CAPTURE
            )
            assert tag.returncode == 0, f"the changelog dates {__version__}, but the tag v{__version__} is missing"


_CAPTURE: Dict[str, Any] = {"capture_output": True, "text": True, "check": False}


def _changelog() -> str:
    return (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
