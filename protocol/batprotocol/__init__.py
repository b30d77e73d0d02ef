"""Batsim 5's protocol (batprotocol): its messages in flatbuffers' binary and JSON forms, their
translation to and from the Batsim 4 messages the simulator speaks, and the ways an External
Decision Component (EDC) is reached: a shared library loaded in-process, a library in a child
process, or a process on a ZeroMQ socket."""
