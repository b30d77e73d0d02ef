"""Errors in the files a user gives the simulator (platform, workload, events)."""

from joulesim.protocol.errors import JoulesimError


class InputError(JoulesimError):
    """A malformed or inconsistent input file.

    The message always names the file, the field (or line) and how to fix it.
    """

    exit_code = 2

    def __init__(self, path: str, where: str, problem: str, fix: str = ""):
        self.path = str(path)
        self.where = where
        self.problem = problem
        self.fix = fix
        message = f"{self.path}: {where}: {problem}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)
