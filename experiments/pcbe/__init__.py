"""PCBE (seed 000): tables 5.1-5.3 on joulesim (experiments/pcbe/README.md)."""
