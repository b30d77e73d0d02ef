"""The `joulesim` command line: run, simulate, decide."""
