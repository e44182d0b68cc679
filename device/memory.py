# The heap the firmware's code holds. On the board, code loaded from .mpy
# files lives in the heap for as long as its module is referenced: start-up's
# own modules (the file parsers, start-up itself) are forgotten once the
# table runs, so that the garbage collector takes their code.


def forget(names):
    """Forget these modules (nothing that runs the table may refer to them).
    MicroPython only: on CPython (host tools, pytest) modules stay, since a
    re-import there would make new classes."""
    import sys

    if sys.implementation.name != "micropython":
        return
    for name in names:
        if sys.modules.pop(name, None) is None:
            continue
        dot = name.rfind(".")
        if dot > 0:
            pkg = sys.modules.get(name[:dot])
            if pkg is not None and hasattr(pkg, name[dot + 1:]):
                delattr(pkg, name[dot + 1:])
