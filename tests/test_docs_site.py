"""The documentation site (issue 47): it builds in MkDocs' strict mode (a broken link, anchor or
API reference fails), its command-line reference covers every command, and the tutorial's code
runs through the public API only and prints what the page shows."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

import joulesim

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = ROOT / "docs" / "tutorial.md"


def build(site: Path, docs: Path | None = None) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the checkout's mkdocs.yml (docs_dir overridden by a copy)."""
    config = ROOT / "mkdocs.yml"
    if docs is not None:  # (a copy of the configuration beside the altered pages)
        text = config.read_text().replace("docs_dir: docs", f"docs_dir: {docs}")
        text = text.replace("  - docs/hooks/package_layout.py", f"  - {ROOT / 'docs' / 'hooks' / 'package_layout.py'}")
        text = text.replace("paths: [build/docs_package]", f"paths: [{ROOT / 'build' / 'docs_package'}]")
        config = docs.parent / "mkdocs.yml"
        config.write_text(text)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    result = build(folder)
    assert result.returncode == 0, result.stderr
    return folder


def command_names(group: click.Group, ctx: click.Context, prefix: str = "joulesim") -> list[str]:
    names = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        names.append(f"{prefix}-{name}")
        if isinstance(command, click.Group):
            names += command_names(command, click.Context(command, parent=ctx), f"{prefix}-{name}")
    return names


def test_the_cli_reference_has_every_command_and_subcommand(site):
    from joulesim.cli.main import main

    page = (site / "reference" / "cli" / "index.html").read_text()
    headings = set(re.findall(r'<h\d id="([^"]+)"', page))
    expected = command_names(main, click.Context(main))
    assert len(expected) > 20 and not set(expected) - headings, set(expected) - headings
    assert "--event-grouping" in page and "--walltime-factor" in page  # options of run and workload generate
    # as `--help` prints them (mkdocs-click's table style shows click 8.3's Sentinel.UNSET as defaults)
    assert "[default: cluster32]" in page and "Sentinel" not in page


def test_the_api_reference_documents_every_public_name(site):
    page = (site / "reference" / "api" / "index.html").read_text()
    for name in joulesim.__all__:
        assert re.search(rf'id="joulesim\.[a-z_]+\.{name}"', page), name
    assert 'id="joulesim.protocol.decider.Decider.execute_job"' in page
    assert "RunTimeLimitError" in page  # simulate's docstring (time_limit), rendered


def test_a_broken_link_fails_the_build(tmp_path):
    import shutil

    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs, ignore=shutil.ignore_patterns("hooks"))
    guide = docs / "guide" / "energy.md"
    guide.write_text(guide.read_text() + "\nSee [the outputs](../reference/outputs.md#no-such-section).\n")
    result = build(tmp_path / "site", docs)
    assert result.returncode != 0 and "no-such-section" in result.stderr


def tutorial_steps() -> list[tuple[str, str | None]]:
    """(code, the output the page shows after it, or None) for each python block, in order."""
    blocks = re.findall(r"```(python|text)\n(.*?)```", TUTORIAL.read_text(), flags=re.S)
    steps: list[tuple[str, str | None]] = []
    for kind, body in blocks:
        if kind == "python":
            steps.append((body, None))
        else:
            assert steps and steps[-1][1] is None, "a text block follows its python block"
            steps[-1] = (steps[-1][0], body)
    return steps


def test_the_tutorial_uses_the_public_api_only():
    code = "\n".join(step for step, _ in tutorial_steps())
    assert re.findall(r"^(?:import|from) .*", code, flags=re.M) == ["import joulesim"]
    used = set(re.findall(r"\bjoulesim\.(\w+)", code))
    assert used and used <= set(joulesim.__all__), used - set(joulesim.__all__)


def test_the_tutorial_runs_and_prints_what_the_page_shows(tmp_path, monkeypatch):
    # (its blocks in order, in one namespace, as notebook cells; in a fresh folder)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    steps = tutorial_steps()
    assert len(steps) >= 6
    for code, shown in steps:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, str(TUTORIAL), "exec"), namespace)
        assert printed.getvalue() == (shown or ""), code
    assert (tmp_path / "tradeoff.png").stat().st_size > 10_000
    page = (tmp_path / "study.html").read_text()
    assert all(name in page for name in ("fcfs", "easy", "conservative"))
    assert len((tmp_path / "lublin300.json").read_bytes()) > 10_000


def test_the_readme_is_a_landing_page_whose_links_all_exist():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 100  # what, install, first run, tests, where to go next
    links = re.findall(r"\]\(((?!https?:)[^)#]+)", text)
    assert len(links) > 20 and all((ROOT / link).exists() for link in links), [
        link for link in links if not (ROOT / link).exists()]
    nav = (ROOT / "mkdocs.yml").read_text()
    for link in links:  # every page the README names is in the site's navigation
        if link.startswith("docs/"):
            assert link.removeprefix("docs/") in nav, link
