"""Energy-aware policies (seed 001): EASY with opportunistic, inertial or proportional shutdown,
and EASY under an energy budget or power cap (energyBud, reducePC, PC), with or without shutdown.

May import: deciders.batch, deciders.common, joulesim.protocol, joulesim.inputs.
"""
