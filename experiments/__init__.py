"""The seeds' experiments, one folder each, run from the repository root as modules:

    python -m experiments.rl_energy.run          # (each folder's README says how)

They share code by importing each other's modules (`experiments.irmasim_grid.run.run_grid`, the
node model of `experiments.grid_energy.run`) and `readme_results` (the tables they write into
their READMEs). They use joulesim through its installed package like any user script.
"""
