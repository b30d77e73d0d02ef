"""One copy of BokehJS shared by the report pages of a folder (`joulesim campaign report --html`).

A page of `joulesim report` inlines BokehJS, so that it is one file that can be mailed; but the
JavaScript is 2.1 MB of a small run's 2.2 MB page, and a campaign's pages each carried their copy
(16 tiny instances: 36 MB). Here the pages load it instead from FOLDER/static/bokeh-VERSION/js/,
by a path relative to each page, so the folder opens from disk with no server and nothing
fetched, and still does once moved or zipped whole. The files are copied from the installed Bokeh
package (the ones `resources=INLINE` would have inlined), and only those a page needs: Bokeh
picks them per page (widgets, tables, WebGL), and none of our pages needs MathJax's 1.8 MB.

Bokeh's own way, documented in bokeh.resources: a `Resources` in mode "relative" gives each file's
path relative to `root_dir` (the page's folder); `base_dir` (where the files are) is the copy.
The version in the folder's name keeps pages written by another Bokeh from loading these files.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from joulesim.inputs.output_file import make_output_folder, write_whole


class SharedBokehJS:
    """The copy of BokehJS in FOLDER/static/bokeh-VERSION/ for pages written under FOLDER."""

    def __init__(self, folder: str):
        import bokeh

        self.directory = os.path.join(os.path.abspath(folder), "static", f"bokeh-{bokeh.__version__}")
        self._copied: set[str] = set()  # each file copied once per report, over any older copy

    def resources_for(self, page: str, root: Any):
        """The Bokeh resources for the page `page` showing the model `root`: its JavaScript by
        relative paths to the shared copy, which gets the files this page needs first."""
        from bokeh.embed.bundle import bundle_for_objs_and_resources
        from bokeh.resources import Resources

        installed = Resources(mode="absolute")  # the same files as INLINE, named by their paths
        for url in bundle_for_objs_and_resources([root], installed).js_urls:
            self._copy(str(url), str(installed.base_dir))
        return Resources(mode="relative", root_dir=os.path.dirname(os.path.abspath(page)), base_dir=self.directory)

    def _copy(self, source: str, base: str) -> None:
        inside = os.path.relpath(source, base)
        if inside in self._copied:
            return
        if inside.startswith(os.pardir) or not os.path.isfile(source):
            # A model of a Bokeh extension would name a file or URL of its own: ours use none, and a
            # page that needed one would not work offline, so it is refused rather than drawn blank.
            raise RuntimeError(f"a report page needs {source}, outside Bokeh's own files")
        target = os.path.join(self.directory, inside)
        make_output_folder(os.path.dirname(target), "shared BokehJS folder (in -o)")
        write_whole(target, "shared BokehJS file", lambda temporary: shutil.copyfile(source, temporary))
        self._copied.add(inside)
