"""Energy budget (seed 001, chapter 6, §6.5) as a joulesim campaign (experiments/energy_budget/README.md)."""
