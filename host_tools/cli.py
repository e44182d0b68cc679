"""`sicbo`: the host command of the Sic Bo table controller.

Each subcommand is a module in host_tools/commands/ that defines NAME, HELP,
add_arguments(parser) and run(args) -> exit status. Exit status 2 with one
line on stderr means the input was refused.
"""

import argparse
import importlib
import os
import pkgutil
import sys

import host_tools.commands as commands


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="sicbo", description="Sic Bo table controller: rules, board tools, virtual board.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module("host_tools.commands." + info.name)
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def _stacks_on_sigusr1():
    # A command that hangs (a test's Ctrl-C not taken) shows where on SIGUSR1.
    import faulthandler
    import signal

    try:
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    except (AttributeError, ValueError, OSError):
        pass  # no such signal here, or stderr is not a file (main called in-process)


def main(argv=None):
    args = build_parser().parse_args(argv)
    _stacks_on_sigusr1()
    try:
        return args._run(args)
    except UsageError as e:
        print("sicbo %s: %s" % (args.command, e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error of ours.
        # Point stdout at /dev/null so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
