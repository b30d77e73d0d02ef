"""The wire contract (Batsim 4 JSON over ZeroMQ) and the decider-side library."""
