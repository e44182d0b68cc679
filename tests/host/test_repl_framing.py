"""The virtual board's REPL framing (host_tools/vboard_repl.py) alone: bytes
and facts in, bytes and actions out; no pty, no interpreter."""

import signal

from host_tools.vboard_repl import (
    ACK,
    ACK_AGAIN,
    POWER_ON,
    RAW_HEADER,
    RESET_EXIT,
    SOFT_FRIENDLY,
    SOFT_RAW,
    SOFT_REBOOT,
    NewlineFilter,
    ReplFraming,
    partial_suffix,
)

BOOT = b"\x1b_vboard:boot\x1b\\"
INT = b"\x1b_vboard:int\x1b\\"
READY = b"\x1b_vboard:ready\x1b\\"
BANNER = b"MicroPython v1.29.0 on 2026-01-01; linux [GCC] version\nUse Ctrl-D to exit\n"


def booted(kind=POWER_ON, printed=b"main says hi\n"):
    """A framing whose interpreter booted as `kind` and whose REPL reads."""
    f = ReplFraming()
    f.started(kind)
    f.child_output(BOOT + printed + READY)
    assert f.take_child() == ACK
    if kind == SOFT_RAW:
        f.child_output(BANNER + b">>> ")
        f.repl_reading()
        assert f.take_child() == b"\x01"
        f.child_output(b"\r\n" + RAW_HEADER + b">")
    else:
        f.child_output(BANNER + b">>> ")
        f.repl_reading()
    assert f.take_actions() == [("ready",)]
    assert f.take_child() == b""
    return f


def test_boot_output_reaches_the_host_markers_do_not():
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(b"boot.py ran\n\x1b_vboa")  # a marker cut between two reads
    f.child_output(b"rd:ready\x1b\\")
    assert f.take_host() == b"boot.py ran\r\n"
    assert f.take_actions() == []
    f.child_output(BANNER + b">>> ")
    assert not f.running
    assert f.waiting_for_repl
    f.repl_reading()
    assert f.running
    assert f.take_actions() == [("ready",)]
    assert f.take_host().endswith(b">>> ")


def test_host_input_is_held_until_the_repl_reads():
    f = ReplFraming()
    f.started(POWER_ON)
    f.host_input(b"\r\x01")
    assert f.take_child() == b""
    f.child_output(BOOT + READY + b">>> ")
    assert f.take_child() == ACK
    f.host_input(b"x")
    assert f.take_child() == b""  # the prompt, but the terminal is not raw yet
    f.repl_reading()
    assert f.take_child() == b"\r\x01x"
    f.host_input(b"y")
    assert f.take_child() == b"y"


def test_repl_reading_before_the_prompt_changes_nothing():
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(BOOT + READY)
    f.repl_reading()
    assert not f.running and f.take_actions() == []


def test_ctrl_c_while_main_runs_interrupts_it_once_at_a_time():
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(BOOT + b"main.py runs\n")
    f.host_input(b"ab\x03cd\x03")
    assert f.take_child() == b"\x03"  # two SIGINTs at once would end the unix port
    f.host_input(b"\x03")
    assert f.take_child() == b""  # merged into the one on its way
    f.child_output(b"KeyboardInterrupt:\n" + INT)  # taken: the next may go
    f.host_input(b"\x03")
    assert f.take_child() == b"\x03"
    f.child_output(b"KeyboardInterrupt:\n" + INT + READY + b">>> ")
    assert f.take_host() == b"main.py runs\r\n" + b"KeyboardInterrupt:\r\n" * 2 + b">>> "
    assert f.take_child() == ACK
    f.host_input(b"\x03")  # after the boot script: a byte for the REPL
    assert f.take_child() == b""
    f.repl_reading()
    assert f.take_child() == b"abcd\x03"


def test_ctrl_c_before_the_boot_script_runs_waits_for_it():
    # the unix port's default SIGINT action (it ends) holds until the
    # boot script runs: a Ctrl-C then would kill it, a board would not reset
    f = ReplFraming()
    f.started(POWER_ON)
    f.host_input(b"\r\x03")
    f.host_input(b"\x03\r\x01")
    assert f.take_child() == b""
    f.child_output(BOOT)
    assert f.take_child() == b"\x03"  # one interrupt, for boot.py/main.py
    f.child_output(READY + b">>> ")
    assert f.take_child() == ACK  # after the Ctrl-C, on the same stream
    f.repl_reading()
    assert f.take_child() == b"\r\r\x01"
    assert f.take_actions() == [("ready",)]


def test_a_ctrl_c_still_held_when_boot_ends_is_not_sent():
    f = ReplFraming()
    f.started(POWER_ON)
    f.host_input(b"\x03")
    f.child_output(BOOT + READY)  # both in one read: the Ctrl-C goes before the ACK
    assert f.take_child() == b"\x03" + ACK
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(BOOT + READY)
    f.host_input(b"\x03")
    assert f.take_child() == ACK  # and none after it


def test_a_lost_ack_is_answered_again_and_repeated_markers_change_nothing():
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(BOOT)
    f.host_input(b"\x03")
    f.child_output(READY)
    assert f.take_child() == b"\x03" + ACK
    # the SIGINT came as the script read the ACK: it says so, gets 0x07; it
    # may also repeat what it wrote as the KeyboardInterrupt came
    f.child_output(b"\x1b_vboard:again\x1b\\" + INT + READY)
    assert f.take_child() == ACK_AGAIN
    f.child_output(b">>> ")
    f.repl_reading()
    assert f.take_actions() == [("ready",)]
    assert f.take_host() == b">>> " and f.take_child() == b""


def test_lone_newlines_become_crlf_across_reads():
    f = booted()
    f.take_host()
    f.child_output(b"a\nb\r")
    f.child_output(b"\nc\n")
    assert f.take_host() == b"a\r\nb\r\nc\r\n"


def test_newline_filter_stops_at_the_mount_protocol():
    nl = NewlineFilter()
    assert nl(b"x\n\x18\n\x00") == b"x\r\n\x18\n\x00"
    assert nl(b"bin\n") == b"bin\n"
    assert nl.binary
    f = booted()
    f.child_output(b"\x18raw\n")
    f.child_exited(0)
    f.started(SOFT_FRIENDLY)
    f.take_host()
    f.child_output(b"text\n")
    assert f.take_host() == b"text\r\n"  # a new interpreter: text again


def test_ctrl_d_in_the_friendly_repl_is_a_soft_reset_that_runs_main():
    f = booted()
    f.take_host()
    f.child_exited(0)
    assert f.take_host() == SOFT_REBOOT
    assert f.take_actions() == [("restart", SOFT_FRIENDLY, "soft")]


def test_soft_reset_from_the_raw_repl_hides_the_banner_and_stays_raw():
    f = booted()
    f.take_host()
    f.host_input(b"\r\x01")
    f.child_output(b"\r\n" + RAW_HEADER + b">")
    assert f.raw_mode
    f.take_host()
    f.child_exited(0)
    assert f.take_actions() == [("restart", SOFT_RAW, "soft")]
    assert f.take_host() == SOFT_REBOOT
    f.started(SOFT_RAW)
    f.host_input(b"\x04")  # mpremote's next byte, held
    f.child_output(BOOT + b"boot.py\n" + READY)
    assert f.take_child() == ACK
    f.child_output(BANNER + b">>> ")
    assert f.take_host() == b"boot.py\r\n"  # the banner is not shown
    f.repl_reading()
    assert f.take_child() == b"\x01"  # back into the raw REPL
    f.child_output(b"\r\nraw REPL; CTRL-B")
    assert f.take_host() == b""
    f.child_output(b" to exit\r\n>")
    assert f.take_host() == RAW_HEADER + b">"
    assert f.take_actions() == [("ready",)]
    assert f.take_child() == b"\x04"


def test_machine_reset_and_crash_restart_as_at_power_on():
    f = booted()
    f.child_exited(RESET_EXIT)
    assert f.take_actions() == [("restart", POWER_ON, "hard")]
    f = booted()
    f.child_exited(-signal.SIGSEGV)
    assert f.take_actions() == [("restart", POWER_ON, "crash")]
    f = booted()
    f.child_exited(-signal.SIGINT)  # a SIGINT as it left its code: a soft reset
    assert f.take_actions() == [("restart", SOFT_FRIENDLY, "soft")]


def test_sys_exit_in_main_asks_for_a_kill_then_a_soft_reset():
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(BOOT + b"bye\n\x1b_vboard:exit:3\x1b\\more")
    assert f.take_host() == b"bye\r\n"
    assert f.take_actions() == [("kill", 3)]
    f.child_exited(3)
    assert f.take_actions() == [("restart", SOFT_FRIENDLY, "soft")]


def test_ctrl_c_while_raw_pasted_code_runs_is_an_interrupt():
    f = booted()
    f.host_input(b"\x05A\x01")
    assert f.take_child() == b"\x05A\x01"
    f.host_input(b"while True: pass\x04")
    f.take_child()
    f.host_input(b"\x03")
    assert f.take_actions() == [("interrupt",)]
    assert f.take_child() == b""
    f.child_output(b"\x04Traceback\x04>")
    f.host_input(b"\x03")  # the code ended: a byte again
    assert f.take_actions() == []
    assert f.take_child() == b"\x03"


def test_a_ctrl_c_outside_raw_paste_is_a_byte():
    f = booted()
    f.host_input(b"\x03")
    assert f.take_actions() == [] and f.take_child() == b"\x03"


def test_power_cut_drops_input_and_output():
    f = booted()
    f.host_input(b"lost")
    f.child_output(b"also lost")
    f.off()
    assert f.take_host() == b"" and f.take_child() == b""
    f.host_input(b"x")
    assert f.take_child() == b""
    assert not f.raw_mode
    f.started(POWER_ON)
    f.child_output(BOOT + READY + b">>> ")
    f.repl_reading()
    assert f.take_child() == ACK


def test_partial_suffix():
    assert partial_suffix(b"abc\x1b_vb", b"\x1b_vboard:") == 4
    assert partial_suffix(b"abc", b"\x1b_vboard:") == 0
    assert partial_suffix(b"\x1b_vboard:", b"\x1b_vboard:") == 0


def test_input_held_while_main_runs_is_lost_at_a_hard_reset():
    # typed while main.py runs, then main.py resets the board (a reset loop):
    # what its UART held is gone with the reset, as on an ESP32, and never
    # reaches the REPL of a later boot (where it would reset the board again
    # under the next host tool)
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(BOOT)
    f.host_input(b"import machine; machine.reset()\r")
    f.child_exited(RESET_EXIT)
    assert f.take_actions() == [("restart", POWER_ON, "hard")]
    f.started(POWER_ON)
    f.child_output(BOOT + READY + b">>> ")
    assert f.take_child() == ACK
    f.repl_reading()
    assert f.take_child() == b""
    # a soft reset keeps it (the REPL reads it after the reboot)
    f = booted()
    f.host_input(b"\x04")
    f.take_child()
    f.child_exited(0)
    f.take_actions()
    f.started(SOFT_FRIENDLY)
    f.child_output(BOOT)
    f.host_input(b"kept\r")
    f.child_output(READY + b">>> ")
    assert f.take_child() == ACK
    f.repl_reading()
    assert f.take_child() == b"kept\r"


def test_a_ctrl_c_the_board_printed_past_is_lost_and_the_next_goes():
    # passed on, never taken (no "int"), and main.py printing on: merged
    # into it, no later Ctrl-C would ever reach the board
    f = ReplFraming()
    f.started(POWER_ON)
    f.child_output(BOOT + b"main.py runs\n")
    f.host_input(b"\x03")
    assert f.take_child() == b"\x03"
    f.host_input(b"\x03")
    assert f.take_child() == b""  # nothing printed since: on its way still
    f.child_output(b"sicbo: T, round 0, state 0\n")  # main.py went on past it
    f.host_input(b"\x03")
    assert f.take_child() == b"\x03"
    f.child_output(b"KeyboardInterrupt:\n" + INT + READY + b">>> ")
    assert f.take_child() == ACK
