"""Checkpoints: an object graph written as data and read back without running anything the
file names (state_codec.py), and the file that holds it, checksummed (checkpoint_file.py).
What of a run a checkpoint holds, and how a run resumes, is the API's (api/run_checkpoint.py).
Imports no other simulator sub-package."""
