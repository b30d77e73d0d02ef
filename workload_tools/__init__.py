"""Workload tools: convert real traces (SWF) and generate synthetic workloads."""
