# mprun-heap: controller
# Sensor chatter through the whole controller (appkit): every input bounced
# faster than the debounce and beyond the chatter limit, in every round state.
# Specified (docs/board-files.md, hw/switches.py, sicbo/roundmachine.py): no event
# from a bounce (no state change, no journal record), one J_ALARM
# R_SENSOR_FAULT per chattering input (detail: the sensor id), a fault between
# shake and bell voids the round (V_FAULT), none later does; once the input
# has been still for the chatter window it works again. A bounce shorter than
# the debounce time, below the chatter limit, is no event at all.
import machine
from appkit import SOLENOID, Table

from sicbo import events as E
from sicbo import records as R
from sicbo import signals as S
from sicbo.signals import INPUT_SIGNALS

# Sensor id of each input's fault (controller.INPUTS), by signal index.
SENSOR = [E.S_KEYS] * S.COUNT
SENSOR[S.COVER] = E.S_COVER
SENSOR[S.CLASP_LEFT] = E.S_CLASP_L
SENSOR[S.CLASP_RIGHT] = E.S_CLASP_R
SENSOR[S.SHAKE] = E.S_SHAKE
SENSOR[S.SUPERVISOR] = E.S_SUPERVISOR
STATES = ("idle", "shaking", "open", "closed", "result", "paying")
DEBOUNCE = 20  # appkit's board: debounce_ms, chatter_limit, chatter_window_ms
LIMIT = 10
WINDOW = 1000


def tick(t, ms):
    """One pass of the app's tasks after ms (bounces faster than POLL_MS)."""
    machine.sim_advance(ms)
    now = machine.sim_ticks_ms()
    t.ctl.poll(now)
    t.ctl.actuators(now)
    t.ctl.read_reader(now)
    t.hw.watchdog.feed(now)


def level(t, i):
    return t.hw.switches.level(i)


def bounce(t, i, transitions, half_ms):
    """Toggle input i away from its level and back, `transitions` times,
    polled after each change; it ends at the level it started at."""
    lv = level(t, i)
    name = INPUT_SIGNALS[i]
    for k in range(transitions):
        t.set(name, (1 - lv) if k % 2 == 0 else lv)
        tick(t, half_ms)
    t.set(name, lv)


def tap(t):
    """Keep what the controller appends to its journal from now on (reading
    the whole journal back each time costs too much heap on the unix port)."""
    written = []
    append = t.store.append

    def tapped(data, keep_seq=0):
        written.append(bytes(data))
        return append(data, keep_seq)

    t.store.append = tapped
    t.written = written
    return t


def last_seq(t):
    """A mark: the records appended after it are new_records(t, mark)."""
    t.written.clear()
    del t.log[:]  # appkit keeps every log line: 90 cases would fill the heap
    return 0


def new_records(t, _mark):
    from sicbo import journal

    out = []
    for data in t.written:
        out.extend(r for r in journal.records(data) if r.type != R.J_METERS)
    return out


def to_state(t, st):
    """From idle (faults cleared) to state st, as a dealer plays."""
    if st == "idle":
        return E.ST_IDLE
    t.close_dome()
    t.set("shake", 1)
    t.run(40)
    t.set("shake", 0)
    t.run(DEBOUNCE + 5)  # the release debounced: bounces start from settled levels
    if st == "shaking":
        return E.ST_SHAKING
    t.run(2000)
    if st == "open":
        return E.ST_OPEN
    t.press("key_bell")
    t.run(1600)
    if st == "closed":
        return E.ST_CLOSED
    t.set("cover", 0)
    t.set("clasp_left", 0)
    t.set("clasp_right", 0)
    t.run(60)
    if st == "result":
        return E.ST_RESULT
    t.enter(2, 3, 5)
    return E.ST_PAYING


def clear_faults(t):
    """The supervisor's key on and off: acknowledges the alarm and faults."""
    t.press("supervisor", 60)
    t.run(60)
    assert t.m.faults == 0 and not t.m.alarm


def finish(t):
    """Back to idle from any state (payout, or a dealer's void)."""
    st = t.state()
    if st == E.ST_SHAKING:
        t.run(2000)
        st = t.state()
    if st == E.ST_OPEN:
        t.press("key_bell")
        t.run(1600)
        st = t.state()
    if st == E.ST_CLOSED:
        t.set("cover", 0)
        t.run(60)
        st = t.state()
    if st == E.ST_RESULT:
        t.enter(1, 1, 1)
        st = t.state()
    if st == E.ST_PAYING:
        t.press("key_payout")
    assert t.state() == E.ST_IDLE, t.state()


def check_chatter(t, st, i):
    """Input i chatters in state st: one alarm for it, no other record except
    the void the state requires; quiet again after the window; recovers."""
    want = to_state(t, st)
    assert t.state() == want, (st, t.state())
    seq = last_seq(t)
    events = t.ctl.events
    # 3 * LIMIT transitions, 2 ms apart: ten times faster than the debounce.
    bounce(t, i, 3 * LIMIT, 2)
    recs = new_records(t, seq)
    alarms = [r for r in recs if r.type == R.J_ALARM]
    assert len(alarms) == 1, (st, INPUT_SIGNALS[i], recs)
    assert alarms[0].p(0) == E.R_SENSOR_FAULT and alarms[0].p(1) == SENSOR[i], alarms
    voids = [r for r in recs if r.type == R.J_VOID]
    if want in (E.ST_SHAKING, E.ST_OPEN):
        assert len(voids) == 1 and voids[0].p(0) == E.V_FAULT, (st, recs)
        assert t.state() == E.ST_IDLE
        assert not machine.sim_output(app_solenoid_pin(t)), "coil left on"
    else:
        assert voids == [], (st, INPUT_SIGNALS[i], recs)
        assert t.state() == want, (st, INPUT_SIGNALS[i], t.state())
    assert len(recs) == len(alarms) + len(voids), (st, INPUT_SIGNALS[i], recs)
    assert t.ctl.events - events == 1, "one FAULT event, nothing else"
    assert t.hw.switches.faulted(i)
    assert "ALARM" in t.lit()
    # More chatter while faulted: silent.
    seq = last_seq(t)
    bounce(t, i, 2 * LIMIT, 3)
    assert new_records(t, seq) == []
    # Still for the whole window: the input recovers, with its level unchanged
    # (a level signal's RECOVER re-states that level to the machine: no record).
    seq = last_seq(t)
    state = t.state()
    t.run(WINDOW + 50)
    assert not t.hw.switches.faulted(i), INPUT_SIGNALS[i]
    recs = new_records(t, seq)
    # A settled supervisor switch must not journal a key turn that never was.
    assert recs == [], (st, INPUT_SIGNALS[i], recs)
    assert t.state() == state
    clear_faults(t)


def app_solenoid_pin(_t):
    return SOLENOID


def test_chatter_of_every_input_in_every_state():
    t = tap(Table())
    cases = 0
    for st in STATES:
        for i in range(len(INPUT_SIGNALS)):
            check_chatter(t, st, i)
            finish(t)
            cases += 1
    assert cases == 6 * 15
    t.close()


def test_bounces_shorter_than_the_debounce_are_no_event_in_any_state():
    t = tap(Table())
    for st in STATES:
        want = to_state(t, st)
        for i in range(len(INPUT_SIGNALS)):
            seq = last_seq(t)
            events = t.ctl.events
            # Away and back within 10 ms (half the debounce), polled every
            # 5 ms; then two faster flicks: 6 transitions, under the limit.
            bounce(t, i, 2, 10)
            bounce(t, i, 4, 2)
            tick(t, DEBOUNCE + 5)
            assert t.ctl.events == events, (st, INPUT_SIGNALS[i])
            assert new_records(t, seq) == [], (st, INPUT_SIGNALS[i])
            assert t.state() == want, (st, INPUT_SIGNALS[i], t.state())
            assert not t.hw.switches.faulted(i)
        t.run(WINDOW)  # the glitches' transitions leave the chatter window
        finish(t)
    t.close()


def test_two_inputs_chattering_raise_two_alarms_and_the_keys_work_after():
    t = tap(Table())
    to_state(t, "result")
    seq = last_seq(t)
    face1 = S.KEY_FACE_1
    face4 = S.KEY_FACE_1 + 3
    for k in range(3 * LIMIT):
        lv = 1 if k % 2 == 0 else 0
        t.set("key_face_1", lv)
        t.set("key_face_4", lv)
        tick(t, 2)
    t.set("key_face_1", 0)
    t.set("key_face_4", 0)
    recs = new_records(t, seq)
    assert [(r.type, r.p(0), r.p(1)) for r in recs] == [
        (R.J_ALARM, E.R_SENSOR_FAULT, E.S_KEYS)] * 2, recs
    assert t.state() == E.ST_RESULT and t.m.entry.count == 0  # no face was entered
    # Until they settle, the faulted keys are dead; afterwards they work.
    t.press("key_face_1")
    assert t.m.entry.count == 0
    t.run(WINDOW + 50)
    assert not t.hw.switches.faulted(face1) and not t.hw.switches.faulted(face4)
    t.enter(1, 4, 4)
    assert t.state() == E.ST_PAYING
    assert list(t.m.dice) == [1, 4, 4]
    t.close()


def test_a_fault_blocks_the_next_shake_until_the_supervisor_acknowledges():
    t = tap(Table())
    to_state(t, "open")
    bounce(t, S.CLASP_LEFT, 3 * LIMIT, 2)
    assert t.state() == E.ST_IDLE
    t.run(WINDOW + 50)
    t.press("shake")
    assert t.state() == E.ST_IDLE
    refused = [r for r in new_records(t, 0) if r.type == R.J_REFUSED]
    assert refused and refused[-1].p(0) == E.R_FAULT_ACTIVE
    clear_faults(t)
    t.press("shake")
    assert t.state() == E.ST_SHAKING
    assert E.POLL_MS == 5  # the rig's bounces assume the app's 5 ms poll
    t.close()
