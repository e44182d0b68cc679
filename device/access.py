# Technician access, journaled: the records written from outside the running
# table, each a record of its own (sicbo/records.py ACCESS): the app stopped
# into the REPL (stopped, from faults.start), the clock set through the
# firmware (set_clock: sicbo deploy and sicbo diag call it), a deploy
# (deployed), a code check (verified: sicbo verify), recovery mode
# (recovery, from startup.open_table), the diagnostics' tests (diag.py).
# Never loaded by the running table: its heap keeps none of this code.
#
# Every record follows the journal's last one: the journal is replayed into
# a bare RoundState (no configuration needed, as diag reads it), not taken
# from a running table's state, which may be a record ahead of its journal
# (decided, not yet written, when the Ctrl-C came). The record goes after
# the newest segment's last record when that segment is whole (valid records
# to its last byte), else into a new segment: nothing is ever appended after
# bytes a power cut may have torn. Not a segment per record: the journal
# keeps at most JournalStore.max_files files (littlefs spends a block on
# each), and every sicbo diag, deploy or verify would otherwise add one or
# two beside the boot's, so that a few of them would push the rounds' own
# segments out. The records of one session (one mpremote connection: a
# clock set, then a test) follow each other while nothing else wrote the
# journal. This never rotates: only the running table does, heading each
# new segment with its meters.

import os
import struct
import time
from binascii import unhexlify

from sicbo import records as R

_session = None  # [journal folder, JournalStore, RoundState] of this session's segment


def _folder(journal_dir):
    if journal_dir is not None:
        return journal_dir
    from faults import JOURNAL_DIR

    return JOURNAL_DIR


def journal(journal_dir=None):
    """(store, state): the journal's store, whose next append goes into this
    session's segment, and a RoundState of every record in the journal
    (write with state.encode_next(...), then store.append(rec, state.open_seq))."""
    global _session
    journal_dir = _folder(journal_dir)
    s = _session
    if s is not None:
        if s[0] == journal_dir and _still_ours(s[1]):
            return s[1], s[2]
        s[1].close()
        _session = None
    import gc

    from journal_store import JournalStore
    from sicbo.roundstate import RoundState

    gc.collect()  # the read buffer needs a free block
    store = JournalStore(journal_dir)
    store.segment_bytes = 1 << 30  # never rotated from here (see the module doc)
    buf = store.read_buffer()
    rs = RoundState()
    for data in store.read_all(buf):
        rs.feed(data)
    _continue(store, buf)
    _session = [journal_dir, store, rs]
    return store, rs


def _continue(store, buf):
    # Append to the newest segment if every byte of it is a valid record;
    # otherwise the store's first append opens a new one after every other.
    from sicbo.journal import valid_at

    if not store.segs:
        return
    n = store.segs[-1][0]
    for piece in store.pieces(n, buf):
        off = 0
        end = len(piece)
        while off < end:
            k = valid_at(piece, off, end)
            if not k:
                return  # torn or damaged: never appended to
            off += k
    path = store.path(n)
    store.f = open(path, "ab")
    store.size = os.stat(path)[6]


def _still_ours(store):
    # Nothing else wrote the journal since this session's last record: its
    # segment is still the newest, at the size this session left it.
    if store.f is None:
        return False
    path = store.path(store.segs[-1][0])
    name = path[path.rfind("/") + 1:]
    try:
        if os.stat(path)[6] != store.size:
            return False
        for n in os.listdir(store.folder):
            if n.endswith(".log") and n > name:
                return False
    except OSError:
        return False
    return True


def close():
    """End the session: the next record replays the journal again."""
    global _session
    if _session is not None:
        _session[1].close()
        _session = None


def _forget():
    # Once the stop or recovery mode is journaled this code is done with:
    # the REPL's heap (diag, mpremote) does not keep it. Never raises.
    try:
        close()
        import memory

        memory.forget(("access",))
    except BaseException:  # noqa: BLE001 - only the heap's
        pass


def wall(now=None, rtc=None):
    """The RTC's seconds since 2000-01-01 UTC, None while it is not set."""
    import machine

    from hw import WallClock

    if now is None:
        now = time.ticks_ms()
    w = WallClock(rtc if rtc is not None else machine.RTC())
    w.refresh(now)
    return w.seconds(now)


class _Taker:
    # What chainfile.take needs of the running table, from outside it.
    log = None

    def __init__(self, store, rs, rtc):
        self.store = store
        self.m = rs
        self.rtc = rtc
        self.wall = self  # take() asks ctl.wall.seconds(now)

    def seconds(self, now):
        return wall(now, self.rtc)


def _take_provisioning(store, rs, rtc):
    # A provisioning left by `sicbo deploy --provision` is taken before the
    # next record, whoever writes it: the deploy's own records come after
    # the chain's first and are sealed, rather than before it unsigned.
    from journal_store import PROVISION_NAME

    try:
        os.stat(store.folder + "/" + PROVISION_NAME)
    except OSError:
        return
    from chainfile import take

    take(_Taker(store, rs, rtc))


def record(rtype, payload, journal_dir=None, rtc=None):
    """Journal one record of type rtype after the journal's last one; returns it."""
    store, rs = journal(journal_dir)
    _take_provisioning(store, rs, rtc)
    store.chain_next(rs)  # numbered for the MAC chain's key (sicbo/chain.py)
    now = time.ticks_ms()
    rec = rs.encode_next(rtype, payload, now, wall(now, rtc))
    store.append(rec, rs.open_seq)
    return rec


def stopped(faults, ctl, journal_dir=None, log=print):
    """Journal that the app was stopped into the REPL (J_REPL: while the table
    ran, or in which start-up stage): faults.start's Ctrl-C (a technician,
    mpremote), once the outputs are off. Best effort, never raises: a second
    Ctrl-C or a full filesystem costs only the record."""
    try:
        if ctl is not None:
            ctl.store.close()  # flushed: every record it wrote is whole
            journal_dir = ctl.store.folder
        record(R.J_REPL, bytes((R.STOP_RUNNING if ctl is not None else R.STOP_STARTUP,
                                0 if ctl is not None else faults.stage, 0, 0, 0, 0, 0, 0)),
               journal_dir)
        log("sicbo: stopped into the REPL: journaled")
    except BaseException as e:  # noqa: BLE001 - see above
        try:
            log("sicbo: stopped into the REPL, not journaled: %s %s" % (type(e).__name__, e))
        except BaseException:  # noqa: BLE001
            pass
    _forget()


def recovery(cause, journal_dir=None, rtc=None, say=print):
    """Journal recovery mode (J_RECOVERY: the confirm key held at power-on,
    the app not started), with the boot's reset cause; a journal that cannot
    take it is said (recovery mode reaches the REPL whatever it holds)."""
    try:
        record(R.J_RECOVERY, bytes((cause & 255, 0, 0, 0, 0, 0, 0, 0)), journal_dir, rtc)
    except Exception as e:  # noqa: BLE001 - see above
        say("sicbo: recovery mode not journaled: %s %s" % (type(e).__name__, e))
    _forget()


def set_clock(dt, journal_dir=None):
    """Set the RTC to dt (the tuple of machine.RTC().datetime(): year, month,
    day, weekday, hours, minutes, seconds, subseconds), then journal the old
    and the new time (J_CLOCK; a record that cannot be written is said, and
    the clock is set all the same: the RTC cannot refuse anyone)."""
    import machine

    rtc = machine.RTC()
    old = wall(None, rtc)
    rtc.datetime(dt)
    new = wall(None, rtc)
    try:
        record(R.J_CLOCK, struct.pack("<II", old or 0, new or 0), journal_dir, rtc)
    except Exception as e:  # noqa: BLE001 - said, never a traceback
        print("sicbo: clock set, not journaled: %s %s" % (type(e).__name__, e))
        return False
    return True


def _head(n, kind, items, at, first, at2, second):
    # A payload head: kind, a count, then two hex texts as bytes at their offsets.
    head = bytearray(n)
    head[0] = kind
    head[1] = min(items, 255)
    for off, text in ((at, first), (at2, second)):
        b = unhexlify(text)
        head[off:off + len(b)] = b
    return head


def deployed(kind, code, config, copied, removed, journal_dir=None):
    """Journal a deploy (J_DEPLOY): kind R.CODE_*, code the code's sha256 and
    config the configuration id (hex), copied and removed the board paths
    that changed (as many as fit a record; the counts say how many)."""
    head = _head(R.DEPLOY_HEAD, kind, len(copied), R.P_DEPLOY_CODE, code[:2 * R.CODE_ID_LEN],
                 R.P_DEPLOY_CONFIG, config[:2 * R.CONFIG_ID_LEN])
    head[R.P_DEPLOY_REMOVED] = min(len(removed), 255)
    # Room left for the MAC a provisioned journal seals the record with: a
    # record past MAX_LEN would be read back as damage, the deploy lost.
    room = R.MAX_LEN - R.MIN_LEN - R.MAC_LEN - R.DEPLOY_HEAD
    text = b""
    for mark, names in (("+", copied), ("-", removed)):
        for name in names:
            line = (b"\n" if text else b"") + (mark + name).encode()
            if len(text) + len(line) > room:
                head[R.P_DEPLOY_FLAGS] = 1
                break
            text += line
    return record(R.J_DEPLOY, bytes(head) + text, journal_dir)


def verified(kind, items, seed, answer, by, journal_dir=None):
    """Journal a code check (J_VERIFY): kind R.CHECK_*, items hashed, the
    inspector's seed and the board's answer (hex; their first bytes are
    kept), who asked (text, its first R.WHO_LEN bytes)."""
    head = _head(R.VERIFY_HEAD, kind, items, R.P_VERIFY_SEED, seed[:2 * R.SEED_LEN],
                 R.P_VERIFY_ANSWER, answer[:2 * R.ANSWER_LEN])
    who = by.encode()
    if len(who) > R.WHO_LEN:
        who = by[:R.WHO_LEN // 4].encode()  # whole characters (UTF-8: up to 4 bytes each)
    return record(R.J_VERIFY, bytes(head) + who, journal_dir)
