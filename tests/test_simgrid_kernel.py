"""The replicated SimGrid kernel (simulator/engine/simgrid_kernel.py): clock values to the last bit.

Every expected value here was printed by real SimGrid 3.32 (Debian's python3-simgrid, host/model
ptask_L07) running the same actors on the same platform: each actor sleeps, then sends a 1-byte
message to the master host, whose receiver takes them one after the other. (Checked further by
hand on 210 random scenarios, with and without latencies: all clock values and orders equal.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from joulesim.simulator.engine.ipc_routes import MASTER, IpcRoutes
from joulesim.simulator.engine.simgrid_kernel import ENDED, Comm, Kernel, Mailbox
from joulesim.simulator.platform.platform_loader import load_platform

from conftest import write_batsim_clusters


def run(tmp_path: Path, actors: list[tuple[object, list[float]]], lat: str = "0us", uplink: str = "0us"):
    """Each actor (host: a node id or MASTER; its sleeps) sleeps, then sends a message to the
    master, as Batsim's send_message does (Mailbox::by_name, isend, wait); returns (message,
    clock when received) in the order the receiver took them."""
    kernel = Kernel(IpcRoutes(load_platform(write_batsim_clusters(tmp_path, lat=lat, uplink=uplink))).route,
                    lambda now: None)
    received: list[tuple[str, float]] = []
    total = sum(len(sleeps) for _, sleeps in actors)

    def receiver():
        for _ in range(total):
            comm = yield ("irecv", "server")
            received.append(((yield ("wait", comm)), kernel.now))

    def sender(name: str, sleeps: list[float]):
        for index, duration in enumerate(sleeps):
            if duration > 0:
                yield ("sleep", duration)
            yield ("answered",)
            comm = yield ("isend", "server", f"{name}.{index}")
            yield ("wait", comm)

    kernel.start(receiver(), MASTER, "server")
    for number, (host, sleeps) in enumerate(actors):
        kernel.start(sender(f"a{number}", sleeps), host, f"a{number}")
    kernel.run(float("inf"), lambda when: AssertionError(when))
    return received


def test_a_sleep_within_the_precision_of_a_step_ends_in_that_step(tmp_path):
    # c ends 0.5e-9 s before a and b: their remaining 0.5e-9 s is under surf/precision (1e-9 s),
    # so all three end at c's step; their messages (1 byte at 1 GB/s) then cross one at a time.
    received = run(tmp_path, [(3, [1.0]), (1, [1.0]), (2, [1.0 - 0.5e-9])])
    assert received == [("a0.0", 1.0000000005), ("a1.0", 1.0000000015000001), ("a2.0", 1.0000000025000002)]


def test_sleeps_and_messages_in_one_step_run_in_the_order_of_their_actions(tmp_path):
    # At t = 3.0000000035 a transfer (older) and a sleep end in the same step; the sleeper's
    # Mailbox::by_name simcall lets its send reach the mailbox first all the same.
    received = run(tmp_path, [(0, [1e-9, 3.0, 1e-9, 0.4]), (MASTER, [5e-10, 3.0, 0.0])])
    assert received == [("a0.0", 1.5000000000000002e-09), ("a1.0", 2.5e-09), ("a0.1", 3.0000000025),
                        ("a1.1", 3.0000000035000003), ("a0.2", 3.0000000045000004), ("a1.2", 3.0000000055000005),
                        ("a0.3", 3.4000000055000004)]


def test_a_route_with_latency_costs_its_latency_then_its_byte(tmp_path):
    # node -> master: 50 + 50 + 20 + 50 + 50 us of latency (node link, backbones, uplink, master
    # link), then 1 byte at 1 GB/s; master -> master: 150 us (up its link, backbone, down again).
    received = run(tmp_path, [(3, [1.0]), (MASTER, [1.0])], lat="50us", uplink="20us")
    assert received == [("a0.0", 1.0002200010000002), ("a1.0", 1.0003700020000004)]


def test_a_killed_sleeper_leaves_the_solver_at_once(tmp_path):
    kernel = Kernel(IpcRoutes(load_platform(write_batsim_clusters(tmp_path))).route, lambda now: None)
    woke: list[float] = []

    def sleeper(duration: float):
        yield ("sleep", duration)
        woke.append(kernel.now)

    long = kernel.start(sleeper(100.0), 0, "long")

    def killer():
        yield ("sleep", 2.0)
        kernel.kill(long)

    kernel.start(sleeper(1.0), 1, "short")
    kernel.start(killer(), MASTER, "killer")
    kernel.run(float("inf"), lambda when: AssertionError(when))
    assert woke == [1.0] and kernel.now == 2.0


def test_a_killed_shortest_sleep_takes_no_step(tmp_path):
    # A message (sent at 2 s) makes its receiver kill the shortest sleep (5 s); the step that
    # ended the message ended no sleep. The next step is the other sleep's end: the kernel
    # keeps the shortest remaining duration between steps and must forget it when its sleep
    # leaves (else it takes a step at 5 s, which also moves the end's last bits).
    kernel = Kernel(IpcRoutes(load_platform(write_batsim_clusters(tmp_path))).route, lambda now: None)
    woke: list[str] = []

    def sleeper(name: str, duration: float):
        yield ("sleep", duration)
        woke.append(name)

    short = kernel.start(sleeper("short", 5.0), 0, "short")

    def sender():
        yield ("sleep", 2.0)
        comm = yield ("isend", "killer", "kill")
        yield ("wait", comm)

    def killer():
        comm = yield ("irecv", "killer")
        yield ("wait", comm)
        kernel.kill(short)

    kernel.start(sleeper("long", 7.0), 1, "long")
    kernel.start(killer(), MASTER, "killer")
    kernel.start(sender(), MASTER, "sender")
    kernel.run(float("inf"), lambda when: AssertionError(when))
    assert woke == ["long"] and kernel.steps == 3  # the sender's sleep, its message, the long sleep
    assert kernel.now == pytest.approx(7.0)


def test_an_actor_killed_after_it_yields_a_put_sends_nothing(tmp_path):
    # The victim asks to send, then the killer (after it in the same sub-round) kills it: as
    # Batsim's actor would, it dies after Mailbox::by_name, before its isend (the kernel makes a
    # put's isend and wait itself, and must not for a dead actor: Batsim 5's forced stop).
    kernel = Kernel(IpcRoutes(load_platform(write_batsim_clusters(tmp_path))).route, lambda now: None)
    received: list[str] = []

    def victim():
        yield ("put", "box", "late")

    def killer():
        kernel.kill(doomed)
        yield ("answered",)

    def receiver():
        received.append((yield ("get", "box")))

    doomed = kernel.start(victim(), MASTER, "victim")
    kernel.start(killer(), MASTER, "killer")
    kernel.start(receiver(), MASTER, "receiver")
    kernel.run(float("inf"), lambda when: AssertionError(when))
    assert received == [] and kernel.steps == 0


def test_time_past_the_limit_is_refused(tmp_path):
    kernel = Kernel(IpcRoutes(load_platform(write_batsim_clusters(tmp_path))).route, lambda now: None)

    def sleeper():
        yield ("sleep", 10.0)

    kernel.start(sleeper(), 0, "late")
    with pytest.raises(ValueError, match="10"):
        kernel.run(5.0, lambda when: ValueError(f"due at {when:g}"))


@pytest.mark.parametrize("ending", ["returns", "yields ENDED"])
def test_an_actor_that_ends_is_gone_within_its_sub_round(tmp_path, ending):
    # An actor's code ends by returning or by yielding ENDED (what Batsim's job and REQ-REP
    # actors do: no StopIteration); either way it is over at once: a killer that runs after it
    # in the same sub-round finds nothing to kill, and its code is let go.
    kernel = Kernel(IpcRoutes(load_platform(write_batsim_clusters(tmp_path))).route, lambda now: None)
    kills: list[bool] = []

    def short_lived():
        yield ("sleep", 1.0)
        if ending == "yields ENDED":
            yield ENDED
            raise AssertionError("resumed after it ended")

    def killer():
        yield ("sleep", 1.0)
        kills.append(kernel.kill(doomed))

    doomed = kernel.start(short_lived(), 0, "short-lived")
    kernel.start(killer(), MASTER, "killer")
    kernel.run(float("inf"), lambda when: AssertionError(when))
    assert kills == [False] and not doomed.alive and doomed.simcall is None
    assert (doomed.code is None) == (ending == "yields ENDED")


def test_a_mailbox_gives_its_posts_oldest_first_however_many_wait():
    # Thousands of posts wait while the taker lags (switching machines' reports): they come out
    # in posting order across the compaction of the queue's taken head.
    box = Mailbox()
    taken: list[int] = []
    comms = [Comm() for _ in range(5000)]
    for number, comm in enumerate(comms):
        comm.payload = number
        box.post("send", comm)
        if number % 3 == 0:
            taken.append(box.take_oldest().payload)
    assert box.oldest_kind() == "send"
    while not box.empty():
        taken.append(box.take_oldest().payload)
    assert taken == list(range(5000)) and box.oldest_kind() == "" and box.head == 0 and box.queue == []
