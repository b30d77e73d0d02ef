"""A Batsim 5 process EDC in Python: first come, first served, speaking batprotocol.

It binds a ZeroMQ REP socket and speaks Batsim 5's process-EDC protocol: the first request is
the init data (its size as a native-endian uint32, then its bytes), answered by the format
flags (a uint32) and a message holding an EDCHelloEvent; then one message per call, answered
by a message of decisions. Messages are read and written with joulesim's batprotocol codec, in
flatbuffers' binary format, or in its JSON format when the init data is {"format_json": true}.

    python examples/deciders/fcfs_edc.py ipc:///tmp/edc.sock &
    joulesim simulate -p cluster32 -w default --edc-socket ipc:///tmp/edc.sock

Its schedule is joulesim's `fcfs` (and Batsim 5's test/edc-lib/fcfs.cpp): jobs start in
submission order on the lowest-numbered free machines; a job larger than the platform is
rejected.

With {"energy_probe_period": SECONDS} in the init data (and the simulation run with -E), it also
sets a Batsim 5 energy probe on every host (their joules since t=0, summed) and prints each
reading as `probe TIME JOULES` on stdout; it stops the probe once every job has ended, so that
the simulation can end:

    python examples/deciders/fcfs_edc.py ipc:///tmp/edc.sock &
    joulesim simulate -p homogeneous240 -w default -E --edc-socket ipc:///tmp/edc.sock \
        --edc-init '{"energy_probe_period": 600}'

It prints each generic external event it gets (Batsim 5's ExternalEventOccurredEvent, in the
JSON format) as `external event TIME ID DATA`:

    python examples/deciders/fcfs_edc.py ipc:///tmp/edc.sock &
    joulesim simulate -p cluster32 -w default --ee events.txt --edc-socket ipc:///tmp/edc.sock \
        --edc-init '{"format_json": true}'
"""

from __future__ import annotations

import struct
import sys

import orjson
import zmq

from joulesim.protocol.batprotocol.binary_format import decode_message, encode_message
from joulesim.protocol.batprotocol.json_format import decode_json, encode_json
from joulesim.protocol.interval_set import format_interval_set

FORMAT_BINARY, FORMAT_JSON = 0x1, 0x2


class Fcfs:
    def __init__(self, probe_period: int = 0) -> None:
        self.probe_period = probe_period  # s between energy readings (0: no probe)
        self.probing = False
        self.all_submitted = False
        self.free: list[int] = []  # free machines, lowest first
        self.queue: list[tuple[str, int]] = []  # (job id, machines), in submission order
        self.allocations: dict[str, list[int]] = {}

    def take_decisions(self, message: dict) -> dict:
        now, decisions = message["now"], []
        for event in message["events"]:
            kind, body = event["event_type"], event["event"]
            if kind == "SimulationBeginsEvent":
                self.free = list(range(body["computation_host_number"]))
                self.size = body["computation_host_number"]
                if self.probe_period:
                    decisions.append(_event(now, "CreateProbeEvent", _energy_probe(self.size, self.probe_period)))
                    self.probing = True
            elif kind == "ProbeDataEmittedEvent":
                print(f"probe {event['timestamp']!r} {body['data']['data']!r}", flush=True)
            elif kind == "ExternalEventOccurredEvent":  # (a generic event of the events file: JSON only)
                print(f"external event {event['timestamp']!r} {body['id']} {body['external_event']['data']!r}",
                      flush=True)
            elif kind == "AllStaticJobsHaveBeenSubmittedEvent":
                self.all_submitted = True
            elif kind == "JobSubmittedEvent":
                needed = body["job"]["resource_request"]
                if needed > self.size:
                    decisions.append(_event(now, "RejectJobEvent", {"job_id": body["job_id"]}))
                else:
                    self.queue.append((body["job_id"], needed))
            elif kind == "JobCompletedEvent":
                self.free = sorted(self.free + self.allocations.pop(body["job_id"], []))
        while self.queue and self.queue[0][1] <= len(self.free):
            job_id, needed = self.queue.pop(0)
            machines, self.free = self.free[:needed], self.free[needed:]
            self.allocations[job_id] = machines
            decisions.append(_event(now, "ExecuteJobEvent", {"job_id": job_id, "allocation": {
                "host_allocation": format_interval_set(machines),
                "executor_placement_type": "PredefinedExecutorPlacementStrategyWrapper",
                "executor_placement": {"strategy": "SpreadOverHostsFirst"}}}))
        if self.probing and self.all_submitted and not self.queue and not self.allocations:
            decisions.append(_event(now, "StopProbeEvent", {"probe_id": "energy"}))  # (else it runs forever)
            self.probing = False
        return {"now": now, "events": decisions}


def _energy_probe(hosts: int, period_s: int) -> dict:
    """Every host's joules since t=0, summed, every `period_s` seconds (what Batsim 5 implements:
    the Power metric, accumulated, without reset)."""
    return {"probe_id": "energy", "metrics": "Power", "resources_type": "HostResources",
            "resources": {"host_ids": f"0-{hosts - 1}"},
            "data_accumulation_strategy_type": "ProbeDataAccumulation",
            "data_accumulation_strategy": {"reset_mode_type": "NoReset", "reset_mode": {}},
            "measurement_triggering_policy_type": "TemporalTriggerWrapper",
            "measurement_triggering_policy": {"temporal_trigger_type": "Periodic", "temporal_trigger": {
                "period": period_s, "time_unit": "Second", "mode_type": "Infinite", "mode": {}}},
            "resources_aggregation_function_type": "Sum", "resources_aggregation_function": {},
            "temporal_aggregation_function_type": "NoTemporalAggregation", "temporal_aggregation_function": {},
            "emission_filtering_policy_type": "NoFiltering", "emission_filtering_policy": {}}


def _event(now: float, kind: str, body: dict) -> dict:
    return {"timestamp": now, "event_type": kind, "event": body}


def serve(endpoint: str) -> None:
    socket = zmq.Context().socket(zmq.REP)
    socket.bind(endpoint)
    first = socket.recv()
    size = struct.unpack_from("=I", first)[0]
    init = orjson.loads(first[4:4 + size] or b"{}")
    json_format = bool(init.get("format_json", False))
    encode = (lambda m: encode_json(m) + b"\0") if json_format else encode_message
    decode = decode_json if json_format else decode_message
    hello = {"now": 0.0, "events": [_event(0.0, "EDCHelloEvent", {
        "batprotocol_version": "0.1.0", "decision_component_name": "fcfs-python",
        "decision_component_version": "1.0.0"})]}
    socket.send(struct.pack("=I", FORMAT_JSON if json_format else FORMAT_BINARY) + encode(hello))
    scheduler = Fcfs(int(init.get("energy_probe_period", 0)))
    while True:
        message = decode(socket.recv())
        socket.send(encode(scheduler.take_decisions(message)))
        if any(event["event_type"] == "SimulationEndsEvent" for event in message["events"]):
            return


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} ENDPOINT (e.g. ipc:///tmp/edc.sock)")
    serve(sys.argv[1])
