"""The simulator process: platform, jobs and profiles, simulated time, energy, outputs."""
