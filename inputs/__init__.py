"""Reading the files a user names: opening them, decoding JSON and TOML, and errors that name
the file, the field and the fix (InputError, exit status 2); and the cycle collector paused while
the objects they describe are built by the hundred thousand (collector_pause.py).

Below everything but the protocol: the simulator, the deciders, the workload tools, campaigns
and the learners all read user files through it. May import: joulesim.protocol.
"""
