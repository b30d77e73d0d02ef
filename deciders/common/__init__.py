"""What the policies share, below all of them: typed `--option` reading, the waiting queue and
the queue-policy base class, machine sets as bitmasks, queue orders, runtimes, placement inside
a hole, and the machines' power states as messages tell them.

May import: joulesim.protocol, joulesim.inputs, joulesim.console.
"""
