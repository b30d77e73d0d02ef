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


def test_empty_file(tmp_path):
    assert load_external_events(write(tmp_path, ""), 4) == []


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
