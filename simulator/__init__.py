"""The simulator process: platform, jobs and profiles, simulated time, energy, outputs.

Its sub-packages, each using only those before it (tests/test_import_rules.py):
platform (the platform model and its file formats) -> workload (jobs, profiles, external
events) -> energy (the meter and costs) -> models (how a profile runs: delays, parallel tasks
over the network, IRMaSim's cores) -> output (the CSV files) -> engine (time, the job life
cycle, the conversation with the decider, Batsim's actors). Beside them, checkpoint (a state
written as data and the checkpoint file) uses none of the others: the API's run_checkpoint.py
says what of a simulation it holds. The simulator imports the protocol, inputs and console
packages, and never a decider, the API or the command line.
"""
