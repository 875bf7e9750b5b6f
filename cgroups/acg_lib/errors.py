"""The one exception type acg raises for usage and set-up problems (exit status 2)."""


class AcgError(Exception):
    """A usage or set-up error; the message says what was wrong and what is accepted."""

    exit_status = 2
