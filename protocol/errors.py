"""Errors that end a run with a readable message and a non-zero exit status.

The statuses (docs/reference/reliability.md): 1 any other error, 2 an input file or
command-line value refused before any output is written, 3 a protocol violation, 4 a decision that
cannot be applied, 5 a decider unavailable, 6 an exception in a decider's own code (cli/main.py),
7 a run past its wall-clock limit, 8 a Slurm command that failed (adapters/slurm), 9 an input
found wrong during the run (RUN_INPUT_EXIT), 130 Ctrl-C.
"""


class JoulesimError(Exception):
    """Base of every error joulesim reports to a user without a traceback.

    `exit_code` is the process exit status the CLI uses for it.
    """

    exit_code = 1


class DeciderInputError(JoulesimError):
    """A decider cannot schedule this run's inputs (a node decider on a platform without nodes,
    a job without the walltime it needs...): bad input, found by the decider. A decider's own
    plain JoulesimError is reported as this (protocol.decider.Decider.handle)."""

    exit_code = 2


class ProtocolError(JoulesimError):
    """A message on the wire breaks the Batsim 4 protocol (shape, type or value)."""

    exit_code = 3


class DecisionError(JoulesimError):
    """A well-formed decision that cannot be applied (unknown job, busy host, ...)."""

    exit_code = 4


class DeciderUnavailableError(JoulesimError):
    """The decider crashed, exited, or did not answer within the timeout."""

    exit_code = 5


class RunTimeLimitError(JoulesimError):
    """A run went past the wall-clock time limit it was given (e.g. a campaign's `timeout`)."""

    exit_code = 7


#: The exit status of an input found wrong while the run goes on, once its outputs are open (an
#: SMPI rank trace that deadlocks, no route between two zones, found when a message first goes
#: there): an InputError, given this status by Simulation.run; the outputs written so far are kept.
#: Not 2, which says that nothing was written.
RUN_INPUT_EXIT = 9
