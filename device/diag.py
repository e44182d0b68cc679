# Diagnostics for the table technician, at the board's REPL:
#
#   >>> import diag
#   >>> diag.help()
#
# The app is not running here (mpremote's soft reset stops it), so the state
# comes from the journal, exactly as the app would resume it, and the sensors
# are read live. Tests that move something (solenoid, bell, lamp walk) are
# refused unless the journal says the table is idle and the cover is on with
# both clasps fastened, and each test is journaled (J_DIAG). Output fits an
# 80-column terminal.

import gc
import time

import shell

from sicbo import events as E
from sicbo import signals as S

# Everything else is imported where a command needs it: diag must fit beside
# the simulated machine on the virtual board.

_ctx = None


class _Context:
    """The files, the journal's state and the board's adapters, made once."""

    def __init__(self, board_path, table_path, journal_dir):
        self.board_path = board_path
        self.table_path = table_path
        self.journal_dir = journal_dir
        import appboot

        self.board, self.cfg = appboot.load(board_path, table_path)
        shell.unload_boot(shell.PARSERS)  # their code is not needed again here
        self._table = None
        self.hw = None
        self.store = None

    def table(self):
        """The settlement table, built the first time a command needs it."""
        if self._table is None:
            from sicbo import settle

            self._table = settle.SettlementTable(self.cfg)
        return self._table

    def replay(self, with_recall=True):
        """(RoundMachine, Recall or None) rebuilt from the journal, read only:
        the state the app would resume in, through the machine's own replay."""
        from journal_store import JournalStore
        from sicbo import recall as recallmod
        from sicbo.round import RoundMachine

        m = RoundMachine(self.cfg, self.table())
        rc = recallmod.Recall(self.table()) if with_recall else None
        store = JournalStore(self.journal_dir)
        for data in store.read_all():
            m.feed(data)
            if rc is not None:
                rc.feed(data)
        store.close()
        return m, rc

    def hardware(self):
        if self.hw is None:
            import appboot

            row_bytes = (len(self.cfg.lamp_order) + 7) >> 3
            self.hw = appboot.build_hardware(self.board, row_bytes, watchdog=False)
            self.hw.all_off()
        return self.hw

    def record(self, what):
        """Journal one J_DIAG record after the journal's last one."""
        from journal_store import JournalStore
        from sicbo import journal as jfmt
        from sicbo.round import RoundMachine

        rp = RoundMachine(self.cfg, self.table())
        if self.store is None:
            self.store = JournalStore(self.journal_dir)
            self.store.boot(rp.feed)  # reads every segment, opens a new one
        else:
            for data in self.store.read_all():
                rp.feed(data)
        now = time.ticks_ms()
        wall = shell.WallClock(_rtc())
        wall.refresh(now)
        rec = jfmt.encode(E.J_DIAG, rp.seq + 1, rp.round, rp.boot, now, wall.seconds(now),
                             bytes((what, 0, 0, 0, 0, 0, 0, 0)))
        self.store.append(rec, rp.open_seq)


def _rtc():
    from machine import RTC

    return RTC()


def setup(board_path=shell.BOARD_FILE, table_path=shell.TABLE_FILE,
          journal_dir=shell.JOURNAL_DIR):
    """Point diag at other files (tests, a second table); normally automatic."""
    global _ctx
    _ctx = _Context(board_path, table_path, journal_dir)
    return _ctx


def _c():
    return _ctx if _ctx is not None else setup()


def help():
    print("diag: Sic Bo table diagnostics")
    for name, what in (
            ("status()", "state, round, alarms, versions, config hashes, heap"),
            ("sensors()", "live levels of every input, raw and debounced"),
            ("lamps(ms=300)", "light each lamp channel in turn, naming its area"),
            ("solenoid()", "one test pulse (table idle, cover and clasps fastened)"),
            ("bell()", "one test ring (same conditions)"),
            ("recall(n=10)", "the last n rounds: dice, winning areas, voids"),
            ("meters()", "rounds, voids, alarms, violations, wins per area"),
            ("journal(n=20)", "the last n journal records"),
            ("clear_fault()", "forget the failed boots (out of service), then machine.reset()")):
        print("  diag.%-14s %s" % (name, what))


def _manifest():
    import appboot

    try:
        return appboot.read_json("/manifest.json")
    except (OSError, ValueError):
        return None


def _code(man):
    """How the firmware's code is installed (man: the deploy manifest, or
    None), and its hash."""
    try:
        import frozen_id  # type: ignore[import-not-found]  # in frozen firmware only

        return "frozen firmware, code sha256 %s" % frozen_id.CODE_SHA256[:16]
    except ImportError:
        h = man.get("code_sha256") if man is not None else None
        return "deployed files, code sha256 %s" % (h[:16] if h else "unknown")


# Start-up stages (sicbo.events F_*), as /fault.txt numbers them.
_STAGES = ("?", "files", "journal", "hardware", "resume", "task", "watchdog", "start")


def _fault_text(text):
    # "stage 3: OSError ..." -> "stage 3 (hardware): OSError ..."
    if text.startswith("stage "):
        n = text[6:text.find(":")] if ":" in text else ""
        if n.isdigit() and int(n) < len(_STAGES):
            return "stage %s (%s)%s" % (n, _STAGES[int(n)], text[6 + len(n):])
    return text


def clear_fault():
    """Forget the failed boots: the next reset starts the table again."""
    shell.clear_failed_boots()
    print("failed boots cleared: machine.reset() starts the table")


def status():
    from journal_store import JournalStore
    from sicbo import logtext, texts

    n, text = shell.failed_boots()
    if n:
        print("FAULT     %d failed boot%s in a row%s; last: %s" % (
            n, "" if n == 1 else "s",
            " - OUT OF SERVICE" if n >= E.MAX_FAILED_BOOTS else "", _fault_text(text)))
        print("          mend the cause (journal, files), then diag.clear_fault(); "
              "machine.reset()")
    c = _c()
    rp, _rc = c.replay(with_recall=False)
    print("table     %s (edition %d, approval %s)" % (c.cfg.name, c.cfg.edition,
                                                       c.cfg.approval["reference"]))
    print("state     %-8s round %d  boot %d  journal seq %d" % (
        texts.STATE_NAMES[rp.state], rp.round, rp.boot, rp.seq))
    flags = []
    if rp.alarm:
        flags.append("ALARM")
    if rp.violation:
        flags.append("VIOLATION")
    if rp.open_seq:
        flags.append("round %d unfinished" % rp.round)
    print("alarms    %s" % (", ".join(flags) if flags else "none"))
    if rp.has_result:
        print("result    %d-%d-%d" % (rp.dice[0], rp.dice[1], rp.dice[2]))
    sw = c.hardware().switches
    _settle(sw)
    print("sensors   cover %s  clasps %s/%s  supervisor %s" % (
        _word(sw.level(S.COVER), "on", "off"), _word(sw.level(S.CLASP_LEFT), "fastened", "open"),
        _word(sw.level(S.CLASP_RIGHT), "fastened", "open"),
        _word(sw.level(S.SUPERVISOR), "on", "off")))
    man = _manifest()
    print("code      " + _code(man))
    if man is not None:
        files = man.get("files", {})
        print("firmware  %s  revision %s" % (man.get("firmware", "?"), man.get("revision", "?")))
        for name in ("board.json", "table.json"):
            h = files.get(name) or files.get("/" + name) or "?"
            print("config    %-11s sha256 %s" % (name, h[:16]))
    else:
        print("firmware  no /manifest.json (not deployed with sicbo deploy)")
    store = JournalStore(c.journal_dir)
    print("journal   %d segments, %d bytes" % (len(store.segments()), store.total_bytes()))
    store.close()
    wall = shell.WallClock(_rtc())
    wall.refresh(time.ticks_ms())
    s = wall.seconds(time.ticks_ms())
    print("clock     %s" % (logtext.wall_text(s) if s is not None else "RTC not set"))
    gc.collect()
    print("heap      %d bytes free, %d used" % (gc.mem_free(), gc.mem_alloc()))
    for w in c.board.warnings:
        print("warning   " + w)


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


def sensors():
    from hw.inputs import where

    c = _c()
    sw = c.hardware().switches
    _settle(sw)
    print("%-12s %-12s %4s %9s  %s" % ("signal", "wired to", "raw", "debounced", "state"))
    for i in range(len(c.board.inputs)):
        name, _gpio, _pull, inv = c.board.inputs[i]
        raw = sw.raw(i)
        level = raw ^ (1 if inv else 0)
        state = "FAULT" if sw.faulted(i) else ""
        print("%-12s %-12s %4d %9d  %s" % (name, where(c.board, i), raw, sw.level(i), state))
        if level != sw.level(i) and not state:
            print("%-12s       raw and debounced differ: bouncing or changing now" % "")


def _idle_and_closed(what):
    from sicbo import texts

    c = _c()
    rp, _rc = c.replay(with_recall=False)
    if rp.state != E.ST_IDLE:
        print("refused: %s test only with the table idle (state is %s, round %d)"
              % (what, texts.STATE_NAMES[rp.state], rp.round))
        return None
    sw = c.hardware().switches
    _settle(sw)
    if not (sw.level(S.COVER) and sw.level(S.CLASP_LEFT) and sw.level(S.CLASP_RIGHT)):
        print("refused: %s test only with the cover on and both clasps fastened" % what)
        return None
    return c


def solenoid():
    c = _idle_and_closed("solenoid")
    if c is None:
        return False
    hw = c.hw
    if hw.solenoid is None:
        print("refused: this board has no solenoid output")
        return False
    c.record(E.D_SOLENOID)
    t = c.board.timings
    sol = hw.solenoid
    sol.start(1, t["pulse_on_ms"], t["pulse_off_ms"], time.ticks_ms())
    while sol.busy():
        time.sleep_ms(sol.update(time.ticks_ms()))
    print("solenoid: one pulse of %d ms (hard limit %d ms); forced offs %d"
          % (t["pulse_on_ms"], t["max_on_ms"], sol.forced_offs))
    return True


def bell():
    c = _idle_and_closed("bell")
    if c is None:
        return False
    c.record(E.D_BELL)
    b = c.hw.bell
    ms = c.board.timings["bell_ms"]
    b.ring(time.ticks_ms(), ms)
    while b.ringing():
        b.update(time.ticks_ms())
        time.sleep_ms(10)
    print("bell: rang %d ms" % ms)
    return True


def lamps(ms=300):
    c = _idle_and_closed("lamp")
    if c is None:
        return False
    c.record(E.D_LAMPS)
    from sicbo.settle import set_channel

    lamp = c.hw.lamps
    frame = bytearray(c.table().row_bytes)
    order = c.cfg.lamp_order
    for ch in range(len(order)):
        set_channel(frame, ch, 1)
        lamp.write(frame)
        print("channel %3d  %s" % (ch, order[ch] if order[ch] is not None else "(spare)"))
        time.sleep_ms(ms)
        set_channel(frame, ch, 0)
    lamp.write(frame)
    print("lamps: %d channels walked, all off" % len(order))
    return True


def recall(n=10):
    c = _c()
    _rp, rc = c.replay()
    rounds = rc.last(n)
    if not rounds:
        print("no rounds in the journal")
        return
    print("%6s %-8s %-7s %-12s %s" % ("round", "status", "dice", "when", "winning areas"))
    for r in rounds:
        print(_round_line(r, c.table()))



def _round_line(r, table):
    from sicbo import logtext, texts

    dice = "%d-%d-%d" % tuple(r.dice) if r.dice is not None else "-"
    words = []
    if r.void_reason:
        words.append("void: " + texts.VOID_NAMES[r.void_reason])
    elif r.dice is not None:
        words = [code for code, _odds in r.winning_areas(table)]
    if r.first_dice is not None and r.first_dice != r.dice:
        words.insert(0, "corrected from %d-%d-%d;" % tuple(r.first_dice))
    when = r.started[2]
    when = logtext.wall_text(when)[5:16] if when is not None else "boot %d" % r.started[0]
    head = "%6d %-8s %-7s %-12s " % (r.round, r.status, dice, when)
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
    c = _c()
    _rp, rc = c.replay()
    d = rc.meters.as_dict(c.table())
    wins = d.pop("wins", {})
    for k in sorted(d):
        v = d[k]
        if isinstance(v, dict):
            v = "  ".join("%s %d" % (kk, v[kk]) for kk in sorted(v))
        print("%-12s %s" % (k, v))
    if wins:
        print("wins per area (paid rounds):")
        line = ""
        for code in sorted(wins, key=lambda x: -wins[x]):
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
    from journal_store import JournalStore
    from sicbo import journal as jfmt
    from sicbo import logtext, texts
    from sicbo.roundstate import RoundState

    c = _c()
    store = JournalStore(c.journal_dir)
    state = RoundState()
    recs = []

    def take(b, o, gap):
        code = state.take(b, o, gap)
        recs.append((jfmt.Record(b, o), code))
        if len(recs) > n:
            recs.pop(0)

    for data in store.read_all():
        state.scanner.walk(data, take)
    store.close()
    for rec, code in recs:
        if code > 0:
            why = texts.DAMAGE_NAMES[code] if code < len(texts.DAMAGE_NAMES) else code
            print("journal %6d round %5d DAMAGED (%s): type %d, not used"
                  % (rec.seq, rec.round, why, rec.type))
        else:
            print(logtext.journal_line(rec, c.table()))
    if not recs:
        print("journal is empty")
    if state.damaged:
        print("%d damaged record%s in the journal: see sicbo journal --json"
              % (state.damaged, "" if state.damaged == 1 else "s"))


def dump_journal():
    """Every journal segment, oldest first, for `sicbo diag --pull-journal`
    and `--svg`: "SICBO-SEG <name repr> <hex>" per 192 bytes, then
    "SICBO-SEGS <names repr>". Reads the files only: it works when the
    configuration is refused or the board is out of service."""
    import binascii
    import os

    d = _ctx.journal_dir if _ctx is not None else shell.JOURNAL_DIR
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
