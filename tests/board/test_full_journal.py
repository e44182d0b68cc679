"""Real boots through main.py on the virtual board running the 32-bit VM (it
allocates like the ESP32), with the firmware deployed by `sicbo deploy` as the
README says, on a journal filled to its cap (rotation's budget: 4 segments of
4 KiB, the oldest deleted): the board must reach the running table (its
console line `sicbo: <table name>, round N, state S`) and settle the rounds
played after it, at the board's heap and at the heap goals
(host_tools/heaps.py): 90 KiB for the .mpy firmware (on the bench worker), 56
KiB, the heap before it grows, for the frozen image.
The smallest heaps (with 1,000 rounds and power cuts) are figures of
bench/board_heap.py."""

import os
import shutil
import sys
import time

from boardkit import (
    BOARD,
    TABLE,
    Board,
    figure,
    is_idle,
    play_and_check,
    read_records,
    segments,
)
from prefill import heap_in_use

from host_tools import REPO, heaps

sys.path.insert(0, os.path.join(REPO, "bench"))
import board_heap  # noqa: E402

MAX_FILL_ROUNDS = 150


def test_boot_on_a_journal_filled_by_play_at_the_boards_heap(vm32, tmp_path):
    """(a) At the ESP32's heap after its one growth (111,936 bytes): deploy,
    play rounds through the simulated table until the journal has rotated
    and deleted its oldest segment, cut the power, power on again on that
    full journal, play rounds; then that journal at 90 KiB (heaps.BOOT_GOAL),
    power-ons with cuts on the bench worker."""
    b = Board(str(tmp_path / "vb"), vm32, heaps.BOARD_HEAP)
    try:
        out = b.deploy()
        assert "deployed code" in out, out
        b.open_console()
        name, rnd, state = b.reset_on_console()
        assert is_idle(state), (name, rnd, state)
        t0 = time.monotonic()
        b.round = rnd
        filled_at = None
        while filled_at is None or b.round < filled_at + 2:
            assert b.round - rnd < MAX_FILL_ROUNDS, "the journal never rotated: %s" % (
                segments(b.journal_dir),)
            b.play(None if b.round % 10 == 9 else (1 + b.round % 6, 2, 1 + b.round // 6 % 6))
            if filled_at is None and "j00000001.log" not in segments(b.journal_dir):
                filled_at = b.round  # the first segment is gone: the journal is at its cap
        fill_s = time.monotonic() - t0
        fill_rounds = b.round - rnd
        size = sum(os.path.getsize(os.path.join(b.journal_dir, n))
                   for n in segments(b.journal_dir))
        last = max(r.round for r in read_records(b.journal_dir))
        mark = b.console.mark()
        t0 = time.monotonic()
        name, rnd, state = b.power_cycle("power-on on the full journal")
        boot_s = time.monotonic() - t0
        assert rnd == last and is_idle(state), (rnd, state, last)
        play_and_check(b, rnd, 3, mark)
        used = heap_in_use(b)
    finally:
        b.close()
    figure("(a) .mpy firmware, heap %d: journal filled by %d rounds through the table "
           "(%.0f s; %d segments, %d bytes, the oldest deleted), power-on on it reached the "
           "running table in %.1f s (round %d), 3 rounds settled; heap in use by the running "
           "table then: %s" % (heaps.BOARD_HEAP, fill_rounds, fill_s,
                               len(segments(b.journal_dir)), size, boot_s, rnd, used))
    # The same journal on the .mpy firmware's goal heap (90 KiB: room for a TLS link
    # beside the table), on the bench worker: it runs the firmware through
    # main.py's stages as the board does, without the simulated machine and
    # its pty wires, which take some 15 KB of the virtual board's heap that an
    # ESP32 does not spend (and which vary with the checkout's path: at 90 KiB
    # the virtual board booted from /work/ci9 and not from /check/work/main).
    _boot_goal_on_the_same_journal(vm32, b.journal_dir)


GOAL_ROUNDS = 16
GOAL_CUT_EVERY = 2


def _boot_goal_on_the_same_journal(vm32, journal_dir):
    board_heap.compile_all()
    interp = board_heap.Interp(vm32)
    full = board_heap.new_folder("filled-by-play", board=BOARD, table=TABLE)
    try:
        shutil.copytree(journal_dir, os.path.join(full, "journal"))
        assert "j00000001.log" not in segments(os.path.join(full, "journal"))
        c = board_heap.campaign(interp, full, heaps.BOOT_GOAL, GOAL_ROUNDS, GOAL_CUT_EVERY, 11)
    finally:
        shutil.rmtree(full, ignore_errors=True)
    assert c.failure is None, "at the goal heap (%d bytes): %s" % (heaps.BOOT_GOAL, c.failure)
    assert c.cuts >= 2 and len(c.started()) >= GOAL_ROUNDS, (c.cuts, c.started())
    figure("(a) .mpy firmware, heap %d (the goal), bench worker: %d power-ons on the journal "
           "filled through the table, power cuts: %d, rounds started: %d; heap in use after each "
           "boot %d..%d bytes" % (heaps.BOOT_GOAL, c.runs, c.cuts, len(c.started()),
                                  min(c.boot_heaps), max(c.boot_heaps)))
