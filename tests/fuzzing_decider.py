"""A decider process for fuzzing: serves a shipped decider on ENDPOINT with one reply mutated.

    python tests/fuzzing_decider.py ENDPOINT SEED DIRECTORY

The case (scenario, decider, operator, which reply) comes from SEED, as in reply_fuzzer.
Prints MUTATED once the mutation was sent. Exits after SIMULATION_ENDS, or when the
simulator sends nothing for 15 s (it stopped on the mutated reply).
"""

from __future__ import annotations

import sys

import orjson
import zmq
from reply_fuzzer import prepare_case


def main() -> None:
    endpoint, seed, directory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    transport = prepare_case(seed, directory).transport
    socket = zmq.Context.instance().socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 1000)
    socket.bind(endpoint)
    while socket.poll(15_000):
        payload = socket.recv()
        reply = transport.exchange(payload)
        socket.send(reply)
        if transport.mutated is not None and reply is transport.mutated:
            print("MUTATED", flush=True)
        if any(e.get("type") == "SIMULATION_ENDS" for e in orjson.loads(payload).get("events", [])):
            break
    socket.close()


if __name__ == "__main__":
    main()
