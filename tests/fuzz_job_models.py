"""Fuzzing the job models and what feeds them: Batsim 5 profiles in workload files
(ParallelTaskProfile in its cpu/com and computation_vector forms, huge cpu lists,
ParallelTaskHomogeneousProfile strategies, SequentialCompositionProfile), usage_trace and
smpi rank files (empty, missing, a FIFO, /dev/zero, a folder, huge, mutated), DAX workflows
(-W: fan-outs, cycles, an empty <adag>, bad runtimes and num_procs, special files, mutated),
the storage_mapping option of pfs/staging jobs, and external events files (--events: empty,
special files, bad times and resources, mutated). One run of `joulesim run --in-process` per
case on a platform with two storage hosts: in a fork of this process, or (a share) through the
real command; both bounded, the process group killed at the bound (fuzz_edc_inputs)."""

from __future__ import annotations

import json
import os
import random
import shutil

from fuzz_edc_inputs import SPECIAL_FILES, case_folder, run_bounded, special_file
from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID, random_text_mutation
from surface_fuzzer import new_result

#: Exit statuses of a refusal: an input file or value (2), a decision the run cannot apply (4).
EXITS = (2, 4)

PLATFORM = ('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Floyd">'
            + "".join(f'<host id="h{i}" speed="1Gf"/>' for i in range(2))
            + "".join(f'<host id="io{i}" speed="1Gf"><prop id="role" value="storage"/></host>' for i in range(2))
            + '<host id="master" speed="1Gf"><prop id="role" value="master"/></host><router id="sw"/>'
            + "".join(f'<link id="l_{n}" bandwidth="{b}" latency="1us"/>'
                      for n, b in (("h0", "1GBps"), ("h1", "1GBps"), ("io0", "100MBps"), ("io1", "100MBps"),
                                   ("master", "1GBps")))
            + "".join(f'<route src="{n}" dst="sw"><link_ctn id="l_{n}"/></route>'
                      for n in ("h0", "h1", "io0", "io1", "master"))
            + "</zone></platform>")
MAPPING = "nfs:2,bb:3"

PROFILES = {
    "d": {"type": "DelayProfile", "delay": 5},
    "pt": {"type": "ParallelTaskProfile", "cpu": [1e9, 2e9], "com": [0, 1e6, 1e6, 0]},
    "ptv": {"type": "ParallelTaskProfile", "computation_vector": [1e9, 2e9]},
    "pth": {"type": "ParallelTaskHomogeneousProfile", "cpu": 1e9, "com": 1e6},
    "seq": {"type": "SequentialCompositionProfile", "seq": ["d", "pth"], "repeat": 2},
    "io": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1e6, "bytes_to_write": 1e6, "storage": "nfs"},
    "st": {"type": "data_staging", "nb_bytes": 1e6, "from": "nfs", "to": "bb"},
    "u": {"type": "usage_trace", "trace": "t/ulist.txt"},
    "s": {"type": "smpi", "trace": "t/slist.txt"},
}
USAGE_RANK = "{r} m_usage 0.5 1e9\n{r} m_usage 1 2e9\n"
SMPI_RANKS = ["0 init\n0 compute 1e9\n0 send 1 7 1000\n0 finalize\n", "1 init\n1 compute 1e9\n1 recv 0 7 1000\n1 finalize\n"]
DAX = ('<?xml version="1.0" encoding="UTF-8"?>\n<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="2.1" name="d">\n'
       '  <job id="a" runtime="3"/>\n  <job id="b" runtime="2" num_procs="2"/>\n  <job id="c" runtime="1"/>\n'
       '  <child ref="b"><parent ref="a"/></child>\n  <child ref="c"><parent ref="a"/><parent ref="b"/></child>\n</adag>\n')
EVENTS = ('{"type":"machine_unavailable","resources":"0","timestamp":3}\n'
          '{"type":"machine_available","resources":"0","timestamp":30}\n')
BAD_NUMBERS = [-1, -1e-9, "nan", "1e9", None, [], True, 1e400, "١", {"a": 1}]


class Case:
    """The files of one case, before they are written: profiles, traces, DAX, events, mapping."""

    def __init__(self):
        self.profiles = json.loads(json.dumps(PROFILES))
        self.jobs = ["d"]  # the profiles run (one job each)
        self.files: dict[str, str | bytes] = {}  # relative path -> content
        self.specials: dict[str, str] = {}  # relative path -> kind of special file
        self.mapping = MAPPING
        self.dax = None  # relative path of a -W file
        self.events = None  # relative path of an --events file
        self.res: dict[str, int] = {}

    def traces(self, kind: str) -> None:
        self.jobs.append(kind)
        prefix = "u" if kind == "u" else "s"
        self.files[f"t/{prefix}list.txt"] = f"{prefix}0.txt\n{prefix}1.txt\n"
        for r in range(2):
            self.files[f"t/{prefix}{r}.txt"] = USAGE_RANK.format(r=r) if kind == "u" else SMPI_RANKS[r]


def _set(profile: dict, key: str, value) -> None:
    profile[key] = value


# ---------------------------------------------------------------------------- operators
def _profile_op(name: str, mutate, label: str = ALWAYS_INVALID):
    def op(case: Case, rng: random.Random) -> str:
        case.jobs.append(name)
        mutate(case.profiles[name], rng)
        return label
    return op


def _huge_cpu(case: Case, rng: random.Random) -> str:
    case.jobs.append("pt")
    n = rng.choice([10**5, 10**6, 4 * 10**6])
    case.profiles["pt"] = {"type": "ParallelTaskProfile", rng.choice(["cpu", "computation_vector"]): [1e9] * n}
    return ALWAYS_INVALID  # (its job asks for 2 hosts)


def _rank_list(kind: str, how: str):
    """A usage_trace ("u") or smpi ("s") job whose rank list or a rank file is hostile."""
    def op(case: Case, rng: random.Random) -> str:
        case.traces(kind)
        listing, rank = f"t/{kind}list.txt", f"t/{kind}{rng.randrange(2)}.txt"
        if how == "empty_list":
            case.files[listing] = rng.choice(["", "\n", "\n\n  \n"])
        elif how == "empty_rank":
            case.files[rank] = rng.choice(["", "\n", "# nothing\n"])
        elif how == "missing_rank":
            case.files[listing] = case.files[listing].replace(f"{kind}1.txt", "nowhere.txt")
        elif how == "special_rank":
            special = rng.choice(["fifo", "dev_zero", "folder"])
            del case.files[rank]
            case.specials[rank] = special
            return ALWAYS_INVALID if special != "dev_zero" else ALWAYS_INVALID
        elif how == "special_list":
            del case.files[listing]
            case.specials[listing] = rng.choice(["fifo", "dev_zero", "folder", "empty", "dev_null"])
        elif how == "huge_rank":
            r = int(rank[-5])
            line = f"{r} m_usage 0.5 1e3\n" if kind == "u" else f"{r} compute 1e3\n"
            body = line * rng.choice([2_000, 10_000])
            case.files[rank] = body if kind == "u" else f"{r} init\n" + body + SMPI_RANKS[r].split("\n", 1)[1]
            return MAYBE_VALID
        elif how == "non_utf8":
            case.files[rank] = b"0 m_usage \xff\xfe 1e9\n"
        elif how == "mutated":
            case.files[rank] = random_text_mutation(case.files[rank], rng)
            return MAYBE_VALID
        elif how == "absolute_dev_zero":
            case.files[listing] = "/dev/zero\n/dev/zero\n"
        return ALWAYS_INVALID
    return op


def _dax(how: str):
    def op(case: Case, rng: random.Random) -> str:
        case.dax = "w.dax"
        if how == "fanout":
            n = rng.choice([50, 500, 3000])
            children = "".join(f'<job id="c{i}" runtime="{1 + i % 3}"/>' for i in range(n))
            edges = "".join(f'<child ref="c{i}"><parent ref="root"/></child>' for i in range(n))
            if rng.random() < 0.5:  # and a fan-in
                edges += '<job id="sink" runtime="1"/><child ref="sink">' + "".join(
                    f'<parent ref="c{i}"/>' for i in range(n)) + "</child>"
            case.files["w.dax"] = f'<adag><job id="root" runtime="2"/>{children}{edges}</adag>'
            return MAYBE_VALID
        if how == "cycle":
            n = rng.choice([1, 2, 5])
            jobs = "".join(f'<job id="j{i}" runtime="1"/>' for i in range(n))
            edges = "".join(f'<child ref="j{(i + 1) % n}"><parent ref="j{i}"/></child>' for i in range(n))
            case.files["w.dax"] = f'<adag><job id="free" runtime="1"/>{jobs}{edges}</adag>'
        elif how == "empty_adag":
            case.files["w.dax"] = rng.choice(["<adag/>", "<adag></adag>", DAX.split("<job")[0] + "</adag>",
                                              '<adag><child ref="a"/></adag>'])
        elif how == "bad_runtime":
            case.files["w.dax"] = DAX.replace('runtime="2"', f'runtime="{rng.choice(["nan", "inf", "-inf", "-2", "1e400", "1e20", "", "x", "١"])}"')
        elif how == "bad_num_procs":
            value = rng.choice(["-1", "0", "x", "1e400", "2.5", "١", "99999999999999999999", ""])
            case.files["w.dax"] = DAX.replace('num_procs="2"', f'num_procs="{value}"')
            # As in Batsim, an integer below 1 is 1; anything but an ASCII integer is refused
            # (Batsim's strtol would read "2.5" as 2 and junk as 0, then 1: see dax_workflow.py).
            return MAYBE_VALID if value in ("-1", "0") else ALWAYS_INVALID
        elif how == "special":
            kind = rng.choice(["fifo", "dev_zero", "folder", "empty", "missing", "dev_null"])
            case.specials["w.dax"] = kind
        elif how == "non_utf8":
            case.files["w.dax"] = DAX.encode().replace(b'name="d"', b'name="\xff\xfe"').replace(b'encoding="UTF-8"', b'encoding="UTF-8"')
        elif how == "deep":
            depth = rng.choice([1000, 100_000])
            case.files["w.dax"] = "<adag>" + "<x>" * depth + "</x>" * depth + "</adag>"
            return MAYBE_VALID
        elif how == "mutated":
            case.files["w.dax"] = random_text_mutation(DAX, rng)
            return MAYBE_VALID
        return ALWAYS_INVALID
    return op


def _mapping(case: Case, rng: random.Random) -> str:
    case.jobs += ["io", "st"]
    how = rng.choice(["duplicate", "beyond", "junk_number", "no_colon", "empty_label", "negative", "compute_host",
                      "unused_label", "spaces", "empty"])
    case.mapping = {"duplicate": rng.choice(["nfs:2,nfs:3,bb:3", "nfs:2,bb:3,nfs:2", "nfs:2,bb:3,bb:2"]),
                    "beyond": f"nfs:{rng.choice([5, 99, 2**31, 10**30])},bb:3",
                    "junk_number": f"nfs:{rng.choice(['١', 'x', '2.5', '1e1', 'nan', ''])},bb:3",
                    "no_colon": rng.choice(["nfs,bb:3", "nfs2,bb3", "nfs=2,bb=3"]),
                    "empty_label": ":2,bb:3", "negative": "nfs:-2,bb:3",
                    "compute_host": "nfs:0,bb:3", "unused_label": MAPPING + ",zz:2", "spaces": " nfs : 2 , bb : 3 ",
                    "empty": rng.choice(["", ","])}[how]
    return MAYBE_VALID if how in ("compute_host", "unused_label", "spaces") else ALWAYS_INVALID


def _events(how: str):
    def op(case: Case, rng: random.Random) -> str:
        case.events = "e.txt"
        if how == "empty":
            case.files["e.txt"] = rng.choice(["", "\n", "\n\n"])
        elif how == "special":
            case.specials["e.txt"] = rng.choice(["fifo", "dev_zero", "folder", "missing"])
        elif how == "bad_time":
            case.files["e.txt"] = EVENTS.replace('"timestamp":30', '"timestamp":' + rng.choice(["NaN", "Infinity", "-1", "1e20", '"5"', "null", "1e400"]))
        elif how == "bad_resources":
            case.files["e.txt"] = EVENTS.replace('"resources":"0"', f'"resources":{json.dumps(rng.choice(["99", "0-99", "١", "", "1-0", "0  1", 3, None]))}', 1)
        elif how == "unknown_type":
            case.files["e.txt"] = EVENTS.replace("machine_available", rng.choice(["machine_broken", "", "MACHINE_AVAILABLE"]))
        elif how == "non_utf8":
            case.files["e.txt"] = EVENTS.encode().replace(b"machine_available", b"machine_\xffavailable")
        elif how == "many":
            n = rng.choice([10_000, 100_000])
            case.files["e.txt"] = "".join(
                f'{{"type":"machine_{"un" if i % 2 == 0 else ""}available","resources":"{i % 2}","timestamp":{1 + i // 2 * 0.001}}}\n'
                for i in range(n))
            return MAYBE_VALID
        elif how == "mutated":
            case.files["e.txt"] = random_text_mutation(EVENTS, rng)
            return MAYBE_VALID
        return ALWAYS_INVALID
    return op


OPERATORS = {
    "pt_cpu_wrong_length": _profile_op("pt", lambda p, r: _set(p, "cpu", [1e9] * r.choice([0, 1, 3]))),
    "pt_cpu_bad_value": _profile_op("pt", lambda p, r: p["cpu"].__setitem__(r.randrange(2), r.choice(BAD_NUMBERS))),
    "pt_com_wrong_length": _profile_op("pt", lambda p, r: _set(p, "com", [0] * r.choice([0, 1, 3, 9]))),
    "pt_com_bad_value": _profile_op("pt", lambda p, r: p["com"].__setitem__(r.randrange(4), r.choice(BAD_NUMBERS))),
    "pt_vector_not_a_list": _profile_op("ptv", lambda p, r: _set(p, "computation_vector", r.choice(["1e9", 1e9, None, {}, [[1e9]]]))),
    "pt_both_forms": _profile_op("ptv", lambda p, r: _set(p, "cpu", [1e9, 1e9]), MAYBE_VALID),
    "pt_huge_cpu": _huge_cpu,
    "pth_bad_value": _profile_op("pth", lambda p, r: _set(p, r.choice(["cpu", "com"]), r.choice(BAD_NUMBERS))),
    "pth_bad_strategy": _profile_op("pth", lambda p, r: _set(p, "generation_strategy", r.choice(["Evenly", "", 3, None]))),
    "seq_unknown_profile": _profile_op("seq", lambda p, r: _set(p, "seq", ["d", r.choice(["nope", "", "w0!d"])])),
    "seq_self": _profile_op("seq", lambda p, r: _set(p, "seq", ["d", "seq"])),
    "seq_empty": _profile_op("seq", lambda p, r: _set(p, "seq", r.choice([[], "d", None]))),
    "seq_bad_repeat": _profile_op("seq", lambda p, r: _set(p, "repeat", r.choice([0, -1, 1.5, "2", 10**20, None]))),
    "pfs_bad_bytes": _profile_op("io", lambda p, r: _set(p, r.choice(["bytes_to_read", "bytes_to_write"]), r.choice(BAD_NUMBERS))),
    "pfs_unknown_storage": _profile_op("io", lambda p, r: _set(p, "storage", r.choice(["zz", "", 2, None]))),
    "staging_bad": _profile_op("st", lambda p, r: _set(p, r.choice(["nb_bytes", "from", "to"]), r.choice(BAD_NUMBERS + ["zz"]))),
    "storage_mapping": _mapping,
    **{f"usage_{how}": _rank_list("u", how) for how in ("empty_list", "empty_rank", "missing_rank", "special_rank",
                                                         "special_list", "huge_rank", "non_utf8", "mutated",
                                                         "absolute_dev_zero")},
    **{f"smpi_{how}": _rank_list("s", how) for how in ("empty_list", "empty_rank", "missing_rank", "special_rank",
                                                        "special_list", "huge_rank", "mutated")},
    **{f"dax_{how}": _dax(how) for how in ("fanout", "cycle", "empty_adag", "bad_runtime", "bad_num_procs", "special",
                                            "non_utf8", "deep", "mutated")},
    **{f"events_{how}": _events(how) for how in ("empty", "special", "bad_time", "bad_resources", "unknown_type",
                                                  "non_utf8", "many", "mutated")},
}


def _mutated_workload(case: Case, rng: random.Random) -> str:
    """Not an operator of the table: the workload text mutated at random (MAYBE_VALID)."""
    case.jobs += ["pt", "ptv", "pth", "seq"]
    case.files["w.json"] = random_text_mutation(json.dumps(_workload(case), indent=1), rng)
    return MAYBE_VALID


def _workload(case: Case) -> dict:
    names = list(dict.fromkeys(case.jobs))
    needed = set(names)
    for name in names:  # a composition's parts
        seq = case.profiles[name].get("seq") if isinstance(case.profiles.get(name), dict) else None
        if isinstance(seq, list):
            needed.update(s for s in seq if isinstance(s, str) and s in case.profiles)
    jobs = [{"id": i, "subtime": i, "res": 1 if name in ("d", "io", "u") else 2, "walltime": 1000, "profile": name}
            for i, name in enumerate(names)]
    return {"nb_res": 2, "jobs": jobs, "profiles": {k: v for k, v in case.profiles.items() if k in needed}}


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    case = Case()
    if rng.random() < 0.08:
        operator = "workload_mutated"
        label = _mutated_workload(case, rng)
    else:
        operator = rng.choice(sorted(OPERATORS))
        label = OPERATORS[operator](case, rng)
    folder = case_folder(directory, "jobs", seed)
    try:
        texts = {"platform.xml": PLATFORM, **case.files}
        if "w.json" not in texts:
            texts["w.json"] = json.dumps(_workload(case))
        for name, content in texts.items():
            path = os.path.join(folder, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass"))
        for name, kind in case.specials.items():
            os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
            special = special_file(kind, folder, name)
            if special != os.path.join(folder, name):  # /dev/zero, /dev/null: a link to it
                os.symlink(special, os.path.join(folder, name))
        args = ["run", "--in-process", "-p", "platform.xml", "-w", "w.json", "-d", rng.choice(["fcfs", "easy"]),
                "-e", os.path.join(folder, "out", "o"), "-q", "--timeout", "10"]
        if "io" in case.jobs or "st" in case.jobs:
            args += ["-o", f"storage_mapping={case.mapping}"]
        if case.events:
            args += ["--events", case.events]
        if case.dax:
            args += ["-W", case.dax]
        via_cli = rng.random() < 0.25
        result = new_result(seed, operator, label, via_cli)
        return run_bounded(result, args, folder, via_cli, exits=EXITS)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
