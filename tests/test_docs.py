"""The documents a user reads cannot drift from the code: every configuration key is in the reference, every
relative link resolves, the changelog and the license match what the package declares."""

from __future__ import annotations

import re
import sys

from conftest import REPO
from dispatchlint import __version__
from dispatchlint.config import _KNOWN_KEYS

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
