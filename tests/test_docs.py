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


def test_readme_library_examples_run_as_written(tmp_path, monkeypatch):
    """The README's Python examples, run as written (no name given to them: one used a name it
    never defined) in a folder holding a bundled export as the file they name."""
    blocks = re.findall(r"```python\n(.+?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 2, "the README shows its library examples"
    (tmp_path / "export.json").write_bytes((ROOT / "corpus" / "continuity" / "03-anthropic-tools.json").read_bytes())
    monkeypatch.chdir(tmp_path)
    scopes: list[dict] = [{}, {}]
    for block, scope in zip(blocks, scopes, strict=False):
        exec(compile(block, "README.md", "exec"), scope)
    assert scopes[0]["session_bytes"].startswith(b"{") and isinstance(scopes[0]["losses"], list)
    assert (tmp_path / "session.asif.json").is_file()


def test_docs_links_resolve():
    """Every relative link of the README, CONTRIBUTING.md and docs/ names a file that exists."""
    for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which does not exist"
