"""The engine: simulated time, the job life cycle, the conversation with the decider (validated
replies, decisions applied or refused with the reason), machine power states, and Batsim 4.2.1's
actors on a replica of SimGrid's kernel that decide when each message happens.

The top of the simulator: may import every other simulator sub-package, joulesim.protocol and
joulesim.inputs, never a decider, the CLI or the API. Inside, the helpers that act on the
simulation (decisions, machine switching, Batsim's actors) name `Simulation` for type
annotations only (under TYPE_CHECKING): the one back-reference the layering allows.
"""
