"""Seed 002, experiments 1 and 2: IRMaSim's heuristic grid on joulesim (experiments/irmasim_grid/README.md)."""
