"""The seeds' experiments, one folder each, run from the repository root as modules:

    python -m experiments.rl_energy.run          # (each folder's README says how)
    python -m experiments.reproduce [--quick]    # every experiment, one after the other

They share code by importing each other's modules (`experiments.irmasim_grid.run.run_grid`, the
node model of `experiments.grid_energy.run`), `readme_results` (the tables and figures they write
into their READMEs from their committed results) and `run_record` (where and how those were
measured). They use joulesim through its installed package like any user script.
"""
