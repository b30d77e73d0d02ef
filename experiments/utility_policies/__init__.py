"""Seed 003: utility functions from simulation and regression (experiments/utility_policies/README.md)."""
