"""sascheck: checks the Linux tuning that SAS analytics needs, and reports it."""

__version__ = "0.1.0"
