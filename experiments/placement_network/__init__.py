"""Placement variants vs communication: figure 5.1 on griffon8x16 (experiments/placement_network/README.md)."""
