# Diagnostics for the table technician, at the board's REPL:
#
#   >>> import diag
#   >>> diag.help()
#
# The app is not running here (mpremote's raw REPL or Ctrl-C stopped it), so
# the state comes from the journal, exactly as the app would resume it, and
# the sensors are read live. diag works in every state the board can be in
# (files refused, out of service, a fault, the clock lost, little memory):
# reading the journal needs no configuration, each command loads only what it
# needs, and a command that cannot do its part says why in one line, never a
# traceback. Tests that move something (solenoid, bell, lamp walk) are
# refused unless the journal says the table is idle and the cover is on with
# both clasps fastened. Each test, the sensors read and a fault cleared are
# journaled (J_DIAG, by name), the clock set too (set_clock: J_CLOCK), as
# technician access (access.py). Output fits an 80-column terminal.

import gc
import time

import faults

from sicbo import events as E
from sicbo import records as R
from sicbo import signals as S

_ctx = None


class _Context:
    """The files, the journal and the board's adapters, each made when a
    command first needs it; a part that cannot be made keeps why."""

    def __init__(self, board_path, table_path, journal_dir, fault_file):
        self.board_path = board_path
        self.table_path = table_path
        self.journal_dir = journal_dir
        self.fault_file = fault_file
        self._files = None  # (board, cfg) or the refusal's text
        self._board = None  # the board file alone (False: refused too), when the pair is refused
        self._table = None  # the settlement table, or why there is none
        self.switches = None
        self.outputs = {}  # adapter name -> adapter (hw/)
        self.walked = None  # the _Walk of the last state(): the journal's damage

    def files(self):
        """(board, cfg), or raise _Refused with the refusal as the board's boot
        would say it."""
        if self._files is None:
            try:
                self._files = _read_files(self.board_path, self.table_path)
            except MemoryError:
                # Once more, the parsers forgotten and the heap collected: the
                # first parse's garbage may still have been held (the
                # collector is conservative) at its peak.
                gc.collect()
                self._files = _read_files(self.board_path, self.table_path)
        if isinstance(self._files, str):
            raise _Refused(self._files)
        return self._files

    def drop(self):
        """Let go of what was made (made again when next needed)."""
        self._files = self._board = self._table = self.switches = self.walked = None
        self.outputs = {}

    def board(self):
        """The board file: the pair's when they are accepted, else parsed
        alone (a refused table file leaves the sensors readable); raise
        _Refused when the board file itself is refused."""
        try:
            return self.files()[0]
        except _Refused:
            if self._board is None:
                self._board = _read_board(self.board_path)
            if self._board is False:
                raise
            return self._board

    def table(self):
        """The settlement table, or None when the files are refused or it
        cannot be made (a damaged sicbo/settle file): the journal is read
        without it."""
        if self._table is None:
            try:
                _board, cfg = self.files()
                from sicbo.settle import SettlementTable

                self._table = SettlementTable(cfg)
            except _Refused as e:
                self._table = str(e)
            except MemoryError as e:
                # a board in trouble: the journal is still read and said,
                # without what needs the table (wins per area)
                _board = cfg = None
                gc.collect()
                self._table = "not enough memory for the settlement table (%s; %d bytes " \
                    "free)" % (e, gc.mem_free())
            except Exception as e:  # noqa: BLE001 - a damaged code file: say it, read on
                self._table = "cannot make the settlement table: %s %s" % (
                    type(e).__name__, e)
        return None if isinstance(self._table, str) else self._table

    def no_table(self):
        """Why there is no settlement table (after table() gave None)."""
        return self._table if isinstance(self._table, str) else "files refused"

    def state(self):
        """The round as the journal leaves it (a RoundState: no configuration
        needed)."""
        from sicbo.roundstate import RoundState

        rs = RoundState()
        w = self.walked = _Walk()
        w.read(self._store(), rs, rs.take)
        return rs

    def _store(self):
        from journal_store import JournalStore

        return JournalStore(self.journal_dir)

    def inputs(self):
        """The switch bank, built alone from the board file."""
        if self.switches is None:
            board = self.board()
            from hw import inputs

            self.switches = inputs.make_switches(board)
        return self.switches

    def record(self, what, detail=0):
        """Journal one J_DIAG record (the test, its detail) after the journal's
        last one (access.py: a segment of this session's)."""
        import access

        return access.record(R.J_DIAG, bytes((what, detail, 0, 0, 0, 0, 0, 0)),
                             self.journal_dir)


class _Refused(Exception):
    pass


class _Walk:
    """The journal read as the boot reads it (every segment through one
    scanner), segment by segment: what the scanner could not read as
    records is said where it is, as `sicbo journal` says it (corrupt bytes
    between records, skipped; torn bytes at a segment's end, discarded);
    and records are missing where one taken in order skips sequence numbers."""

    def __init__(self):
        self.bad = []  # [(segment name, corrupt bytes, torn bytes)]
        self.gaps = []  # the newest [(first seq missing, last, first round, last round)]
        # The record of the alarm the round state holds: (seq, round, code,
        # detail), kept as the replay keeps its flag, so that status names it.
        self.alarm = None

    def read(self, store, order, take, on_gap=None):
        """take(data, off, gap) for every record (order: the RoundState it
        takes them into); on_gap(gap) after the record that follows a gap."""
        sc = order.scanner

        def fn(b, o, gap):
            seq0 = order.seq
            rid0 = order.round
            take(b, o, gap)
            t = b[o + R.OFF_TYPE]
            if (t == R.J_ALARM or t == R.J_VIOLATION) and order.alarm:
                p = o + R.HEADER
                self.alarm = (order.seq, order.round, b[p + R.P_CODE], b[p + R.P_DETAIL])
            elif not order.alarm:
                self.alarm = None
            if seq0 and order.seq > seq0 + 1:
                g = (seq0 + 1, order.seq - 1, rid0,
                     order.round - (b[o + R.OFF_TYPE] == R.J_ROUND))
                self.gaps = self.gaps[-7:] + [g]
                if on_gap is not None:
                    on_gap(g)

        buf = store.read_buffer()
        for n in store.segments():
            bad = sc.corrupt_bytes + sc.torn_bytes
            tail = 0
            for piece in store.pieces(n, buf):
                t0 = sc.torn_bytes
                sc.walk(piece, fn)
                # The last piece's torn bytes end the segment; a window that
                # ended in damage the next went on from was corrupt.
                tail = sc.torn_bytes - t0
            bad = sc.corrupt_bytes + sc.torn_bytes - bad
            if bad:
                p = store.path(n)
                self.bad.append((p[p.rfind("/") + 1:], bad - tail, tail))
        store.close()

    def damage(self):
        """Short texts of what could not be read and the records missing."""
        out = []
        for i, what in ((1, "corrupt bytes skipped"), (2, "torn bytes discarded")):
            segs = [d for d in self.bad if d[i]]
            if segs:
                out.append("%d %s (in %s)" % (sum(d[i] for d in segs), what,
                                              ", ".join(d[0] for d in segs)))
        if self.gaps:
            out.append("records missing: " + ", ".join(_seqs(g) for g in self.gaps))
        return out


def _seqs(g):
    return "seq %d" % g[0] if g[0] == g[1] else "seq %d..%d" % (g[0], g[1])


# The configuration id of the files last read (J_CONFIG's, the floor's
# status `config`: what an approval names), for status to show.
_CONFIG_ID = [None]


def _files_reader():
    """tablefiles, loaded now: loaded at diag's import, a damaged file of it
    would take every command down, the journal's too. _Refused says why
    it cannot be loaded (the file named, as a failed boot's fault)."""
    f = faults.Faults(None, log=None)
    try:
        return f.load("tablefiles")
    except MemoryError:
        raise  # not the file's fault: the command says memory is short
    except Exception as e:  # noqa: BLE001 - said, not raised
        # f.module: "tablefiles (/tablefiles.mpy)", as a failed boot names it
        raise _Refused("cannot load the files' reader: loading %s: %s %s"
                       % (f.module, type(e).__name__, e)) from None


def _read_files(board_path, table_path):
    """(board, cfg) from the configuration cache (or the files, parsed), or
    the text of why they are refused."""
    import memory

    try:
        tablefiles = _files_reader()
    except _Refused as e:
        return str(e)
    try:
        got = None
        try:
            config = tablefiles.config_id(board_path, table_path)
            _CONFIG_ID[0] = config
            got = tablefiles.cached(board_path, config)
        except MemoryError:
            raise
        except Exception:  # noqa: BLE001 - no usable cache (or its code damaged): parse
            pass
        if got is None:
            got = tablefiles.parse(board_path, table_path)
        return got
    except (OSError, ValueError) as e:
        if hasattr(e, "field"):
            return "configuration refused: %s" % e
        return _unreadable(tablefiles, board_path, table_path, e)
    finally:
        memory.forget(tablefiles.PARSERS + ("tablefiles",))  # not needed again here


def _unreadable(tablefiles, board_path, table_path, e):
    """'cannot read FILE: why', the file named: each read alone (the pair's
    error does not say which it came from)."""
    for path in (board_path, table_path):
        try:
            tablefiles.read_json(path)
        except MemoryError:
            raise
        except Exception as e2:  # noqa: BLE001 - said
            return "cannot read %s: %s" % (path, _error_text(e2))
    return "cannot read %s or %s: %s" % (board_path, table_path, _error_text(e))


def _error_text(e):
    if isinstance(e, OSError) and e.args and e.args[0] == 2:  # ENOENT
        return "no such file"
    return "%s %s" % (type(e).__name__, e)


def _read_json(path):
    import json

    with open(path) as f:
        return json.load(f)


def _read_board(board_path):
    """The board file alone, or False when it cannot be read or is refused
    (the pair's refusal already says why)."""
    import sys

    import memory

    before = set(sys.modules)
    try:
        from sicbo import board as boardfile

        return boardfile.parse_board(_read_json(board_path))
    except (OSError, ValueError, ImportError):
        return False
    finally:
        memory.forget([n for n in sys.modules if n not in before])  # the parser's code


def _rtc():
    from machine import RTC

    return RTC()


def _wall(now):
    from hw import WallClock

    w = WallClock(_rtc())
    w.refresh(now)
    return w.seconds(now)


def setup(board_path=faults.BOARD_FILE, table_path=faults.TABLE_FILE,
          journal_dir=faults.JOURNAL_DIR, fault_file=faults.FAULT_FILE):
    """Point diag at other files (tests, a second table); normally automatic."""
    global _ctx
    _ctx = _Context(board_path, table_path, journal_dir, fault_file)
    return _ctx


def _c():
    return _ctx if _ctx is not None else setup()


def _guard(name, fn, *args):
    # A command that cannot do its part says why in one line: a technician at
    # a board in trouble needs the rest of diag, not a traceback. What it
    # loaded (modules, the files read, the adapters) is let go after it: the
    # next command has the heap that this one had.
    import sys

    before = list(sys.modules)
    try:
        return fn(*args)
    except _Refused as e:
        print("%s: not available: %s" % (name, e))
    except MemoryError as e:
        gc.collect()
        # MicroPython says the allocation that failed ("... allocating N
        # bytes"): with the bytes free, whether the heap is short or in pieces.
        print("%s: not enough memory (%s; %d bytes free): reset the board, then run diag first"
              % (name, e, gc.mem_free()))
    except Exception as e:  # noqa: BLE001 - see above
        print("%s: failed: %s %s" % (name, type(e).__name__, e))
    finally:
        _let_go(before)
    return None


def _let_go(before):
    """Forget the modules loaded since `before` and the context's parts."""
    import sys

    if _ctx is not None:
        _ctx.drop()
    gc.collect()  # what the context held, first: the forgetting needs a little room
    try:
        import memory

        memory.forget([n for n in sys.modules if n not in before])
    except MemoryError:
        pass  # the command said so; its modules stay until the board resets
    gc.collect()


def help():
    print("diag: Sic Bo table diagnostics")
    for name, what in (
            ("status()", "running or not and why, round, alarms, versions, heap"),
            ("sensors()", "live levels of every input, raw and debounced"),
            ("lamps(ms=300)", "light each lamp channel in turn, naming its area"),
            ("solenoid()", "one test pulse (table idle, cover and clasps fastened)"),
            ("bell()", "one test ring (same conditions)"),
            ("recall(n=10)", "the last n rounds: dice, winning areas, voids"),
            ("meters()", "rounds, voids, alarms, violations, wins per area"),
            ("journal(n=20)", "the last n journal records"),
            ("clear_fault()", "journal the failed boots and clear them, then machine.reset()"),
            ("set_clock(t)", "set the RTC to t (RTC().datetime()'s tuple), journaled")):
        print("  diag.%-14s %s" % (name, what))


# ---- status -----------------------------------------------------------------

def status():
    _guard("status", _status)


def _status():
    c = _c()
    n, entries = faults.read_file(c.fault_file)
    running, rs = _why_not(c, n, entries)
    print("running   " + running)
    if n:
        print("faults    %d failed boot%s in a row%s" % (
            n, "" if n == 1 else "s", " - OUT OF SERVICE" if n >= E.MAX_FAILED_BOOTS else ""))
        for entry in entries[-3:]:
            print("          " + _fault_line(entry))
    refused = True
    try:
        _board, cfg = c.files()
        print("table     %s (edition %d, approval %s, effective %s)" % (
            cfg.name, cfg.edition, cfg.approval["reference"], cfg.approval["effective"]))
        if _CONFIG_ID[0] is not None:
            from binascii import hexlify

            print("config    id %s (J_CONFIG; the floor's approvals name it)"
                  % hexlify(_CONFIG_ID[0]).decode())
        refused = False
    except _Refused as e:
        print("table     files refused: %s" % e)
    _board = cfg = None  # not held through the sections below: the heap in one piece
    gc.collect()
    _guard("journal", _status_journal, c, rs)
    rs = None
    _guard("sensors", _status_sensors, c)
    _guard("firmware", _status_firmware)
    s = _wall(time.ticks_ms())
    print("clock     %s" % (_time_text(s) if s is not None else
                            "RTC not set: sicbo diag or sicbo deploy sets it"))
    gc.collect()
    print("heap      %d bytes free, %d used" % (gc.mem_free(), gc.mem_alloc()))
    if refused:
        return  # no board warnings to read: not parsed again to be refused again
    try:
        board, _cfg = c.files()
        if board.warnings:
            print("board     %d pin%s on strapping pins, each with a reason given "
                  "(sicbo deploy lists them)" % (len(board.warnings),
                                                 "" if len(board.warnings) == 1 else "s"))
    except _Refused:
        pass


def _why_not(c, n, entries):
    """Whether the table runs once the board is reset, and if not why and
    what to do: the checks the boot makes, in its order:
    (text, the journal's RoundState when it was read, else None)"""
    if n >= E.MAX_FAILED_BOOTS:
        return ("no: OUT OF SERVICE after %d failed boots; mend the cause, then "
                "diag.clear_fault() and machine.reset()" % n), None
    try:
        board, cfg = c.files()
    except _Refused as e:
        return "no: %s; fix the file and sicbo deploy again" % e, None
    from hw.inputs import confirm_held

    if confirm_held(board):
        return "no: recovery mode (the confirm key is held): release it and reset", None
    from sicbo.approval import refusal

    rs = c.state()  # read once: the journal's section says it too
    import memory

    try:
        config = _files_reader().config_id(c.board_path, c.table_path)
    except _Refused as e:
        return "no: %s" % e, rs
    finally:
        memory.forget(("tablefiles", "sicbo.cache"))
    why = refusal(cfg, _wall(time.ticks_ms()), rs, config)
    if why is not None:
        return "no: %s" % why, rs
    if n:
        return "yes, after %d failed boot%s (see faults below)" % (n, "" if n == 1 else "s"), rs
    return "yes: the app resumes round %d at machine.reset()" % rs.round, rs


def _fault_line(entry):
    from sicbo import logtext, texts

    st, kind, _detail, journaled, text = entry
    return "%s: %s%s" % (logtext.name_of(texts.FAULT_STAGES, st, "stage", 1), text,
                         "" if journaled else " (not yet in the journal)")


def _status_journal(c, rs=None):
    from sicbo import logtext, texts

    if rs is None:
        rs = c.state()
    print("state     %-8s round %d  boot %d  journal seq %d" % (
        logtext.name_of(texts.STATE_NAMES, rs.state, "state", 0), rs.round, rs.boot, rs.seq))
    flags = []
    if rs.alarm:
        a = c.walked.alarm if c.walked else None
        # what the alarm lamp is for, as its record says it
        flags.append("ALARM" if a is None else "ALARM: %s (journal %d, round %d)" % (
            logtext.message_text(a[2], a[3]), a[0], a[1]))
    if rs.violation:
        flags.append("VIOLATION")
    if rs.open_seq:
        flags.append("round %d unfinished" % rs.round)
    if rs.damaged:
        flags.append("%d damaged record%s" % (rs.damaged, "" if rs.damaged == 1 else "s"))
    flags = ([", ".join(flags)] if flags else []) + (c.walked.damage() if c.walked else [])
    print("alarms    " + ("\n          ".join(flags) if flags else "none"))
    if rs.has_result:
        print("result    %d-%d-%d" % (rs.dice[0], rs.dice[1], rs.dice[2]))
    store = c._store()
    print("journal   %d segments, %d bytes" % (store.files(), store.total_bytes()))
    print("chain     " + _chain_line(store))
    store.close()


def _chain_line(store):
    # The MAC chain (sicbo/chain.py): whether records are authenticated, and
    # the head to take off the table (sicbo journal --verify KEYSTORE --head).
    import os

    from journal_store import PROVISION_NAME

    try:
        os.stat(store.folder + "/" + PROVISION_NAME)
        pending = "; a provisioning waits for the next boot"
    except OSError:
        pending = ""
    ch = store.open_chain()
    if ch is None:
        return ("KEY FILE DAMAGED: records not authenticated" if store.chain_damaged else
                "none: records not authenticated (sicbo deploy --provision)") + pending
    ch.catch_up(store)  # the key file may be a batch behind the journal
    if not ch.first:
        return "provisioning %d taken, its first record not yet written%s" % (ch.ident, pending)
    return "provisioning %d since seq %d, head %s%s" % (ch.ident, ch.first, ch.head_text(),
                                                        pending)


def _status_sensors(c):
    sw = c.inputs()
    _settle(sw)
    print("sensors   cover %s  clasps %s/%s  supervisor %s" % (
        _word(sw.level(S.COVER), "on", "off"), _word(sw.level(S.CLASP_LEFT), "fastened", "open"),
        _word(sw.level(S.CLASP_RIGHT), "fastened", "open"),
        _word(sw.level(S.SUPERVISOR), "on", "off")))


def _manifest():
    try:
        return _read_json("/manifest.json")
    except (OSError, ValueError):
        return None


def _status_firmware():
    man = _manifest()
    try:
        import frozen_id  # type: ignore[import-not-found]  # in frozen firmware only

        print("code      frozen firmware, code sha256 %s" % frozen_id.CODE_SHA256[:16])
    except ImportError:
        h = man.get("code_sha256") if man is not None else None
        print("code      deployed files, code sha256 %s" % (h[:16] if h else "unknown"))
    if man is None:
        import os

        try:
            os.stat("/manifest.prev")
            # sicbo deploy's mark of a copy under way: a power cut ended it.
            print("firmware  DEPLOY CUT SHORT: /manifest.prev, no /manifest.json: the files "
                  "may be two releases mixed; the table does not start: sicbo deploy again")
        except OSError:
            print("firmware  no /manifest.json (not deployed with sicbo deploy)")
        return
    files = man.get("files", {})
    print("firmware  %s  revision %s" % (man.get("firmware", "?"), man.get("revision", "?")))
    for name in ("board.json", "table.json"):
        h = files.get(name) or files.get("/" + name) or "?"
        print("config    %-11s sha256 %s" % (name, h[:16]))


def _time_text(seconds):
    from sicbo import logtext

    return logtext.wall_text(seconds)


def _word(level, yes, no):
    return yes if level else no


def _settle(sw, ms=None):
    """Poll the switches for longer than the debounce time."""
    wait = (ms if ms is not None else sw.debounce_ms * 3) + 1
    start = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), start) < wait:
        sw.update(time.ticks_ms())
        time.sleep_ms(2)
    ev = [0, 0, 0, 0]
    while sw.pop(ev):
        pass


# ---- sensors and the moving parts -------------------------------------------

def sensors():
    _guard("sensors", _sensors)


def _sensors():
    from hw.inputs import where

    c = _c()
    board = c.board()
    sw = c.inputs()
    c.record(E.D_SENSORS)
    _settle(sw)
    print("%-12s %-12s %4s %9s  %s" % ("signal", "wired to", "raw", "debounced", "state"))
    for i in range(len(board.inputs)):
        name, _gpio, _pull, inv = board.inputs[i]
        raw = sw.raw(i)
        level = raw ^ (1 if inv else 0)
        state = "FAULT" if sw.faulted(i) else ""
        print("%-12s %-12s %4d %9d  %s" % (name, where(board, i), raw, sw.level(i), state))
        if level != sw.level(i) and not state:
            print("%-12s       raw and debounced differ: bouncing or changing now" % "")


def _idle_and_closed(what):
    from sicbo import logtext, texts

    c = _c()
    c.files()
    rs = c.state()
    if rs.state != E.ST_IDLE:
        print("refused: %s test only with the table idle (state is %s, round %d)"
              % (what, logtext.name_of(texts.STATE_NAMES, rs.state, "state", 0), rs.round))
        return None
    sw = c.inputs()
    _settle(sw)
    if not (sw.level(S.COVER) and sw.level(S.CLASP_LEFT) and sw.level(S.CLASP_RIGHT)):
        print("refused: %s test only with the cover on and both clasps fastened" % what)
        return None
    return c


def solenoid():
    return bool(_guard("solenoid", _solenoid))


def _solenoid():
    c = _idle_and_closed("solenoid")
    if c is None:
        return False
    board, _cfg = c.files()
    if "solenoid" not in board.outputs:
        print("refused: this board has no solenoid output")
        return False
    from hw import build

    t = board.timings
    sol = build.solenoid(board)
    c.record(E.D_SOLENOID)
    sol.start(1, t["pulse_on_ms"], t["pulse_off_ms"], time.ticks_ms())
    while sol.busy():
        time.sleep_ms(sol.update(time.ticks_ms()))
    sol.stop()
    print("solenoid: one pulse of %d ms (hard limit %d ms); forced offs %d"
          % (t["pulse_on_ms"], t["max_on_ms"], sol.forced_offs))
    return True


def bell():
    return bool(_guard("bell", _bell))


def _bell():
    c = _idle_and_closed("bell")
    if c is None:
        return False
    board, _cfg = c.files()
    from hw import build

    ms = board.timings["bell_ms"]
    b = build.bell(board)
    c.record(E.D_BELL)
    b.ring(time.ticks_ms(), ms)
    while b.ringing():
        b.update(time.ticks_ms())
        time.sleep_ms(10)
    print("bell: rang %d ms" % ms)
    return True


def lamps(ms=300):
    return bool(_guard("lamps", _lamps, ms))


def _lamps(ms):
    c = _idle_and_closed("lamp")
    if c is None:
        return False
    board, cfg = c.files()
    table = c.table()
    from hw import build
    from sicbo.settle import set_channel

    lamp = build.lamps(board, table.row_bytes)
    c.record(E.D_LAMPS)
    frame = bytearray(table.row_bytes)
    order = cfg.lamp_order
    for ch in range(len(order)):
        set_channel(frame, ch, 1)
        lamp.write(frame)
        print("channel %3d  %s" % (ch, order[ch] if order[ch] is not None else "(spare)"))
        time.sleep_ms(ms)
        set_channel(frame, ch, 0)
    lamp.write(frame)
    print("lamps: %d channels walked, all off" % len(order))
    return True


# ---- what the journal says ------------------------------------------------------

def _recall(c):
    """A Recall of the journal (the table's settlement when the files allow)."""
    from sicbo.recall import Recall

    rc = Recall(c.table())
    w = c.walked = _Walk()
    w.read(c._store(), rc.order, rc._take)
    return rc


def recall(n=10):
    _guard("recall", _recall_cmd, n)


def _recall_cmd(n):
    c = _c()
    rc = _recall(c)
    rounds = rc.last(n)
    if not rounds:
        print("no rounds in the journal")
        return
    w = c.walked
    table = c.table()
    if table is None:
        print("(%s: winning areas not shown)" % c.no_table())
    print("%6s %-8s %-7s %-19s %s" % ("round", "status", "dice", "when (UTC)", "winning areas"))
    for r in rounds:
        # Its status is the journal's last word on it: a record lost may
        # have said more (a payout, a void).
        gap = [g for g in w.gaps if g[2] <= r.round <= g[3]] if w else []
        print(_round_line(r, table, _seqs(gap[-1]) if gap else None, rc.restarts.get(r.round)))
    _damage_line(w)


def _round_line(r, table, missing=None, restart=None):
    from sicbo import logtext, texts

    dice = "%d-%d-%d" % tuple(r.dice) if r.dice is not None else "-"
    words = []
    if r.void_reason:
        words.append("void: " + logtext.name_of(texts.VOID_NAMES, r.void_reason, "reason", 1))
    elif r.dice is not None and table is not None:
        words = [code for code, _odds in r.winning_areas(table)]
    if restart is not None:
        # A "power cut" void says only that the board restarted: the boot says how.
        words.append("(restarted: " + logtext.name_of(texts.RESET_NAMES, restart, "reset cause")
                     + ")")
    if r.first_dice is not None and r.first_dice != r.dice:
        words.insert(0, "corrected from %d-%d-%d;" % tuple(r.first_dice))
    if missing is not None:
        words.insert(0, "%s MISSING;" % missing)
    when = r.started[2]
    when = _time_text(when)[:19].replace("T", " ") if when is not None else (
        "boot %d" % r.started[0])
    head = "%6d %-8s %-7s %-19s " % (r.round, r.status, dice, when)
    # Every winning area, wrapped under the first one within 80 columns.
    lines = []
    line = head
    for w in words:
        if len(line) + len(w) > 79 and line.strip() and len(line) > len(head):
            lines.append(line.rstrip())
            line = " " * len(head)
        line += w + " "
    lines.append(line.rstrip())
    return "\n".join(lines)


def meters():
    _guard("meters", _meters)


def _meters():
    from sicbo import logtext, texts

    c = _c()
    meters = _recall(c).meters
    table = c.table()
    d = meters.as_dict(table)
    wins = d.pop("wins", {})
    reasons = d.pop("void_reasons")
    for k in sorted(d):
        print("%-12s %s" % (k, d[k]))
    voids = ["%s %d" % (logtext.name_of(texts.VOID_NAMES, i, "reason", 1), reasons[i])
             for i in range(1, len(reasons)) if reasons[i]]
    print("%-12s %s" % ("voids by", ", ".join(voids) if voids else "none"))
    if table is None:
        print("(%s: wins per area not shown)" % c.no_table())
    won = [code for code in wins if wins[code]]
    if table is not None and not won:
        print("%-12s none" % "wins")
    if won:
        print("wins per area (paid rounds):")
        line = ""
        for code in sorted(won, key=lambda x: -wins[x]):
            cell = "%-14s %5d" % (code, wins[code])
            if len(line) + len(cell) > 76:
                print("  " + line)
                line = ""
            line += cell + "  "
        if line:
            print("  " + line)


def journal(n=20):
    """The last n records, each checked as the board's replay checks it: a
    record its type, the sequence, the round or the state does not allow is
    shown as DAMAGED with the reason (never used, never a traceback)."""
    _guard("journal", _journal, n)


def _journal(n):
    from sicbo import journal as jfmt
    from sicbo import logtext, texts
    from sicbo.roundstate import RoundState

    c = _c()
    state = RoundState()
    recs = []  # type: list  # (Record, damage code), or (None, a gap): the last n records
    kept = [0]

    def take(b, o, gap):
        code = state.take(b, o, gap)
        recs.append((jfmt.Record(b, o), code))
        kept[0] += 1
        while kept[0] > n:
            rec, _code = recs.pop(0)
            if rec is not None:
                kept[0] -= 1

    def on_gap(g):
        recs.insert(len(recs) - 1, (None, _seqs(g)))  # before the record after them

    w = _Walk()
    w.read(c._store(), state, take, on_gap)
    # The settlement table (for a result's wins) only when a result is shown:
    # a board in trouble may have no room for it, its boot and fault
    # records still read.
    table = None
    for rec, code in recs:
        if rec is not None and rec.type == R.J_RESULT and code <= 0:
            table = c.table()
            break
    for rec, code in recs:
        if rec is None:
            print("journal ------ MISSING %s (journal damage below)" % code)
        elif code > 0:
            print("journal %6d round %5d DAMAGED (%s): %s, not used" % (
                rec.seq, rec.round, logtext.name_of(texts.DAMAGE_NAMES, code, "damage", 1),
                logtext.name_of(texts.J_NAMES, rec.type, "type", 1)))
        else:
            print(logtext.journal_line(rec, table))
    if not kept[0]:
        print("journal is empty")
    if state.damaged:
        print("%d damaged record%s in the journal: see sicbo journal --json"
              % (state.damaged, "" if state.damaged == 1 else "s"))
    _damage_line(w)


def _damage_line(w):
    if w is not None and w.bad + w.gaps:
        print("journal damage: %s: see sicbo journal" % "; ".join(w.damage()))


# ---- faults ----------------------------------------------------------------------

def clear_fault():
    """Journal every failed boot the fault file holds (the journal keeps the
    evidence), journal the clearing itself, then clear the count: the next
    reset starts the table again."""
    _guard("clear_fault", _clear_fault)


def _clear_fault():
    import access

    c = _c()
    n, _entries = faults.read_file(c.fault_file)
    f = faults.Faults(c.fault_file)

    def journal_fault(stage, kind, detail, late):
        access.record(R.J_FAULT, bytes((stage, kind, detail, late, 0, 0, 0, 0)), c.journal_dir)

    late = f.journal_pending(journal_fault)
    c.record(E.D_CLEAR_FAULT, min(n, 255))
    f.clear()
    print("%d failed boot%s cleared (%d journaled now): machine.reset() starts the table"
          % (n, "" if n == 1 else "s", late))


def set_clock(t):
    """Set the board's clock to t (the tuple of machine.RTC().datetime()) and
    journal the old and the new time (J_CLOCK): `sicbo diag` and `sicbo
    deploy` set it so."""
    _guard("set_clock", _set_clock, t)


def _set_clock(t):
    import access

    access.set_clock(t, _c().journal_dir)


def dump_journal():
    """Every journal segment, oldest first, for `sicbo diag --pull-journal`
    and `--svg`: "SICBO-SEG <name repr> <hex>" per 192 bytes, then
    "SICBO-SEGS <names repr>". Reads the files only: it works when the
    configuration is refused or the board is out of service."""
    import binascii
    import os

    d = _ctx.journal_dir if _ctx is not None else faults.JOURNAL_DIR
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".log"))
    except OSError:
        names = []
    buf = bytearray(192)
    mv = memoryview(buf)
    for n in names:
        with open(d + "/" + n, "rb") as f:
            while True:
                k = f.readinto(buf)
                if not k:
                    break
                print("SICBO-SEG", repr(n),
                      binascii.hexlify(mv[:k]).decode())  # type: ignore[arg-type]
    print("SICBO-SEGS", repr(names))
