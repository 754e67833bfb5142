"""The README's two commands stay true: CI runs the test command exactly as written."""

from __future__ import annotations

import re

from .conftest import ROOT


def readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.+?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"))[:2]


def test_readme_opens_with_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    install_run, test = readme_commands()
    assert text.index(install_run) < 200
    assert "from-continuity corpus/" in install_run and "pytest" in test


def test_ci_runs_the_readme_test_command():
    _, test = readme_commands()
    assert test in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def test_readme_corpus_file_exists():
    install_run, _ = readme_commands()
    path = re.search(r"(corpus/\S+\.json)", install_run).group(1)
    assert (ROOT / path).is_file()
