# Journal records and dealer messages as text for people: the console log of
# the app, diag, and the host tools. Pure; imported only where text is shown.

from sicbo import dates, journal, texts
from sicbo import events as E
from sicbo import records as R


def message_text(code, detail):
    text = texts.text(code)
    if code == E.M_DICE_SO_FAR:
        return "%s: %d of 3" % (text, detail)
    if code == E.R_SENSOR_FAULT or code == E.M_RESUMED:
        names = texts.SENSOR_NAMES if code == E.R_SENSOR_FAULT else texts.STATE_NAMES
        if 0 <= detail < len(names):
            return "%s: %s" % (text, names[detail])
    return text


def journal_line(rec, table=None):
    """One journal record as a line for people (console, diag, host)."""
    name = texts.J_NAMES[rec.type] if rec.type < len(texts.J_NAMES) else "type%d" % rec.type
    extra = ""
    t = rec.type
    if t == R.J_RESULT:
        extra = " dice %d-%d-%d" % (rec.p(0), rec.p(1), rec.p(2))
        if table is not None and journal.check(rec) == 0:
            wins = table.winning_areas(rec.p(0), rec.p(1), rec.p(2))
            extra += " wins %d areas" % len(wins)
    elif t == R.J_CORRECTION:
        extra = " %d-%d-%d -> %d-%d-%d" % tuple(rec.p(i) for i in range(6))
    elif t == R.J_VOID:
        r = rec.p(0)
        extra = " reason " + (texts.VOID_NAMES[r] if 0 < r < len(texts.VOID_NAMES) else str(r))
    elif t in (R.J_ALARM, R.J_VIOLATION, R.J_REFUSED):
        extra = " " + message_text(rec.p(0), rec.p(1))
    elif t == R.J_READER:
        extra = " dice %d-%d-%d" % (rec.p(0), rec.p(1), rec.p(2))
    elif t == R.J_HOLD:
        extra = " dealer %d-%d-%d reader %d-%d-%d" % tuple(rec.p(i) for i in range(6))
    elif t == R.J_BOOT and rec.p(0):
        extra = " after a " + name_of(texts.RESET_NAMES, rec.p(0), "reset cause")
    elif t == R.J_FAULT:
        extra = " in stage %d (%s): %s" % (rec.p(0), name_of(texts.FAULT_STAGES, rec.p(0),
                                                             "stage"),
                                           name_of(texts.FAULT_KINDS, rec.p(1), "kind"))
        if rec.p(2):
            extra += ", detail %d" % rec.p(2)
        if rec.p(3):
            extra += ", in an earlier boot (journaled late)"
    elif t == R.J_DIAG:
        extra = " " + name_of(texts.DIAG_NAMES, rec.p(R.P_TEST), "test")
        if rec.p(R.P_TEST) == E.D_CLEAR_FAULT:
            extra += " (%d failed boots)" % rec.p(R.P_TEST_DETAIL)
    elif t == R.J_SUPERVISOR:
        extra = " key on" if rec.p(0) else " key off"
    elif t == R.J_RESUME:
        extra = " in %s (found %s)" % (name_of(texts.STATE_NAMES, rec.p(0), "state", 0),
                                       name_of(texts.STATE_NAMES, rec.p(1), "state", 0))
    elif t == R.J_LINK:
        if rec.p(0) == R.LINK_DOWN:
            extra = " down: " + name_of(texts.LINK_FAULTS, rec.p(1), "fault")
            if rec.p(2) or rec.p(3):
                extra += " (%d)" % (rec.p(2) | rec.p(3) << 8)
        else:
            extra = " up, the floor had %d" % (rec.p(4) | rec.p(5) << 8 | rec.p(6) << 16
                                               | rec.p(7) << 24)
    elif t == R.J_REPL:
        extra = " app stopped: " + name_of(texts.STOP_NAMES, rec.p(R.P_STOP_WHILE), "where")
        if rec.p(R.P_STOP_WHILE) == R.STOP_STARTUP:
            extra += " (%s)" % name_of(texts.FAULT_STAGES, rec.p(R.P_STOP_STAGE), "stage")
    elif t == R.J_CLOCK:
        extra = " %s -> %s" % (_clock(rec, R.P_CLOCK_OLD), _clock(rec, R.P_CLOCK_NEW))
    elif t == R.J_CLOCK_MOVED:
        extra = " journal's last %s, RTC at boot %s" % (_clock(rec, R.P_CLOCK_OLD),
                                                          _clock(rec, R.P_CLOCK_NEW))
    elif t == R.J_DEPLOY or t == R.J_VERIFY:
        extra = " " + _code_line(rec)
    elif t == R.J_RECOVERY:
        extra = " confirm key held at power-on: app not started"
    elif t == R.J_DAMAGE:
        c = rec.p(0)
        extra = " seq %d (%s): %s" % (
            rec.p(2) | rec.p(3) << 8 | rec.p(4) << 16 | rec.p(5) << 24,  # p(): short-safe
            name_of(texts.J_NAMES, rec.p(1), "type"), name_of(texts.DAMAGE_NAMES, c, "damage"))
    wall = ""
    if rec.wall is not None:
        wall = " @" + wall_text(rec.wall)
    return "journal %6d round %5d %-11s%s%s" % (rec.seq, rec.round, name, extra, wall)


def _clock(rec, at):
    s = _u32(rec, at)
    return wall_text(s) if s else "not set"


def _u32(rec, at):
    return rec.p(at) | rec.p(at + 1) << 8 | rec.p(at + 2) << 16 | rec.p(at + 3) << 24


def _hex(rec, at, n):
    return "".join("%02x" % rec.p(i) for i in range(at, at + n))


def _text(b):
    try:
        return bytes(b).decode()
    except UnicodeError:
        return "(not text)"


def _code_line(rec, width=40):
    # A deploy: the code, the configuration, the files changed (as many as
    # fit `width`); a code check: the code's kind, the seed, the answer, who.
    if rec.type == R.J_VERIFY:
        return "%s, %d items, seed %s.. answer %s.. by %s" % (
            name_of(texts.CHECK_NAMES, rec.p(0), "kind"), rec.p(R.P_VERIFY_ITEMS),
            _hex(rec, R.P_VERIFY_SEED, R.SEED_LEN),
            _hex(rec, R.P_VERIFY_ANSWER, R.ANSWER_LEN),
            _text(rec.payload[R.VERIFY_HEAD:]) or "?")
    line = "%s %s config %s: %d copied, %d removed" % (
        name_of(texts.CODE_KIND_NAMES, rec.p(0), "kind"), _hex(rec, R.P_DEPLOY_CODE, R.CODE_ID_LEN),
        _hex(rec, R.P_DEPLOY_CONFIG, R.CONFIG_ID_LEN), rec.p(R.P_DEPLOY_COPIED),
        rec.p(R.P_DEPLOY_REMOVED))
    names = _text(rec.payload[R.DEPLOY_HEAD:]).split("\n")
    shown = ""
    for n in names:
        if len(shown) + len(n) > width:
            return line + ":" + shown + " ..."
        if n:
            shown += " " + n
    return line + (":" + shown if shown else "")


def wall_text(seconds):
    """ISO time of seconds since 2000-01-01 UTC."""
    days, rem = divmod(seconds, 86400)
    y, mo, d = dates.civil_from_days(days + dates.DAY_2000)
    return "%04d-%02d-%02dT%02d:%02d:%02dZ" % (y, mo, d, rem // 3600, rem // 60 % 60, rem % 60)


def name_of(names, code, what="code", first=1):
    """names[code], or "<what> <code>" for a code the table does not name
    (codes from `first` on: the tables whose entry 0 is "?" start at 1)."""
    if first <= code < len(names):
        return names[code]
    return "%s %d" % (what, code)


def void_reasons_text(counts):
    """Void counts per reason (Meters.void_reasons, indexed by V_*) by name:
    "power cut 2, stacked 1", the most first; "none" when all are 0."""
    order = sorted([i for i in range(len(counts)) if counts[i]], key=lambda i: -counts[i])
    if not order:
        return "none"
    return ", ".join(["%s %d" % (name_of(texts.VOID_NAMES, i, "reason"), counts[i])
                      for i in order])
