# A boot that cannot run the table: the damaged file named in the fault, and
# the board out of service after E.MAX_FAILED_BOOTS failed boots. A module of
# its own, loaded only then: a boot that runs the table never holds its code,
# and start-up's own file may be the damaged one (faults.boot imports this
# instead of start-up once the failed boots are counted out).

import memory


def name_file(faults, name):
    """The fault names the file `name` (a module) was loaded from on the
    board's filesystem ("/hw/bell.mpy"); a frozen module has none."""
    import os

    base = "/" + name.replace(".", "/")
    for path in (base + ".py", base + ".mpy", base + "/__init__.py", base + "/__init__.mpy"):
        try:
            os.stat(path)
            faults.module = "%s (%s)" % (name, path)
            return
        except OSError:
            pass
    faults.module = name


def out_of_service(faults, n, text, board_path=None, table_path=None, log=print):
    """The board after E.MAX_FAILED_BOOTS failed boots: every output low, the
    fault pattern on the lamps if the files allow it (through the lamp
    driver alone), two lines saying what failed and what to do; no watchdog.
    Paths default to the board's (faults.BOARD_FILE, TABLE_FILE). n 0: the
    fault just contained could not be counted (faults.start: no reset)."""
    if n:
        log("sicbo: OUT OF SERVICE after %d failed boots (last: %s). Outputs are off."
            % (n, text))
    else:
        log("sicbo: OUT OF SERVICE: the fault could not be counted in %s (the filesystem "
            "refuses it: full?), so no reset: it would fault again for ever. Outputs are off."
            % faults.path)
    log("sicbo: see diag.status(); once mended: import diag; diag.clear_fault(); "
        "machine.reset()")
    try:
        from faults import BOARD_FILE, TABLE_FILE

        board_path = board_path or BOARD_FILE
        table_path = table_path or TABLE_FILE
        import tablefiles

        config = tablefiles.config_id(board_path, table_path)
        got = tablefiles.cached(board_path, config)
        board, cfg = got if got is not None else tablefiles.parse(board_path, table_path)
        from sicbo.settle import SettlementTable

        table = SettlementTable(cfg)
        memory.forget(tablefiles.PARSERS)
        from hw import build

        build.outputs_off(board)
        faults.set_table(table)
        faults.lamps = build.lamps(board, table.row_bytes)
    except Exception as e:  # noqa: BLE001 - the lamps are a courtesy here
        log("sicbo: fault lamps not lit: %s %s" % (type(e).__name__, e))
        _outputs_off(board_path, log)
        return
    faults.lamps_on()  # or it says why not


def _outputs_off(board_path, log):
    # The files refused (a table file that fails, a cache and a parse that
    # fail): the board file alone says where the outputs are, and they are
    # driven low, not left to the pins' state after the reset.
    try:
        import tablefiles

        from hw import build
        from sicbo.board import parse_board

        build.outputs_off(parse_board(tablefiles.read_json(board_path)))
    except Exception as e:  # noqa: BLE001 - out of service all the same
        log("sicbo: outputs not driven (reset state): %s %s" % (type(e).__name__, e))
