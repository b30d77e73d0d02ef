"""Seed 004, §3-§4: a broker over ten clusters (table 2) (experiments/grid_broker/README.md)."""
