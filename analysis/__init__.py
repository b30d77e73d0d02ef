"""Analysis of simulation outputs: metrics tables and plots."""
