# Edges of the lamp board (hw.lamps) and the watchdog (hw.watchdog) through
# the simulated machine: the lamps come up all off whatever the chain and its
# latch held before, and a watchdog for no task is refused at once.
import machine
from machine import SPI, WDT, Pin

from hw.lamps import ShiftLamps
from hw.watchdog import Watchdog

SCK = 18
MOSI = 23
LATCH = 19
OE = 4


def _bus(nbytes):
    machine.sim_reset()
    spi = SPI(2, baudrate=1000000, sck=Pin(SCK), mosi=Pin(MOSI))
    machine.sim_attach_595(2, LATCH, nbytes)
    return spi


def test_a_frame_left_in_the_chain_by_a_soft_reset_is_never_shown_at_start():
    spi = _bus(2)
    spi.write(b"\xff\xff")  # shifted before the reset, never latched
    oe = Pin(OE, Pin.OUT, value=1)
    ShiftLamps(spi, Pin(LATCH, Pin.OUT, value=0), 2, oe=oe)
    # only the all-off frame reaches the outputs, and they are enabled on it
    assert machine.sim_frames(LATCH) == [b"\x00\x00"]
    assert machine.sim_output(OE) == 0


def test_a_latch_left_high_still_latches_the_all_off_frame():
    spi = _bus(2)
    spi.write(b"\x81\x42")
    ShiftLamps(spi, Pin(LATCH, Pin.OUT, value=1), 2)
    assert machine.sim_frame(LATCH) == b"\x00\x00"
    assert machine.sim_output(LATCH) == 0  # low between frames


def test_a_watchdog_for_no_task_is_refused_with_a_clear_error():
    for n in (0, -1):
        machine.sim_reset()
        try:
            Watchdog(WDT(timeout=2000), max_tasks=n, ticks_ms=machine.sim_ticks_ms)
        except ValueError as e:
            assert "max_tasks" in str(e), (n, str(e))
        else:
            raise AssertionError("max_tasks=%d accepted" % n)
