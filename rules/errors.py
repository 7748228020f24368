"""The one base class of errors about what a user gave sascheck (a site value, a root, a
results file, an output path, a fix that cannot be made). The command line prints any of
them as one line and exits 1; it can catch them all without importing the modules that
raise them (and their heavy dependencies)."""


class UserInputError(Exception):
    """A problem with the user's input, explained in the message. Anything else that
    reaches the command line is a bug, shown with its traceback (sascheck/cli.py)."""


class UnknownNameError(UserInputError, KeyError):
    """A name the user gave (a profile) that sascheck does not know; a KeyError too, for
    callers that look names up."""

    def __str__(self) -> str:  # KeyError's str() would quote the message
        return str(self.args[0]) if self.args else ""
