"""A real Slurm cluster driven by any protocol decider (see adapter.py)."""
