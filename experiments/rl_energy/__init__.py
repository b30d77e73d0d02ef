"""Seed 002: the Energy scheduler (PPO) against the heuristic grid (experiments/rl_energy/README.md)."""
