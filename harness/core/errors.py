"""The three kinds of trouble, kept apart all the way up to the exit code."""


class PasskError(Exception):
    """Base class. `exit_code` is what the CLI exits with."""

    exit_code = 1


class InputError(PasskError):
    """Bad input or usage the user can fix. The message names the file (and line)."""

    exit_code = 2


class UnbuildableEnvironment(InputError):
    """An environment this machine cannot build as its recipe asks (a package with no release for its
    Python, a build that fails): the candidates that need it get `error environment_error` rows naming
    why; the rest of the run goes on."""


class HarnessError(PasskError):
    """A failure of the harness it could not recover from. Results written so far are kept."""

    exit_code = 1


class SandboxUnavailableError(HarnessError):
    """The sandbox could not run a job for reasons not caused by the candidate
    (engine gone, container died, supervisor crashed). The job is retried, never scored."""
