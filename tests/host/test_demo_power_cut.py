"""The README's power cut while `sicbo demo` plays: the table's power cut
and restored through its control socket by another process (`TableClient
(...).power_cut(); power_on()`), at moments of a round, and the demo's
dealer follows the board through each: it sees the board's boot (the port
comes back and the board starts once the demo holds it again, as an ESP32
takes its bootloaders' time), deals with what the cut left (a round voided
before the bell, its alarm acknowledged), and plays on; the journal loses
and doubles no round. Waits are for the demo's own lines."""

import re

from demokit import Demo, check_journal

from host_tools.simclient import TableClient

ENDED = re.compile(r"^round (\d+) (paid|void)")
# Where the power goes: the board has just journaled the shake, and betting
# has just opened (before the bell: the board voids the round at its boot
# and raises an alarm, which the dealer has acknowledged).
MOMENTS = (r"^  board \| journal +\d+ round +\d+ round ", r"^dealer: place your bets")


def test_the_demo_follows_the_board_through_power_cuts_from_the_control_socket(tmp_path):
    folder = str(tmp_path / "demo")
    demo = Demo(folder, 7, "--fresh")
    try:
        at = demo.wait(r"^round \d+ paid")
        for pattern in MOMENTS:
            at = demo.wait(pattern, at + 1)
            c = TableClient(folder + "/control.sock")
            try:
                c.power_cut()
                c.power_on()
            finally:
                c.close()
            boot = demo.wait(r"^  board \| journal +\d+ round +\d+ boot +after a power-on", at)
            # The round the cut left: voided by the board (before the bell),
            # its alarm acknowledged; or, should the bell have beaten the
            # cut, finished by the dealer.
            demo.wait(r"^  board \| journal .* void +reason power cut"
                      r"|^dealer: round \d+ was cut after the bell", boot)
            at = demo.wait(r"^round \d+ paid", boot)  # and the dealer plays on
    finally:
        code = demo.stop()
    out = demo.text()
    assert code == 130, out[-3000:]
    assert "Traceback" not in out and "sicbo demo:" not in out, out[-3000:]
    ended = {}
    for line in demo.lines:
        m = ENDED.match(line)
        if m:
            ended[int(m.group(1))] = m.group(2)
    # the first cut, just after the shake, is always before the bell
    assert [rid for rid, how in ended.items() if how == "void"], ended
    assert "alarm_clear" in out, out[-3000:]
    assert check_journal(folder, ended) >= 3
