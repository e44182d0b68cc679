# Start-up of the table controller, run once per power-on by faults.boot
# (main.py's entry: faults.start) and then forgotten (memory.forget): the
# named stages below, in order, each telling the power-on's fault path
# (faults.Faults) where it is, up to the controller made; then the table is
# resumed (resumption.py), this module's code already gone from the heap.
# The tests and the benches start a table exactly this way (faults.boot).
#
#   files     the board and table files, from their checked cache (or parsed,
#             cached and a restart), the settlement table; the parsers dropped
#   journal   the journal's read buffer, then every module and large object
#             of the running table, while the heap is whole
#   replay    the journal through the one buffer, its garbage collected
#   hardware  the adapters, all off (the lamps first: the fault pattern)
#
# Refusals (files, recovery mode) come before any output is driven or the
# watchdog armed. Memory: a boot is the heap's peak; the order keeps it
# close to the running table's (docs/design.md, Heap).

import gc

import memory
from micropython import const

from sicbo import events as E

_NONE = const(0)
_RESTART = const(1)  # the files were checked and cached: start again
_ROUND_BYTES = const(256)  # a round's journal (244 bytes measured) and its share of checkpoints

# Start-up's own module, forgotten once the controller is made (the files'
# readers and the adapters' builders, hw.build and hw.inputs, go sooner, once
# done with; what resumption.py uses, after it).
BOOT_MODULES = ("startup",)


def _need(faults, name):
    # Import a module of the running table now, named to the fault path (a
    # damaged file is named with its path). One function: every name
    # start-up interns stays.
    gc.collect()  # the code fills the heap's holes from the bottom
    faults.load(name)


def stage_files(faults, board_path, table_path, say):
    """(board, cfg, table, config_id, _NONE), or (None, ..., _RESTART) when
    the files were just checked and cached, or None (one line said) when
    they are refused."""
    faults.stage = E.F_FILES
    _need(faults, "tablefiles")
    import tablefiles  # forgotten at the end of this stage

    try:
        _need(faults, "sicbo.cache")
        config = tablefiles.config_id(board_path, table_path)
        got = tablefiles.cached(board_path, config)
        if got is None:
            # No cache of these files: parse them (the parsers are loaded only
            # for this), keep the result, and start again: the boot that runs
            # the table never has the parsers' garbage in its heap.
            for name in tablefiles.PARSERS:
                _need(faults, name)
            board, cfg = tablefiles.parse(board_path, table_path)
            # Said once per board file (the boot that checks it), not on every
            # boot: diag.status() counts them, sicbo deploy lists them.
            for w in board.warnings:
                say("sicbo: board warning: " + w)
            if tablefiles.keep(board_path, board, cfg, config):
                say("sicbo: configuration checked and kept in %s: restarting"
                    % tablefiles.cache_path(board_path))
                return None, None, None, config, _RESTART
            say("sicbo: cannot write %s: starting from the parsed files"
                % tablefiles.cache_path(board_path))
        else:
            board, cfg = got
        del got
        _need(faults, "sicbo.settle")
        from sicbo.settle import SettlementTable

        table = SettlementTable(cfg)
    except (OSError, ValueError) as e:
        if faults.module is not None:
            raise  # a code file that does not load: a fault, not the files refused
        # A ConfigError (the parsers') names its field; sicbo.errors is not
        # imported for the test: a boot with the cache never loads it.
        msg = str(e) if hasattr(e, "field") else "cannot read %s or %s: %r" % (
            board_path, table_path, e)
        say("sicbo: configuration refused, table not started: " + msg)
        return None
    finally:
        # The lowest heap before the rest loads.
        memory.forget(("tablefiles",) + tablefiles.PARSERS)
    gc.collect()
    faults.set_table(table)
    faults.board = board
    return board, cfg, table, config, _NONE


def stage_journal(faults, board, cfg, table, journal_dir):
    """The journal's store and read buffer, the round machine with its meters,
    the dice reader, and every module of the running table: made while the
    heap is whole (a module's code and a large buffer need large free
    blocks)."""
    faults.stage = E.F_JOURNAL
    _need(faults, "journal_store")
    from journal_store import JournalStore

    if board.floor is None:
        store = JournalStore(journal_dir)
    else:
        # The journal is the floor's outbox: what the floor has not
        # acknowledged stays, up to the table file's budget.
        _need(faults, "link.source")
        from link.source import OutboxStore

        store = OutboxStore(journal_dir, backlog_bytes=cfg.backlog_rounds * _ROUND_BYTES,
                            keep_when_full=cfg.when_full == "stop_new_rounds")
    buf = store.read_buffer()
    _need(faults, "sicbo.meters")
    _need(faults, "sicbo.roundmachine")
    from sicbo.meters import Meters
    from sicbo.roundmachine import RoundMachine

    t = board.timings
    m = RoundMachine(cfg, table, pulses=t["pulse_count"], pulse_on_ms=t["pulse_on_ms"],
                     pulse_off_ms=t["pulse_off_ms"], shaker_ms=t["electric_run_ms"],
                     bell_ms=t["bell_ms"])
    m.meters = Meters(table.channels, table)  # its checkpoint buffer: a large block, made first
    reader = None
    if board.reader is not None:
        _need(faults, "sicbo.dicereader")
        from sicbo.dicereader import DiceReader

        reader = DiceReader()
    _need(faults, "controller")
    return store, buf, m, reader


def stage_link(faults, board, journal_dir, secrets, say):
    """What the floor link is made of, when the board file has one
    (link.plan.made: the secrets read now), and the controller that runs
    it loaded (link.table); None without a link. The link itself, its code
    and its buffers, is made by the link task's first pass
    (LinkedController.link_pass), after the boot's peak and once start-up's
    modules are forgotten."""
    if board.floor is None:
        return None
    _need(faults, "link.plan")
    from link.plan import made

    plan = made(board, journal_dir, secrets, say)
    del made
    memory.forget(("link.plan",))
    if plan is not None:
        _need(faults, "link.table")
    return plan


def stage_hardware(faults, board, table, ticks_ms):
    """The adapters, all off, made into the fault path's Hardware as they
    come (the lamps first)."""
    faults.stage = E.F_HARDWARE
    from hw import Hardware

    hw = faults.hw = Hardware()
    for name in ("hw.lamps", "hw.switches", "hw.solenoid", "hw.bell", "hw.build"):
        _need(faults, name)
    from hw import build

    gc.collect()  # the adapters' objects fill the holes from the bottom too
    build.build(board, table.row_bytes, ticks_ms=ticks_ms, watchdog=False, hw=hw)
    faults.lamps = hw.lamps
    faults.board = None  # the lamps exist: the running table keeps no board file here
    hw.all_off()
    del build  # a live reference to the module's code would keep it all
    memory.forget(("hw.build", "hw.inputs"))
    # hw.watchdog, armed only at the end of start-up, loaded into the
    # builders' room: not beside them at the boot's peak, and not first at
    # resume, on the heap the replay fragmented (that import failed there).
    _need(faults, "hw.watchdog")
    return hw


def stage_replay(faults, store, m, buf):
    """The journal replayed into the machine (its state and its meters)
    through the one buffer, before the adapters: the buffer and the
    replay's garbage are gone by the boot's peak (the adapters' builders
    beside every module of the table). Returns the last wall-clock time the
    journal knows (stage_clock), None if none."""
    faults.stage = E.F_JOURNAL
    store.boot(m.feed, buf)
    del buf
    gc.collect()
    return m.config_wall  # before this boot's records carry the clock as it is now


def open_table(faults, board_path, table_path, journal_dir, cause=0, rtc=None,
               ticks_ms=None, log=print):
    """The stages up to the controller made (module doc). Returns (Controller
    or None, restart, what resumption.resume_table needs: (cfg, the
    watchdog's timeout, config id, the journal's last wall-clock time, the
    link's plan)): None, one line said, when the table must not run
    (refused files, recovery mode), restart True when the files were just
    cached (the caller resets). Clock (rtc, ticks_ms), journal folder and log
    (start-up's lines and the journal's) are arguments, so that tests start
    the table exactly this way. `faults` (faults.Faults) is the power-on's
    fault path."""
    say = log if log is not None else print  # log None: no journal lines, these still
    files = stage_files(faults, board_path, table_path, say)
    if files is None:
        return None, False, None
    board, cfg, table, config, restart = files
    if restart == _RESTART:
        return None, True, None
    from hw.inputs import confirm_held

    held = confirm_held(board)
    del confirm_held  # or hw.inputs stays in the heap, forgotten or not
    if held:  # the dealer's confirm key held at power-on
        say("sicbo: recovery mode (confirm key held at power-on): app not started")
        try:
            import access  # J_RECOVERY, after a replay; says why it could not

            access.recovery(cause, journal_dir, rtc, say)
        except Exception:  # noqa: BLE001 - recovery mode reaches the REPL whatever
            say("sicbo: recovery mode not journaled")
        return None, False, None
    store, buf, m, reader = stage_journal(faults, board, cfg, table, journal_dir)
    plan = stage_link(faults, board, journal_dir,
                      board_path[:board_path.rfind("/") + 1] + "secrets", say)
    seen = stage_replay(faults, store, m, buf)
    del buf
    hw = stage_hardware(faults, board, table, ticks_ms)
    if plan is None:
        from controller import Controller
    else:
        from link.table import LinkedController as Controller

    from hw import WallClock

    ctl = Controller(hw, store, WallClock(rtc), log, table, m, faults, reader)
    # Of the board file only what the resumption needs: the rest is garbage
    # before the MAC chain's code loads.
    return ctl, False, (cfg, board.timings["watchdog_ms"], config, seen, plan)
