"""What a workload needs of its platform, checked before the run.

- Node-model platforms: cpu_ops jobs need a node hierarchy, and on one, jobs run cpu_ops or
  delay profiles only (its cores have no flop rate of Batsim's model) and must fit: their tasks
  per node on some node's cores. A job's `mem` (per task, read by the node deciders) is a
  number >= 0 there.
- I/O to storages (parallel_homogeneous_pfs, data_staging) travels over the platform's links:
  such profiles need a platform that describes its network.
"""

from __future__ import annotations

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import clip, is_number, shown
from joulesim.simulator.platform.node_hierarchy import NodeHierarchy
from joulesim.simulator.workload.profiles import reachable_leaves
from joulesim.simulator.workload.workload_model import Workload

NODE_MODEL_TYPES = ("cpu_ops", "delay")
NETWORK_MODEL_TYPES = ("parallel_homogeneous_pfs", "data_staging")


def check_workload_fits_platform(workload: Workload, hierarchy: NodeHierarchy | None, platform: str,
                                 has_network: bool = True) -> None:
    node_model = hierarchy is not None
    if node_model:
        _check_job_sizes(workload, hierarchy, platform)
    used = {job.profile for job in workload.jobs}
    for name in sorted(used):
        kind = workload.profiles[name]["type"]
        if node_model and kind not in NODE_MODEL_TYPES:
            raise InputError(workload.path, f"profile '{clip(name)}'", f"is of type {kind}, but {platform} is an "
                             "IRMaSim node platform, whose jobs run cpu_ops (or delay) profiles",
                             "use an IRMaSim workload or cpu_ops profiles with this platform")
        if not node_model and kind == "cpu_ops":
            raise InputError(workload.path, f"profile '{clip(name)}'", f"is a cpu_ops profile, which runs on IRMaSim "
                             f"node platforms only, and {platform} is not one",
                             "give an IRMaSim platform file (-p platform.json with processors and nodes)")
    if not has_network and not node_model:
        _check_network_profiles(workload, used, platform)


def _check_network_profiles(workload: Workload, used: set[str], platform: str) -> None:
    """Profiles (or the leaves of composed ones) that move data over links need links."""
    for name, profile in reachable_leaves(workload.profiles, *sorted(used)):
        if profile["type"] in NETWORK_MODEL_TYPES:
            raise InputError(workload.path, f"profile '{clip(name)}'", f"is of type {profile['type']}, whose bytes travel "
                             f"over the platform's links, and {platform} describes no network",
                             "use a platform with links and routes (e.g. a <cluster> with bw and lat), and a host with role=storage")


def _check_job_sizes(workload: Workload, hierarchy: NodeHierarchy, platform: str) -> None:
    node_cores = [sum(len(hierarchy.processors[p].cores) for p in node.processors) for node in hierarchy.nodes]
    largest = max(node_cores)
    for job in workload.jobs:
        if "mem" in job.json and not (is_number(job.json["mem"]) and job.json["mem"] >= 0):
            raise InputError(workload.path, f"job '{clip(job.local_id)}': field 'mem'", f"is {shown(job.json['mem'])}",
                             "give the memory each task uses (GB, as the node's capacity), a number >= 0, or leave it out")
        nodes = job.json.get("nodes", 1)
        per_node = job.json.get("ntasks_per_node", job.res)
        if job.res > hierarchy.nb_cores or (nodes == 1 and per_node > largest) or nodes > len(node_cores):
            raise InputError(workload.path, f"job '{clip(job.local_id)}'",
                             f"needs {job.res} cores ({per_node} on each of {nodes} node(s)), but the largest node of "
                             f"{platform} has {largest} cores ({len(node_cores)} nodes, {hierarchy.nb_cores} cores in all)",
                             "drop the job or give it fewer tasks per node (ntasks_per_node), or use a larger platform")
