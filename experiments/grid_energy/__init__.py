"""Seed 004, figures 1 and 2: one cluster fed by the grid job stream (experiments/grid_energy/README.md)."""
