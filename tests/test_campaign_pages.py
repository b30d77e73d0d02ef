"""`joulesim campaign report --html`: a page per instance whose files were kept, and an index."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from joulesim.campaign.runner import run_campaign
from joulesim.protocol.errors import JoulesimError

from test_campaign import RUNS, cli, write_study

pytest.importorskip("bokeh", reason="the report extra is not installed (pip install '.[report]')")


def test_each_kept_instance_gets_a_page_linked_from_the_index(tmp_path):
    study = write_study(tmp_path, RUNS.replace('name = "basic"', 'name = "basic"\noutputs = true'))
    assert run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False).failed == []
    done = cli("report", "res", "-o", "plots", "--html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(tmp_path / "res" / "results.csv")
    index = (tmp_path / "plots" / "index.html").read_text()
    links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', index)
    assert sorted(name for _, name in links) == sorted(table["instance_id"])
    for target, name in links:
        page = (tmp_path / "plots" / target).read_text()
        assert target == f"instances/{name}.html" and "Bokeh" in page and f"{name}: decider" in page
    assert "t_idle" in index and "decider" in index  # the parameters that vary are columns
    assert "plots/index.html" in done.stdout.splitlines()


def test_a_campaign_that_kept_no_files_is_one_line(tmp_path):
    study = write_study(tmp_path, RUNS)
    run_campaign(str(study), str(tmp_path / "res"), workers=2, progress=False)
    done = cli("report", "res", "-o", "plots", "--html", cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "set 'outputs = true' in the study's [campaign] table" in done.stderr
    assert not (tmp_path / "plots" / "index.html").exists()
    with pytest.raises(JoulesimError, match="no instance kept its output files"):
        from joulesim.campaign.instance_pages import write_instance_pages

        write_instance_pages(str(tmp_path / "res"), str(tmp_path / "plots"))
