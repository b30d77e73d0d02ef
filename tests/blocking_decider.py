"""A decider for process tests: tells the test its pid, then never answers."""

from __future__ import annotations

import os
import threading

from joulesim.protocol.decider import Decider


class BlockingDecider(Decider):
    def handle(self, message):
        with open(os.environ["JOULESIM_TEST_READY"], "w") as ready:
            ready.write(str(os.getpid()))
        threading.Event().wait()  # forever: only a signal ends this process
