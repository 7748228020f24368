"""One small parser per kind of host file. Each takes text and returns plain data.

Parsers never touch the file system and never raise on odd input: what they
cannot understand they skip, and say so where the caller needs to know.
"""
