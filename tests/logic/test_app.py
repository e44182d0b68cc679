# mprun-heap: controller
# The controller on the simulated hardware: whole rounds, through the pins.
import machine
from appkit import BELL, SOLENOID, Table, reboot, table_dict

from sicbo import events as E
from sicbo import records as R


def test_whole_round_through_the_pins():
    t = Table()
    assert t.state() == E.ST_IDLE
    t.close_dome()
    t.press("shake")
    assert t.state() == E.ST_SHAKING
    t.run(2000)
    assert t.state() == E.ST_OPEN
    assert "PLACE_BETS" in t.lit()
    # Three pulses of 60 ms, each well under the 200 ms hard limit.
    assert machine.sim_on_time(SOLENOID) == [60, 60, 60]
    t.press("key_bell")
    assert t.state() == E.ST_CLOSED and "PLACE_BETS" not in t.lit()
    t.run(1600)
    assert machine.sim_on_time(BELL) == [1500]
    t.set("cover", 0)
    t.run(60)
    assert t.state() == E.ST_RESULT
    t.enter(1, 1, 2)
    assert t.state() == E.ST_PAYING
    lit = t.lit()
    for area in ("SMALL", "EVEN", "SINGLE_1", "SINGLE_2", "DOUBLE_1", "PAIR_1_2", "PAYING"):
        assert area in lit, area
    assert "BIG" not in lit and "ODD" not in lit
    t.press("key_payout")
    assert t.state() == E.ST_IDLE
    assert t.m.round == 1
    types = t.types()
    for rt in (R.J_BOOT, R.J_ROUND, R.J_OPEN, R.J_BELL, R.J_COVER_OFF, R.J_RESULT, R.J_PAYOUT):
        assert rt in types, rt
    t.close()


def test_journal_written_before_the_lamps_change():
    t = Table()
    t.open_round()
    t.press("key_bell")
    t.set("cover", 0)
    t.run(60)
    for d in (3, 3, 3):
        t.press("key_face_%d" % d)
    t.set("key_confirm", 1)
    t.run(60)
    # The winning lamps are lit, and the result is already on the journal.
    assert "TRIPLE_3" in t.lit()
    results = [r for r in t.journal() if r.type == R.J_RESULT]
    assert len(results) == 1 and results[0].dice() == (3, 3, 3)
    t.close()


def test_no_shake_with_a_clasp_open():
    t = Table()
    t.set("cover", 1)
    t.set("clasp_left", 1)
    t.run(60)
    t.press("shake")
    assert t.state() == E.ST_IDLE
    assert machine.sim_on_time(SOLENOID) == []
    assert R.J_REFUSED in t.types()
    # The console's compact line: the dealer is shown the refusal, right clasp open.
    assert t.log[-1] == "D %d 2" % E.R_CLASP_OPEN, t.log[-3:]
    t.close()


def test_tamper_between_shake_and_bell_voids_and_lights_alarm():
    t = Table()
    t.open_round()
    t.set("clasp_right", 0)
    t.run(60)
    assert t.state() == E.ST_IDLE
    assert "ALARM" in t.lit() and "VOID" in t.lit()
    voids = [r for r in t.journal() if r.type == R.J_VOID]
    assert len(voids) == 1 and voids[0].p(0) == E.V_TAMPER
    t.close()


def test_power_cut_while_paying_comes_back_paying_with_lamps_lit():
    t = Table()
    t.open_round()
    t.press("key_bell")
    t.set("cover", 0)
    t.run(60)
    t.enter(2, 5, 2)
    assert t.state() == E.ST_PAYING
    t2 = reboot(t)
    assert t2.state() == E.ST_PAYING and t2.m.round == 1
    assert "DOUBLE_1" not in t2.lit() and "PAYING" in t2.lit() and "SINGLE_5" in t2.lit()
    t2.press("key_payout")
    assert t2.state() == E.ST_IDLE
    paid = [r for r in t2.journal() if r.type == R.J_PAYOUT]
    results = [r for r in t2.journal() if r.type == R.J_RESULT]
    assert len(paid) == 1 and len(results) == 1
    t2.close()


def test_round_ids_increase_across_reboots():
    t = Table()
    t.play(1, 2, 3)
    t.play(4, 5, 6)
    assert t.m.round == 2
    t2 = reboot(t)
    t2.play(6, 6, 6)
    assert t2.m.round == 3
    rounds = [r.round for r in t2.journal() if r.type == R.J_ROUND]
    assert rounds == [1, 2, 3]
    t2.close()


def test_configuration_change_is_journaled_once():
    t = Table()
    assert t.types().count(R.J_CONFIG) == 1
    t2 = reboot(t)
    assert t2.types().count(R.J_CONFIG) == 1  # the same files: no change
    t3 = reboot(t2, table=table_dict(name="test table, new odds"))
    assert t3.types().count(R.J_CONFIG) == 2
    t3.close()


def test_dice_reader_agreeing_and_garbage():
    from sicbo import dicereader

    t = Table()
    t.open_round()
    t.press("key_bell")
    machine.sim_uart_inject(2, b"\x00\xffgarbage\nDICE 1 2 2 5 *00\n")
    machine.sim_uart_inject(2, dicereader.line(1, 2, 2, 5))
    t.run(60)
    assert t.ctl.reader.ok == 1 and t.ctl.reader.rejected() >= 2
    t.set("cover", 0)
    t.run(60)
    t.enter(2, 2, 5)
    assert t.state() == E.ST_PAYING
    t.close()


def test_dice_reader_disagreeing_holds_the_round():
    from sicbo import dicereader

    t = Table()
    t.open_round()
    t.press("key_bell")
    machine.sim_uart_inject(2, dicereader.line(1, 6, 6, 6))
    t.set("cover", 0)
    t.run(60)
    t.enter(1, 2, 3)
    assert t.state() == E.ST_HOLD
    assert R.J_HOLD in t.types()
    t.close()


def test_chattering_cover_raises_a_fault_not_a_flood():
    t = Table()
    t.open_round()
    before = t.ctl.events
    for _ in range(40):
        t.set("cover", 0)
        machine.sim_advance(2)
        t.ctl.poll(t.now())
        t.set("cover", 1)
        machine.sim_advance(2)
        t.ctl.poll(t.now())
    t.run(100)
    alarms = [r for r in t.journal() if r.type == R.J_ALARM and r.p(0) == E.R_SENSOR_FAULT]
    assert len(alarms) == 1 and alarms[0].p(1) == E.S_COVER
    assert t.ctl.events - before < 5
    assert t.state() == E.ST_IDLE  # the round was voided by the fault
    t.close()


def test_a_boot_loop_keeps_the_journal_bounded():
    # Every boot opens a journal segment; a board that keeps resetting must
    # not grow its journal (and the list of segments in its heap) for ever.
    t = Table()
    t.play(1, 2, 3)
    for _ in range(20):
        t = reboot(t)
    assert len(t.store.segments()) <= t.store.max_files + 1
    # The meters of the paid round survive the segments that went.
    assert t.ctl.m.meters.get("paid") == 1
    assert t.m.round == 1 and t.state() == E.ST_IDLE
    t.close()


def test_dome_covered_before_payout_is_a_violation_through_the_pins():
    t = Table()
    t.to_result()
    assert t.state() == E.ST_RESULT
    t.enter(4, 5, 6)
    t.set("cover", 1)  # Art. 4: not before every winning bet is paid
    t.run(60)
    assert [r.p(0) for r in t.journal() if r.type == R.J_VIOLATION] == [
        E.R_COVER_BEFORE_PAYOUT]
    assert "ALARM" in t.lit() and t.state() == E.ST_PAYING
    # No next round until payout is confirmed.
    t.set("clasp_left", 1)
    t.set("clasp_right", 1)
    t.run(60)
    t.press("shake")
    assert t.state() == E.ST_PAYING and machine.sim_on_time(SOLENOID) == [60, 60, 60]
    t.press("key_payout")
    assert t.state() == E.ST_IDLE
    t.close()


def test_correction_only_under_the_supervisor_key_through_the_pins():
    t = Table()
    t.to_result()
    assert t.state() == E.ST_RESULT
    t.enter(1, 2, 3)
    t.enter(1, 2, 4)  # a second result without the key: refused
    assert t.m.dice == bytearray((1, 2, 3))
    refused = [r.p(0) for r in t.journal() if r.type == R.J_REFUSED]
    assert E.R_SECOND_RESULT in refused
    t.set("supervisor", 1)
    t.run(60)
    t.enter(1, 2, 4)
    corr = [r for r in t.journal() if r.type == R.J_CORRECTION]
    assert len(corr) == 1 and corr[0].dice(0) == (1, 2, 3) and corr[0].dice(3) == (1, 2, 4)
    assert "SINGLE_4" in t.lit() and "SINGLE_3" not in t.lit()
    assert t.m.dice == bytearray((1, 2, 4))
    t.close()


def test_void_with_each_reason_key_through_the_pins():
    for face, reason in ((1, E.V_STACKED), (2, E.V_LEANING), (3, E.V_OTHER)):
        t = Table()
        t.to_result()
        assert t.state() == E.ST_RESULT
        t.press("key_void")
        t.press("key_face_%d" % face)
        t.press("key_confirm")
        voids = [r for r in t.journal() if r.type == R.J_VOID]
        assert len(voids) == 1 and voids[0].p(0) == reason
        assert t.state() == E.ST_IDLE and "VOID" in t.lit()
        assert not [r for r in t.journal() if r.type == R.J_RESULT]
        t.close()


def test_void_refused_while_the_cover_is_on():
    t = Table()
    t.open_round()
    t.press("key_bell")
    t.press("key_void")
    assert t.state() == E.ST_CLOSED
    assert not [r for r in t.journal() if r.type == R.J_VOID]
    t.close()


def test_dice_keys_refused_outside_result_entry():
    t = Table()
    t.open_round()
    for d in (1, 2, 3):
        t.press("key_face_%d" % d)
    t.press("key_confirm")
    assert t.state() == E.ST_OPEN
    assert not [r for r in t.journal() if r.type == R.J_RESULT]
    t.close()


def test_reader_dice_out_of_range_refused():
    from sicbo import dicereader

    t = Table()
    t.open_round()
    t.press("key_bell")
    # A well-formed line with a valid checksum, but a die that shows 7.
    machine.sim_uart_inject(2, dicereader.line(1, 2, 2, 7))
    t.run(60)
    assert t.ctl.reader.ok == 0 and t.ctl.reader.bad_dice == 1
    assert not [r for r in t.journal() if r.type == R.J_READER]
    t.close()


def test_the_console_shows_every_message_the_machine_asks_for_once_in_order():
    # Whatever else a step commands (lamps, bell, solenoid), each C_SHOW is a
    # "D <message> <detail>" line, in order, and nothing else is.
    t = Table()
    m = t.ctl.m
    handle = m.handle
    asked = []

    def spy(ev, arg, now, wall):
        n = handle(ev, arg, now, wall)
        for i in range(n):
            if m.cmds[4 * i] == E.C_SHOW:
                asked.append("D %d %d" % (m.cmds[4 * i + 1], m.cmds[4 * i + 2]))
        return n

    m.handle = spy
    mark = len(t.log)  # the boot's own lines before
    t.set("clasp_left", 1)
    t.run(60)
    t.press("shake")  # refused: a message alone
    t.set("clasp_left", 0)
    t.run(60)
    t.play(2, 3, 4)  # messages beside lamps, bell and pulses
    t.play(6, 6, 6)
    shown = [line for line in t.log[mark:] if line.startswith("D ")]
    assert len(asked) >= 4 and shown == asked, (shown, asked)
    assert len([1 for i in range(len(asked) - 1) if asked[i] != asked[i + 1]]) >= 2, asked
    t.close()


def test_a_table_with_the_electric_shaker_alone_plays_its_round():
    # A board wired for the electric shaker only (no coil output): the motor
    # runs, the coil is absent, not a fault, and outputs go off as ever.
    from appkit import MOTOR, board_dict

    bd = board_dict()
    del bd["outputs"]["solenoid"]
    t = Table(board=bd, table=table_dict(shaker="electric"))
    assert t.ctl.hw.solenoid is None and t.ctl.hw.motor is not None
    t.close_dome()
    t.press("shake")
    t.run(bd["timings"]["electric_run_ms"] + 500)
    assert t.state() == E.ST_OPEN, t.state()
    t.bell_and_lift()
    t.enter(2, 5, 6)
    t.press("key_payout")
    assert machine.sim_on_time(MOTOR) and not machine.sim_on_time(SOLENOID)
    assert [r.dice() for r in t.journal() if r.type == R.J_RESULT] == [(2, 5, 6)]
    t.ctl.hw.all_off()
    assert not machine.sim_output(MOTOR)
    t.close()
