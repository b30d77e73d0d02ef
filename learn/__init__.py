"""Scheduling policies found by simulation and non-linear regression (seed 003)."""
