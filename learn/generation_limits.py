"""Bounds of `joulesim learn generate`'s counts, far beyond what a study needs.

Refused with the limit named rather than left to end in a MemoryError, a hang or a traceback
after the work (`--pairs 1e30`, `--seed 2**80`). Plain numbers in a module without imports, so
that the CLI's --help shows them without loading numpy and pandas.
"""

#: Pairs of one run: the part files are numbered with six digits (32 million scored jobs).
MAX_PAIRS = 1_000_000
#: Permutations per pair: 400 times the paper's 250,000; a worker holds 16 bytes per permutation
#: of the pair it scores (1.6 GB at the bound).
MAX_PERMUTATIONS = 100_000_000
#: Processes of the local pool (one machine; a Dask cluster for more).
MAX_WORKERS = 1024
#: The table's `seed` column is int64.
MAX_SEED = 2 ** 63 - 1
