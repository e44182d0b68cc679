"""Technician access journaled on real boots at the heaps of the ESP32-heap
gate, on a journal filled to its cap: the Ctrl-C that stops the running
table (the access code loads beside the table still in the heap, replays the
journal and writes the stop), the clock set through the firmware at the
REPL then set back by hand (found by the next boot), and recovery mode (the
confirm key held at power-on); each a record of its own after the journal's
last, none damaged, the table resuming after them. Once the stop is
journaled the access code is forgotten (the REPL's heap keeps none of it).
The .mpy firmware at the board's heap (heaps.BOARD_HEAP; it does not boot on
a full journal at the 90 KiB goal yet, with or without this code), the
frozen image at 56 KiB, the heap before it grows (heaps.BOARD_HEAP_INITIAL)."""

import re
import subprocess
import time

from boardkit import BOOT_TIMEOUT_S, Board, figure, is_idle, play_and_check, read_records
from prefill import MPREMOTE, prefilled

from host_tools import heaps
from sicbo import records as R

_HEAP_LINE = re.compile(r"^ACCESS (True|False) (\d+) (\d+)\s*$")


def _wait_line(b, mark, test, what):
    """The first console line since mark that test() accepts; fails on an
    error line (MemoryError, OSError, ...; the stop's own KeyboardInterrupt
    is none), or on nothing within BOOT_TIMEOUT_S."""
    c = b.console
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while time.monotonic() < deadline:
        lines = c.since(mark)
        for ln in lines:
            if test(ln):
                return ln
        if any("Error" in ln and not ln.startswith(">>>") for ln in lines):
            time.sleep(0.5)  # what follows it
            break
        time.sleep(0.02)
    raise AssertionError("%s (heap %s): %s" % (what, b.vb.heap, c.explain(mark)))


def _mpremote(b, *args):
    r = subprocess.run([MPREMOTE, "connect", b.vb.port, *args], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def _after(b, before):
    """The records after the last of `before`, checked to follow it one by one."""
    recs = read_records(b.journal_dir)
    last = before[-1].seq
    new = [r for r in recs if r.seq > last]
    assert [r.seq for r in new] == list(range(last + 1, last + 1 + len(new))), \
        [(r.seq, r.type) for r in new]
    return new


def _access_on_a_full_journal(exe, heap, folder, tag):
    full = prefilled(exe)
    b = Board(folder, exe, heap)
    try:
        b.deploy(reset=False)
        b.install_journal(full)
        c = b.open_console()
        _name, rnd, state = b.power_cycle("power-on on a full journal at heap %d" % heap)
        assert is_idle(state), state

        # The stop, journaled from beside the running table.
        before = read_records(b.journal_dir)
        mark = c.mark()
        c.write(b"\r\x03")
        said = _wait_line(b, mark, lambda ln: "sicbo: stopped into the REPL" in ln,
                          "the Ctrl-C")
        assert "stopped into the REPL: journaled" in said, said
        new = _after(b, before)
        assert [r.type for r in new] == [R.J_REPL], new
        assert new[0].p(R.P_STOP_WHILE) == R.STOP_RUNNING
        mark = c.mark()
        c.write(b"import gc, sys; gc.collect(); "
                b"print('ACCESS', 'access' in sys.modules, gc.mem_alloc(), gc.mem_free())\r")
        m = _HEAP_LINE.match(_wait_line(b, mark, _HEAP_LINE.match, "the REPL's heap"))
        assert m.group(1) == "False", "the access code stayed loaded after the stop"
        repl_used = int(m.group(2))

        # The clock set through the firmware (diag, through mpremote as sicbo
        # diag does it: a soft reset first), then back by hand, then a reset
        # (the RTC survives it): the boot finds the move.
        before = read_records(b.journal_dir)
        c.close()
        b.console = None
        out = _mpremote(b, "exec", "import diag; diag.set_clock((2026, 12, 1, 1, 12, 0, 0, 0))")
        assert "not journaled" not in out, out
        new = _after(b, before)
        assert [r.type for r in new] == [R.J_CLOCK], (new, out)
        _mpremote(b, "exec",
                  "import machine; machine.RTC().datetime((2026, 11, 20, 4, 12, 0, 0, 0))")
        c = b.open_console()
        b.reset_on_console()
        new = _after(b, before)
        moved = [r for r in new if r.type == R.J_CLOCK_MOVED]
        assert len(moved) == 1 and R.J_BOOT in [r.type for r in new], new
        assert R.J_FAULT not in [r.type for r in new], new

        # Recovery mode: the confirm key held at power-on; then the table again.
        before = read_records(b.journal_dir)
        b.vb.power_cut()
        b.client.set("key_confirm", 1)
        mark = c.mark()
        try:
            b.vb.power_on(timeout=0, before_boot=c.reattach)
            _wait_line(b, mark, lambda ln: "recovery mode" in ln, "recovery mode")
            deadline = time.monotonic() + BOOT_TIMEOUT_S
            while not _after(b, before) and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            b.client.set("key_confirm", 0)
        assert not any("not journaled" in ln for ln in c.since(mark)), c.explain(mark)
        new = _after(b, before)
        assert [r.type for r in new] == [R.J_RECOVERY], new
        mark = c.mark()
        _name, rnd, state = b.power_cycle("power-on after recovery mode")
        assert is_idle(state), state
        play_and_check(b, rnd, 1, mark)
    finally:
        b.close()
    figure("%s heap %d, full journal: the Ctrl-C journaled beside the running table, the "
           "access code then forgotten (%d bytes in use at the REPL), the clock set and set "
           "back, recovery mode, each journaled; the table resumed and played"
           % (tag, heap, repl_used))


def test_access_journaled_at_the_boards_heap_mpy(vm32, tmp_path):
    _access_on_a_full_journal(vm32, heaps.BOARD_HEAP, str(tmp_path / "vb"), "(access) .mpy,")


def test_access_journaled_at_the_initial_heap_frozen(vm32_frozen, tmp_path):
    _access_on_a_full_journal(vm32_frozen, heaps.BOARD_HEAP_INITIAL, str(tmp_path / "vbf"),
                              "(access) frozen,")
