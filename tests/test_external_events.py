"""External events files: parsing, ordering, and every input error."""

import pytest
from procset import ProcSet

from joulesim.inputs.input_error import InputError
from joulesim.simulator.workload.external_events import ExternalEvent, load_external_events


def write(tmp_path, text):
    path = tmp_path / "events.txt"
    path.write_text(text)
    return str(path)


def test_load_sorted_stable_and_blank_lines_skipped(tmp_path):
    path = write(tmp_path, "\n".join([
        '{"type":"machine_unavailable","resources":"0-1 3","timestamp":20}',
        "",
        '{"type":"machine_available","resources":"3 1-2","timestamp":5.5, "extra": 1}',
        "   ",
        '{"type":"machine_available","resources":"0-1 3","timestamp":20}',
        '{"type":"machine_unavailable","resources":"7","timestamp":0}',
    ]) + "\n")
    events = load_external_events(path, 8)
    assert events == [
        ExternalEvent(0.0, "machine_unavailable", ProcSet(7), 6),
        ExternalEvent(5.5, "machine_available", ProcSet((1, 3)), 3),
        ExternalEvent(20.0, "machine_unavailable", ProcSet((0, 1), 3), 1),
        ExternalEvent(20.0, "machine_available", ProcSet((0, 1), 3), 5),
    ]


def test_an_empty_file_is_refused(tmp_path):
    """Batsim reads no events from it; joulesim says so (issue 46: it was accepted without a word)."""
    for text in ("", "\n  \n"):
        with pytest.raises(InputError, match="file: holds no event"):
            load_external_events(write(tmp_path, text), 4)


def test_missing_file(tmp_path):
    path = str(tmp_path / "absent.txt")
    with pytest.raises(InputError) as info:
        load_external_events(path, 4)
    assert path in str(info.value) and "does not exist" in str(info.value)


GOOD = '{"type":"machine_unavailable","resources":"0","timestamp":1}'


@pytest.mark.parametrize("line, parts", [
    ('{"type": "machine_unavailable",', ["malformed JSON"]),
    ("[1, 2]", ["not an object"]),
    ('{"resources":"0","timestamp":1}', ["field 'type'", "missing"]),
    ('{"type":"machine_available","timestamp":1}', ["field 'resources'", "missing"]),
    ('{"type":"machine_available","resources":"0"}', ["field 'timestamp'", "missing"]),
    ('{"type":"machine_broken","resources":"0","timestamp":1}', ["field 'type'", "machine_broken", "machine_available"]),
    ('{"type":5,"resources":"0","timestamp":1}', ["field 'type'"]),
    ('{"type":"machine_available","resources":"0","timestamp":-1}', ["field 'timestamp'", ">= 0"]),
    ('{"type":"machine_available","resources":"0","timestamp":"3"}', ["field 'timestamp'"]),
    ('{"type":"machine_available","resources":"0","timestamp":true}', ["field 'timestamp'"]),
    ('{"type":"machine_available","resources":"0,1","timestamp":1}', ["field 'resources'", "interval set"]),
    ('{"type":"machine_available","resources":"3-1","timestamp":1}', ["field 'resources'"]),
    ('{"type":"machine_available","resources":[0, 1],"timestamp":1}', ["field 'resources'"]),
    ('{"type":"machine_available","resources":"","timestamp":1}', ["field 'resources'", "empty"]),
    ('{"type":"machine_available","resources":"2-4","timestamp":1}', ["field 'resources'", "0-3"]),
])
def test_bad_line(tmp_path, line, parts):
    path = write(tmp_path, GOOD + "\n\n" + line + "\n")
    with pytest.raises(InputError) as info:
        load_external_events(path, 4)
    message = str(info.value)
    assert path in message
    assert "line 3" in message
    for part in parts:
        assert part in message, (part, message)


def test_several_event_files_merge_by_time_ties_in_file_order(tmp_path):
    """Batsim's --events given more than once: one list by time, ties in file order (each file's
    submitter starts in order), each event knowing its file."""
    from joulesim.simulation_inputs import events_from

    (tmp_path / "a.txt").write_text('{"type": "machine_unavailable", "timestamp": 10, "resources": "0"}\n'
                                    '{"type": "machine_available", "timestamp": 30, "resources": "0"}\n')
    (tmp_path / "b.txt").write_text('{"type": "machine_unavailable", "timestamp": 10, "resources": "1"}\n'
                                    '{"type": "machine_unavailable", "timestamp": 5, "resources": "2"}\n')
    merged = events_from([tmp_path / "a.txt", str(tmp_path / "b.txt")], 4)
    assert [(e.timestamp, str(e.resources), e.list_index, e.line) for e in merged] == [
        (5.0, "2", 1, 2), (10.0, "0", 0, 1), (10.0, "1", 1, 1), (30.0, "0", 0, 2)]


def test_the_command_line_takes_several_event_files(tmp_path):
    """`joulesim run --events A --events B` (Batsim's `--events` is repeatable): both files' events
    reach the decider, by time, and take their machines away."""
    import json
    import subprocess
    import sys

    (tmp_path / "a.txt").write_text('{"type": "machine_unavailable", "timestamp": 10, "resources": "0"}\n')
    (tmp_path / "b.txt").write_text('{"type": "machine_unavailable", "timestamp": 5, "resources": "1"}\n')
    workload = {"nb_res": 4, "jobs": [{"id": 1, "subtime": 20, "res": 2, "profile": "d"}],
                "profiles": {"d": {"type": "delay", "delay": 10}}}
    (tmp_path / "w.json").write_text(json.dumps(workload))
    done = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "small4", "-w", str(tmp_path / "w.json"),
                           "-d", "fcfs", "--in-process", "--events", str(tmp_path / "a.txt"), "--events",
                           str(tmp_path / "b.txt"), "-v", "network-only", "-e", str(tmp_path / "out")],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 0, done.stderr
    told = [line for line in done.stderr.splitlines() if "event_machine_unavailable" in line]
    assert [json.loads(line.split("sent: ", 1)[1])["events"][0]["data"]["resources"] for line in told] == ["1", "0"]
    assert "2-3" in (tmp_path / "out_jobs.csv").read_text()  # (the job on the hosts left)
