# mprun-heap: controller
# A board file that asks for a held coil (timings.hold_percent) gets it: the
# table's shake pulls the coil in at full duty, holds it at the board's
# percentage, and ends every pulse at duty 0, on the PWM of the board file.
import machine
from appkit import SOLENOID, Table, board_dict

HOLD = 40 * 65535 // 100


def test_the_shake_pulls_in_holds_and_releases_the_coil_as_the_board_file_says():
    t = Table(board=board_dict(hold_percent=40, pull_in_ms=30, pwm_freq=25000))
    assert machine.sim_pwm(SOLENOID) == (25000, 0)
    t.close_dome()
    t.set("shake", 1)
    seen = []
    for step in range(400):  # the shake's three pulses, 60 ms on and 250 off
        if step == 12:
            t.set("shake", 0)  # the key up again after 60 ms
        t.run(5)
        duty = machine.sim_pwm(SOLENOID)[1]
        if not seen or seen[-1] != duty:
            seen.append(duty)
    assert seen == [0] + [65535, HOLD, 0] * 3, seen
    assert machine.sim_pwm(SOLENOID)[0] == 25000
