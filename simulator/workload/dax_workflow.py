"""Batsim's workflows (-W FILE, --WS FILE START): Pegasus DAX files whose tasks become jobs.

Batsim 4.2.1 (src/workflow.cpp, Workflow::load_from_xml) reads `<adag>`'s `<job id runtime
num_procs>` elements (num_procs missing or below 1: 1) and its `<child ref><parent ref/></child>`
dependencies, and ignores everything else (files, uses, arguments). Stricter than Batsim, which
would stop on an assertion, read a missing runtime as 0, or wait forever: a job without id or
runtime, a negative or non-numeric runtime, a duplicate id, a dependency naming no job, a
cycle, and an <adag> without any <job> are errors naming the file and the element.

Numbers are read as protocol/number_text reads every number a user writes: ASCII only, finite.
Batsim reads runtime with strtod and num_procs with strtol, which take the longest leading
number and ignore the rest; Python's float() and int() would take other scripts' digits
("١" is 1), "1_0" and "nan". So runtime must be an ASCII decimal (>= 0, below 2^33) and
num_procs, when given, an ASCII integer of at most 18 digits; 0 or below is 1 as in Batsim. A
fractional or junk num_procs ("2.5", "x", "4 cores"), which Batsim's strtol cuts to its leading
digits (2) or to 0 (then 1), is refused: that reading is an accident of strtol, not a documented
rule, and a task asking for 2.5 processors is a mistake in the file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import read_input_file
from joulesim.inputs.xml_input import parse_xml
from joulesim.protocol.number_text import NumberTextError, parse_decimal, parse_integer


_RUNTIME_FIX = "give the task's duration in seconds, an ASCII decimal number >= 0 below 2^33 such as 12.5"


@dataclass
class WorkflowTask:
    id: str
    runtime: float
    num_procs: int
    parents: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)


@dataclass
class Workflow:
    name: str  # its workload name: wf0, wf1... (-W) or wfc0... (--WS)
    path: str
    start_time: float
    tasks: dict[str, WorkflowTask]  # by id, in id order (Batsim keeps them in a std::map)


def load_workflow(path: str, name: str, start_time: float = 0.0) -> Workflow:
    root = parse_xml(path, read_input_file(path, "a DAX workflow file"))
    if _local(root.tag) != "adag":
        raise InputError(path, f"root <{_local(root.tag)[:60]}>", "the root element must be <adag>",
                         "give a Pegasus DAX file: <adag> with <job id=... runtime=...> and <child>/<parent> elements")
    tasks: dict[str, WorkflowTask] = {}
    for element in _children(root, "job"):
        task_id = element.get("id")
        where = f"<job id={_attribute(task_id)}>" if task_id is not None else "<job>"
        if not task_id:
            raise InputError(path, where, "has no id", 'give every <job> an id="..."')
        if task_id in tasks:
            raise InputError(path, where, "the id is used by an earlier <job> too", "give every <job> its own id")
        text = element.get("runtime")
        if text is None:
            raise InputError(path, f"{where}, runtime", "is missing", 'give the task\'s duration in seconds, runtime="12.5"')
        try:
            runtime = parse_decimal(text)
        except NumberTextError as exc:
            raise InputError(path, f"{where}, runtime", _invalid(text, exc), _RUNTIME_FIX) from None
        if not 0 <= runtime < 2 ** 33:
            raise InputError(path, f"{where}, runtime", f"invalid value {_attribute(text)}", _RUNTIME_FIX)
        tasks[task_id] = WorkflowTask(task_id, runtime, _num_procs(path, where, element.get("num_procs")))
    if not tasks:  # (Batsim submits nothing and says goodbye: a workflow that does nothing)
        raise InputError(path, "<adag>", "has no <job>: the workflow has no task",
                         'give the tasks as <job id="..." runtime="..."/> elements of <adag> (a namespace prefix is fine)')
    for element in _children(root, "child"):
        child = element.get("ref")
        if child not in tasks:
            raise InputError(path, f"<child ref={_attribute(child)}>", "names no <job> of the workflow", "fix the ref")
        for parent_element in _children(element, "parent"):
            parent = parent_element.get("ref")
            if parent not in tasks:
                raise InputError(path, f"<child ref={_attribute(child)}>, <parent ref={_attribute(parent)}>",
                                 "names no <job> of the workflow", "fix the ref")
            if parent not in tasks[child].parents:
                tasks[child].parents.append(parent)
                tasks[parent].children.append(child)
    _refuse_cycles(path, tasks)
    return Workflow(name, path, start_time, dict(sorted(tasks.items())))


def _num_procs(path: str, where: str, text: str | None) -> int:
    """Batsim: 1 when missing or below 1. Unlike Batsim's strtol, only an ASCII integer is read
    (the module's docstring says why)."""
    if text is None:
        return 1
    try:
        value = parse_integer(text)
    except NumberTextError as exc:
        raise InputError(path, f"{where}, num_procs", _invalid(text, exc),
                         'give the number of processors the task uses, an integer such as num_procs="4"') from None
    return value if value > 0 else 1


def _attribute(text: str | None, limit: int = 40) -> str:
    """An attribute's value as written, cut for messages (an XML attribute is text: no hint
    about quotes, as JSON values get)."""
    if text is None:
        return "(missing)"
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


def _invalid(text: str, exc: NumberTextError) -> str:
    """"invalid value 'x': it is not ..." from number_text's "'x' is not ..." """
    value, reason = _attribute(text), str(exc)
    if reason.startswith(value + " "):
        reason = "it " + reason[len(value) + 1:]
    return f"invalid value {value}: {reason}"


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]  # DAX files carry the Pegasus namespace


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in element if _local(child.tag) == name]


def _refuse_cycles(path: str, tasks: dict[str, WorkflowTask]) -> None:
    """Kahn's algorithm: tasks left over are on a cycle (Batsim would never submit them)."""
    waiting = {task_id: len(task.parents) for task_id, task in tasks.items()}
    ready = [task_id for task_id, count in waiting.items() if count == 0]
    while ready:
        for child in tasks[ready.pop()].children:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    stuck = sorted(task_id for task_id, count in waiting.items() if count > 0)
    if stuck:
        shown_ids = ", ".join(stuck[:5]) + (", ..." if len(stuck) > 5 else "")
        raise InputError(path, "<child>/<parent>", f"the dependencies form a cycle through job(s) {shown_ids}",
                         "a workflow is a DAG: remove the dependency that closes the cycle")
