"""The run's output files, byte-compatible with Batsim's: `out_jobs.csv`, `out_schedule.csv`,
`out_machine_states.csv`, `out_pstate_changes.csv`, and the checks of the export prefix.

Add an output here: a writer fed by the engine. May import: joulesim.protocol, joulesim.inputs,
simulator.platform, simulator.workload, simulator.energy.
"""
