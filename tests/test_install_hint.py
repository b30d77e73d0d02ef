"""Missing-extra messages name a command that works for this installation (issue 23)."""

from __future__ import annotations

import json
from importlib import metadata

import pytest

from joulesim.console import install_hint as hint_module
from joulesim.console.install_hint import install_hint


class _Distribution:
    def __init__(self, direct_url: dict | None) -> None:
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.direct_url is None else json.dumps(self.direct_url)


@pytest.fixture
def installed_from(monkeypatch):
    def install(direct_url: dict | None) -> None:
        monkeypatch.setattr(metadata, "distribution", lambda name: _Distribution(direct_url))
        hint_module._checkout_folder.cache_clear()

    yield install
    hint_module._checkout_folder.cache_clear()


def test_a_checkout_install_names_its_folder(installed_from):
    installed_from({"url": "file:///home/me/my%20joulesim", "dir_info": {}})
    assert install_hint("plot") == "pip install '/home/me/my joulesim[plot]'"


@pytest.mark.parametrize("direct_url", [
    None,  # installed from an index
    {"url": "file:///tmp/joulesim-0.1.0-py3-none-any.whl", "archive_info": {}},
    {"url": "https://example.org/joulesim.git", "vcs_info": {"vcs": "git"}},
])
def test_other_installs_name_the_package_and_the_checkout_form(installed_from, direct_url):
    installed_from(direct_url)
    assert install_hint("rl") == "pip install 'joulesim[rl]' (from a joulesim checkout: pip install '.[rl]')"


def test_this_test_run_gets_a_command_that_names_the_extra():
    hint_module._checkout_folder.cache_clear()
    assert install_hint("learn").startswith("pip install '") and "[learn]'" in install_hint("learn")
