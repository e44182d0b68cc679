# mprun-heap: controller
# With the table file refused, diag parses the board file alone so that the
# sensors can still be read; the board file's parser is forgotten as soon as
# it has given the board, so that its code is not in the heap beside the
# switch bank.
import sys

import memory
from appkit import Table, table_dict, write_files
from diagkit import _out

import diag

_PARSER = "sicbo.board"


def _forget_parser(kept):
    """memory.forget as MicroPython's, for the board file's parser alone: on
    CPython memory.forget keeps every module (the first one forgotten is
    kept here, to be put back)."""

    def forget(names):
        import sicbo

        if _PARSER in names:
            m = sys.modules.pop(_PARSER, None)
            if m is not None and not kept:
                kept.append(m)
            if hasattr(sicbo, "board"):
                delattr(sicbo, "board")

    return forget


def test_sensors_read_with_the_table_file_refused_after_its_parser_is_forgotten():
    t = Table()
    t.close()
    write_files(t.folder, None, table_dict(edition=1999))  # the pair is refused
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    kept = []
    real_forget, settle = memory.forget, diag._settle
    emulate = sys.implementation.name != "micropython"
    if emulate:
        memory.forget = _forget_parser(kept)
        memory.forget((_PARSER,))  # as start-up leaves it on the board
    loaded_when_read = []

    def _settle(sw, ms=None):
        loaded_when_read.append(_PARSER in sys.modules)
        settle(sw, ms)

    diag._settle = _settle
    try:
        assert _PARSER not in sys.modules  # this command loads it
        del _out[:]
        diag.sensors()
    finally:
        diag._settle = settle
        if emulate:
            memory.forget = real_forget
            if kept:
                import sicbo

                sys.modules[_PARSER] = sicbo.board = kept[0]
    assert len(_out) > 5 and not [x for x in _out if "not available" in x or "failed" in x], _out
    assert loaded_when_read == [False], "the board file's parser still loaded"
