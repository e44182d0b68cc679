# mprun-heap: controller
# Technician access journaled (device/access.py; faults.start, startup.py):
# the app stopped into the REPL, recovery mode, the clock set back by hand, each
# a record of its own after the journal's last one; none of it may keep an
# output on or the REPL away.
import struct

import access
import controller
import faults
import machine
from appkit import BELL, Table, journal_records

from sicbo import events as E
from sicbo import records as R


def _replay(folder):
    """The journal as the board reads it (a bare RoundState)."""
    from journal_store import JournalStore
    from sicbo.roundstate import RoundState

    rs = RoundState()
    st = JournalStore(folder)
    for data in st.read_all():
        rs.feed(data)
    st.close()
    return rs


def _newest_segment(folder):
    import os

    name = sorted(n for n in os.listdir(folder) if n.endswith(".log"))[-1]
    with open(folder + "/" + name, "rb") as f:
        return f.read()


def _start(folder, run, log):
    """faults.start as main.py runs it, with the running table's controller.run
    replaced by run(ctl); returns what it returns, or raises what it raises."""
    saved = controller.run
    controller.run = run
    try:
        return faults.start(folder + "/board.json", folder + "/table.json", folder,
                            log=log.append, ticks_ms=machine.sim_ticks_ms,
                            fault_file=folder + "/fault.txt")
    finally:
        controller.run = saved


def _stopped(folder, run):
    """_start, which must end in the KeyboardInterrupt that reaches the REPL."""
    log = []
    try:
        _start(folder, run, log)
    except KeyboardInterrupt:
        return log
    raise AssertionError("the Ctrl-C did not reach the REPL: %r" % log)


def _played():
    t = Table()
    t.play(1, 2, 3)
    t.close()
    return t


def test_ctrl_c_while_the_table_runs_is_journaled_outputs_off_first():
    t = _played()
    before = journal_records(t.folder)
    seen = []

    def run(ctl):
        ctl.hw.bell.ring(machine.sim_ticks_ms(), 1000)  # an output on when the Ctrl-C comes
        seen.append(machine.sim_output(BELL))
        raise KeyboardInterrupt

    log = _stopped(t.folder, run)
    assert seen == [1] and machine.sim_output(BELL) == 0
    recs = journal_records(t.folder)
    stop = recs[-1]
    assert stop.type == R.J_REPL and stop.p(R.P_STOP_WHILE) == R.STOP_RUNNING, recs[-3:]
    assert stop.wall is not None and stop.round == before[-1].round
    assert R.J_BOOT in [r.type for r in recs[len(before):-1]]  # the boot it stopped
    rs = _replay(t.folder)
    assert rs.damaged == 0 and rs.seq == stop.seq
    # After the boot's own records, at the end of its segment (whole: no new file).
    newest = journal_records_of(_newest_segment(t.folder))
    assert newest[0].type == R.J_BOOT and newest[-1].seq == stop.seq
    assert "sicbo: stopped into the REPL: journaled" in log, log
    _assert_forgotten()


def _assert_forgotten():
    # The REPL's heap keeps none of the access code once it has journaled
    # (MicroPython only: memory.forget keeps CPython's modules).
    import sys

    if sys.implementation.name == "micropython":
        assert "access" not in sys.modules


def journal_records_of(data):
    from sicbo import journal

    return journal.records(data)


def test_a_torn_segment_is_never_appended_to():
    # A power cut tore the newest segment's last record: the access record
    # goes into a new segment, and the torn bytes stay the last of theirs.
    import os

    t = _played()
    names = sorted(n for n in os.listdir(t.folder) if n.endswith(".log"))
    with open(t.folder + "/" + names[-1], "ab") as f:
        f.write(b"\xa5\x06\x24\x00\x09")  # the first bytes of a record, cut
    rec = access.record(R.J_DIAG, bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    access.close()
    after = sorted(n for n in os.listdir(t.folder) if n.endswith(".log"))
    assert len(after) == len(names) + 1
    with open(t.folder + "/" + after[-1], "rb") as f:
        assert f.read() == rec
    rs = _replay(t.folder)
    assert rs.damaged == 0 and rs.seq == journal_records(t.folder)[-1].seq
    assert rs.scanner.torn_bytes == 5
    # and a whole one is continued: the next session's record follows it there
    access.record(R.J_DIAG, bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    access.close()
    assert sorted(n for n in os.listdir(t.folder) if n.endswith(".log")) == after
    assert len(journal_records_of(_newest_segment(t.folder))) == 2


def test_access_records_never_rotate_the_journal():
    # Only the running table rotates, heading each new segment with its
    # meters: records written from the REPL go on in their segment past its
    # size, no segment opened or deleted for them.
    import os

    t = _played()
    names = sorted(n for n in os.listdir(t.folder) if n.endswith(".log"))
    diag = bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0))
    n = 0
    while os.stat(t.folder + "/" + names[-1])[6] <= 4096:  # JournalStore's segment_bytes
        access.record(R.J_DIAG, diag, t.folder)
        n += 1
        assert n < 200, "the segment never grew past its size"
    access.record(R.J_DIAG, diag, t.folder)
    access.close()
    assert sorted(n for n in os.listdir(t.folder) if n.endswith(".log")) == names


def test_the_stop_follows_the_journal_not_the_running_state():
    # The Ctrl-C lands after the machine decided a record and before it was
    # written: the machine is a record ahead of its journal. The stop
    # follows the journal on flash, so that the next boot finds no gap.
    t = _played()

    def run(ctl):
        m = ctl.m
        seq = m.seq
        m.handle(E.EV_SUPERVISOR_ON, 0, machine.sim_ticks_ms(), None)
        assert m.rec_len and m.seq == seq + 1  # applied, not yet on flash
        raise KeyboardInterrupt

    _stopped(t.folder, run)
    recs = journal_records(t.folder)
    assert R.J_SUPERVISOR not in [r.type for r in recs]
    assert recs[-1].type == R.J_REPL and recs[-1].seq == recs[-2].seq + 1
    assert _replay(t.folder).damaged == 0
    t2 = Table(folder=t.folder, reset=False)  # and the table starts again on it
    assert t2.m.damaged == 0 and t2.m.state == E.ST_IDLE
    t2.close()


def test_ctrl_c_during_start_up_names_the_stage():
    t = _played()

    def log_interrupts(line):
        if line.startswith("J "):  # the first record the resume writes
            raise KeyboardInterrupt

    log = []
    try:
        faults.start(t.folder + "/board.json", t.folder + "/table.json", t.folder,
                     log=lambda line: (log.append(line), log_interrupts(line)),
                     ticks_ms=machine.sim_ticks_ms, fault_file=t.folder + "/fault.txt")
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("no KeyboardInterrupt: %r" % log)
    stop = journal_records(t.folder)[-1]
    assert stop.type == R.J_REPL and stop.p(R.P_STOP_WHILE) == R.STOP_STARTUP
    assert stop.p(R.P_STOP_STAGE) == E.F_RESUME
    assert _replay(t.folder).damaged == 0


def test_a_stop_that_cannot_be_journaled_still_turns_the_outputs_off():
    import access  # as faults.start finds it (an earlier stop forgot the module)

    t = _played()
    n = len(journal_records(t.folder))
    saved = access.record

    def refused(*args):
        raise KeyboardInterrupt  # a second Ctrl-C, while journaling the first

    def run(ctl):
        ctl.hw.bell.ring(machine.sim_ticks_ms(), 1000)
        raise KeyboardInterrupt

    access.record = refused
    try:
        log = _stopped(t.folder, run)
    finally:
        access.record = saved
    assert machine.sim_output(BELL) == 0
    assert R.J_REPL not in [r.type for r in journal_records(t.folder)[n:]]
    assert any("not journaled: KeyboardInterrupt" in line for line in log), log


def test_recovery_mode_is_journaled_and_the_app_not_started():
    t = _played()
    n = len(journal_records(t.folder))
    t2 = Table(folder=t.folder, held=("key_confirm",), expect_refusal=True)
    recs = journal_records(t.folder)[n:]
    assert [r.type for r in recs] == [R.J_RECOVERY], recs
    assert recs[0].p(R.P_RECOVERY_CAUSE) == machine.PWRON_RESET and recs[0].wall is not None
    assert _replay(t.folder).damaged == 0
    assert any("recovery mode" in line for line in t2.log)
    _assert_forgotten()


def test_recovery_mode_reaches_the_repl_when_the_journal_refuses():
    t = _played()
    machine.sim_set(13, 0)  # key_confirm held (pulled low)
    with open(t.folder + "/j", "w") as f:
        f.write("a file where the journal folder should be")
    log = []
    ctl, restart = faults.boot(faults.Faults(t.folder + "/fault.txt", log.append),
                               t.folder + "/board.json", t.folder + "/table.json",
                               t.folder + "/j", log=log.append, ticks_ms=machine.sim_ticks_ms)
    machine.sim_set(13, 1)
    assert ctl is None and not restart
    assert any("recovery mode not journaled" in line for line in log), log


def _moved(folder):
    return [r for r in journal_records(folder) if r.type == R.J_CLOCK_MOVED]


def test_the_clock_set_back_by_hand_is_journaled_at_boot():
    t = _played()
    last = journal_records(t.folder)[-1].wall
    t2 = Table(folder=t.folder, reset=False)  # the clock as it was: nothing to say
    t2.close()
    assert _moved(t.folder) == []
    last = journal_records(t.folder)[-1].wall
    machine.RTC().datetime((2026, 11, 29, 6, 9, 0, 0, 0))  # a day back, not journaled
    t3 = Table(folder=t.folder, reset=False)
    found = _moved(t.folder)
    assert len(found) == 1, found
    rec = found[0]
    back = rec.p(4) | rec.p(5) << 8 | rec.p(6) << 16 | rec.p(7) << 24
    was = rec.p(0) | rec.p(1) << 8 | rec.p(2) << 16 | rec.p(3) << 24
    assert was == last and back == rec.wall and back < last
    types = [r.type for r in journal_records(t.folder)]
    assert types.index(R.J_CLOCK_MOVED) > len(types) - 1 - types[::-1].index(R.J_BOOT)
    assert t3.m.damaged == 0
    t3.close()


def test_a_lost_clock_set_again_is_no_move_set_back_it_is():
    t = _played()
    walled = journal_records(t.folder)[-1].wall
    t2 = Table(folder=t.folder, rtc=None)  # a power cut lost the clock: records carry none
    t2.play(2, 3, 4)
    t2.close()
    assert journal_records(t.folder)[-1].wall is None
    assert _moved(t.folder) == []  # a clock lost is no move
    machine.RTC().datetime((2026, 11, 30, 0, 13, 0, 0, 0))  # set again, later: no move
    Table(folder=t.folder, reset=False).close()
    assert _moved(t.folder) == []
    t3 = Table(folder=t.folder, rtc=None)  # lost again
    t3.close()
    machine.RTC().datetime((2026, 11, 30, 0, 11, 0, 0, 0))  # set before the last known time
    Table(folder=t.folder, reset=False).close()
    found = _moved(t.folder)
    assert len(found) == 1, found
    seen = found[0].p(0) | found[0].p(1) << 8 | found[0].p(2) << 16 | found[0].p(3) << 24
    assert seen > walled and seen - found[0].wall >= 3600  # the 13:00 boot's, an hour later


def test_the_clock_set_through_the_firmware_is_journaled_and_no_move():
    t = _played()
    assert access.set_clock((2026, 12, 1, 1, 8, 0, 0, 0), t.folder)
    access.close()
    rec = journal_records(t.folder)[-1]
    assert rec.type == R.J_CLOCK
    new = rec.p(4) | rec.p(5) << 8 | rec.p(6) << 16 | rec.p(7) << 24
    old = rec.p(0) | rec.p(1) << 8 | rec.p(2) << 16 | rec.p(3) << 24
    assert new == rec.wall and old < new, (old, new)
    from sicbo import logtext

    assert " 2026-11-30T12:" in logtext.journal_line(rec)
    assert "-> 2026-12-01T08:00:0" in logtext.journal_line(rec)
    t2 = Table(folder=t.folder, reset=False)
    assert _moved(t.folder) == [] and t2.m.damaged == 0
    t2.close()


def test_a_clock_set_that_cannot_be_journaled_is_set_all_the_same_and_said():
    from appkit import fresh_folder

    path = fresh_folder() + "/j"
    with open(path, "w") as f:
        f.write("a file where the journal folder should be")
    said = []
    access.print = lambda *args: said.append(" ".join([str(a) for a in args]))
    try:
        ok = access.set_clock((2026, 12, 2, 2, 9, 30, 0, 0), path)
    finally:
        access.print = print
    assert ok is False
    assert len(said) == 1 and said[0].startswith("sicbo: clock set, not journaled: "), said
    assert tuple(machine.RTC().datetime()[:3]) == (2026, 12, 2)


def test_the_clock_is_moved_only_past_its_slack():
    # resumption.stage_clock: an RTC up to 2 s before the journal's last time
    # is no move (the journal's time was taken a moment before the cut).
    import resumption

    class _Wall:
        def __init__(self, s):
            self.s = s

        def seconds(self, now):
            return self.s

    class _Ctl:
        def __init__(self, rtc):
            self.wall = _Wall(rtc)
            self.notes = []

        def _note(self, rtype, payload):
            self.notes.append((rtype, bytes(payload)))

    seen = 850000000
    for rtc, moved in ((seen, False), (seen - 2, False), (seen - 3, True), (None, False)):
        c = _Ctl(rtc)
        assert resumption.stage_clock(c, seen, 0) is moved, rtc
        assert len(c.notes) == (1 if moved else 0)
    c = _Ctl(seen - 3)
    resumption.stage_clock(c, seen, 0)
    assert c.notes == [(R.J_CLOCK_MOVED, struct.pack("<II", seen, seen - 3))]
    assert resumption.stage_clock(_Ctl(seen - 100), None, 0) is False  # no time journaled yet


def test_recovery_mode_reaches_the_repl_when_its_record_cannot_be_made():
    import sys

    class _Broken:
        @staticmethod
        def recovery(*args):
            raise MemoryError("no room for the journal")

    t = _played()
    machine.sim_set(13, 0)  # key_confirm held
    saved = sys.modules.get("access")
    sys.modules["access"] = _Broken
    log = []
    try:
        ctl, restart = faults.boot(faults.Faults(t.folder + "/fault.txt", log.append),
                                   t.folder + "/board.json", t.folder + "/table.json",
                                   t.folder, log=log.append, ticks_ms=machine.sim_ticks_ms)
    finally:
        machine.sim_set(13, 1)
        if saved is not None:
            sys.modules["access"] = saved
        else:
            del sys.modules["access"]
    assert ctl is None and not restart
    assert "sicbo: recovery mode not journaled" in log, log



def test_one_session_replays_the_journal_once_until_the_table_writes():
    # Each record of a session (a clock set, then diag's tests) follows the
    # last without reading the journal again: a diag session replays it once.
    t = _played()
    access.record(R.J_DIAG, bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    store, rs = access.journal(t.folder)
    access.record(R.J_DIAG, bytes((E.D_BELL, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    assert access.journal(t.folder) == (store, rs)
    assert rs.seq == journal_records(t.folder)[-1].seq
    access.close()
    t2 = Table(folder=t.folder, reset=False)  # the table ran: the journal is read again
    t2.close()
    store2, rs2 = access.journal(t.folder)
    assert store2 is not store and rs2.seq == journal_records(t.folder)[-1].seq
    access.close()


def test_a_clock_set_after_a_power_cut_lost_it_journals_no_old_time():
    t = _played()
    machine.sim_reset(ticks=1000)  # a power cut: the RTC lost with it
    assert access.wall() is None
    assert access.set_clock((2026, 12, 1, 1, 8, 0, 0, 0), t.folder)
    access.close()
    rec = journal_records(t.folder)[-1]
    old, new = struct.unpack("<II", bytes(rec.p(i) for i in range(8)))
    assert rec.type == R.J_CLOCK and old == 0 and new == rec.wall > 0, (old, new)


def test_a_code_check_keeps_the_first_bytes_of_a_whole_seed_and_answer():
    from sicbo import logtext

    t = _played()
    # The inspector's seed and the board's answer in full (sha256 hex): their
    # first bytes kept, who asked after them.
    assert access.verified(R.CHECK_FILES, 45, "ef" * 32, "12" * 32, "inspector", t.folder)
    access.close()
    rec = journal_records(t.folder)[-1]
    payload = bytes(rec.p(i) for i in range(rec.length - R.MIN_LEN))
    assert rec.type == R.J_VERIFY and payload == (
        bytes((R.CHECK_FILES, 45)) + b"\xef" * R.SEED_LEN + b"\x12" * R.ANSWER_LEN + b"inspector")
    line = logtext.journal_line(rec)
    assert "seed efefefefefef.. answer 1212121212121212.. by inspector @" in line, line


def test_a_record_from_the_repl_carries_the_round_and_boot_it_follows():
    from sicbo import journal
    from sicbo.roundstate import RoundState

    t = _played()
    last = journal_records(t.folder)[-1]
    access.record(R.J_DIAG, bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    access.close()
    rec = journal_records(t.folder)[-1]
    assert (rec.seq, rec.round, rec.boot) == (last.seq + 1, last.round, last.boot), rec
    # A boot's record counts one boot more, a round's one round more.
    rs = RoundState()
    rs.feed(journal.encode(R.J_BOOT, 1, 0, 1, 0, None, bytes(8)))
    nxt = list(journal.records(rs.encode_next(R.J_BOOT, bytes(8), 0, None)))[0]
    assert (nxt.seq, nxt.boot, nxt.round) == (2, 2, 0), nxt


def test_a_session_whose_segment_is_gone_reads_the_journal_again():
    import os

    t = _played()
    access.record(R.J_DIAG, bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    store, rs = access.journal(t.folder)
    assert rs.seq > 0
    for n in os.listdir(t.folder):
        if n.endswith(".log"):
            os.remove(t.folder + "/" + n)  # the journal deleted under the session
    store2, rs2 = access.journal(t.folder)
    assert store2 is not store and rs2.seq == 0  # the journal as it is now
    access.close()


def test_a_provisioning_is_taken_by_the_first_record_written_from_outside():
    # `sicbo deploy --provision`, then diag before the table boots again: the
    # chain's first record (J_PROVISION) comes first, then the diag's, sealed.
    import os

    from chainkit import mac_ok, provision, raw_records, u32

    from journal_store import KEY_NAME, PROVISION_NAME

    t = _played()
    before = journal_records(t.folder)[-1].seq
    provision(t.folder)
    access.record(R.J_DIAG, bytes((E.D_SENSORS, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    # two deploys a byte apart: a sealed record of odd and of even length
    for name in ("/a.mpy", "/ab.mpy"):
        access.deployed(R.CODE_FILES, "ab" * 32, "cd" * 6, [name], [], t.folder)
    access.close()
    names = os.listdir(t.folder)
    assert PROVISION_NAME not in names and KEY_NAME in names
    recs = [r for r in journal_records(t.folder) if r.seq > before]
    assert [r.type for r in recs] == [R.J_PROVISION, R.J_DIAG, R.J_DEPLOY, R.J_DEPLOY], recs
    assert {r.length % 2 for r in recs[2:]} == {0, 1}, [r.length for r in recs]
    assert recs[0].wall is not None and recs[1].wall >= recs[0].wall  # the clock read for both
    sealed = [raw for raw in raw_records(t.folder) if u32(raw, R.OFF_SEQ) > before]
    assert len(sealed) == 4 and all(raw[R.OFF_FLAGS] & R.FLAG_MAC and mac_ok(raw) for raw in sealed)


def test_a_session_whose_segment_was_closed_is_opened_again():
    # Something closed the session's segment (the store let go of its file):
    # the next record opens the journal again rather than write to nothing.
    t = _played()
    store, rs = access.journal(t.folder)
    store.close()
    access.record(R.J_DIAG, bytes((E.D_BELL, 0, 0, 0, 0, 0, 0, 0)), t.folder)
    store2, _rs2 = access.journal(t.folder)
    assert store2 is not store and store2.f is not None
    access.close()
    rec = journal_records(t.folder)[-1]
    assert rec.type == R.J_DIAG and rec.p(R.P_TEST) == E.D_BELL, rec
