"""Subcommands of `sicbo`, one module each (see host_tools/cli.py)."""
