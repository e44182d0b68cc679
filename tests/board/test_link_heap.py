"""The floor link at the board's heap: real boots through main.py on the
virtual board running the 32-bit VM, the board file's `floor` section
pointing at a real mosquitto (the site's ACL on its password listener,
reached through the virtual board's network relay) and the floor service
storing and acknowledging, on a journal filled to its cap by the same
firmware: the board must reach the running table, the link must connect
and the floor acknowledge every record the journal holds, then the rounds
played after it are settled and stored too.

Heaps: the frozen image on the virtual board at the board's heap (111,936
bytes, the ESP32's after its one growth) and at the 56 KiB the ESP32 starts
with, before it grows. The .mpy firmware with its link runs on the
board-faithful bench worker instead (bench/board_heap.py: the simulated
machine and the rig frozen in, as a board's C classes and wires are): on
the virtual board the simulated machine and its pty wires take about 15 KB
of heap that a board does not, and the .mpy firmware with its link (104 KiB
on the worker, `bench/board_heap.py --link`) does not fit beside them;
there its link is refused for memory, journaled once (J_LINK down,
L_MEMORY), and the table plays on. The goal of the frozen image with its
link (heaps.LINK_GOAL_FROZEN, 52 KiB) is met on the worker; the .mpy
firmware's (heaps.LINK_GOAL, 96 KiB) is met on a board's figure (the
worker's less the simulator's objects, 92.6 KiB), not on the worker's own
(104 KiB)."""

import os
import sys
import time

import pytest
from boardkit import TABLE, Board, figure, is_idle, play_and_check, read_records
from prefill import heap_in_use

from host_tools import REPO, heaps
from host_tools.broker import require_mosquitto

sys.path.insert(0, os.path.join(REPO, "bench"))
import board_heap  # noqa: E402

BOARD = os.path.join(REPO, "bench", "virtual-fast.json")
ACK_TIMEOUT_S = 120  # generous: CI is a busy machine


def _need_mosquitto():
    why = require_mosquitto()
    if why is None:
        return
    if os.environ.get("SICBO_REQUIRE_PARTS") == "1" or os.environ.get("CI"):
        pytest.fail(why + " (the real parts are required here)", pytrace=False)
    pytest.skip(why)


def _wait_stored(floor, last, b, mark, what):
    """Until the floor has acknowledged (stored every record) up to `last`."""
    deadline = time.monotonic() + ACK_TIMEOUT_S
    while True:
        n, top = floor.stored()
        if top >= last:
            return n, top
        assert not b.console.failing(mark), b.console.explain(mark)
        assert time.monotonic() < deadline, (
            "%s: the floor stored up to %d of the journal's %d within %d s: %s"
            % (what, top, last, ACK_TIMEOUT_S, b.console.explain(mark)))
        time.sleep(0.1)


def _boot_with_the_link(exe, heap, tmp_path, tag):
    _need_mosquitto()
    board_heap.compile_all()
    floor = board_heap.LinkFloor()
    board_heap.LINK["floor"] = floor
    try:
        # A journal at its cap, written by the same firmware with the same
        # board file (its floor section) and acknowledged by a floor as it
        # went; then a floor of the board's own, which has none of it.
        full, _run = board_heap.fill_journal(board_heap.Interp(exe), board=BOARD, table=TABLE)
        floor.fresh()
        b = Board(str(tmp_path / "vb"), exe, heap, board=os.path.join(full, "board.json"),
                  broker=("127.0.0.1", floor.port))
        try:
            b.deploy(reset=False)
            os.makedirs(os.path.join(b.vb.fs, "secrets"), exist_ok=True)
            with open(os.path.join(b.vb.fs, "secrets", "password"), "w") as f:
                f.write(floor.table_password + "\n")
            b.install_journal(full)
            last = max(r.seq for r in read_records(b.journal_dir))
            b.open_console()
            mark = b.console.mark()
            t0 = time.monotonic()
            name, rnd, state = b.power_cycle("power-on with the floor link at heap %d" % heap)
            assert is_idle(state), (rnd, state)
            # The link connected and published the whole journal; the floor
            # stored it and acknowledged (the journal's own records after the
            # boot, J_BOOT and J_LINK, come after `last`).
            n, top = _wait_stored(floor, last, b, mark, "the full journal")
            drain_s = time.monotonic() - t0
            play_and_check(b, rnd, 3, mark)
            last = max(r.seq for r in read_records(b.journal_dir))
            n, top = _wait_stored(floor, last, b, mark, "the rounds played")
            used = heap_in_use(b)
        finally:
            b.close()
            board_heap.shutil.rmtree(full, ignore_errors=True)
    finally:
        floor.stop()
        board_heap.LINK["floor"] = None
    figure("%s heap %d, the floor link connected: booted on a full journal (round %d), the "
           "floor stored it in %.1f s, 3 rounds played and stored (%d records, up to %d); "
           "heap in use by the running table and its link then: %s"
           % (tag, heap, rnd, drain_s, n, top, used))


def test_frozen_image_with_the_link_at_the_boards_heap(vm32_frozen, tmp_path):
    _boot_with_the_link(vm32_frozen, heaps.BOARD_HEAP, tmp_path, "(link) frozen firmware,")


def test_frozen_image_with_the_link_in_the_heap_before_it_grows(vm32_frozen, tmp_path):
    # The ESP32 starts with 56 KiB: the production image, its link and the
    # simulated machine beside it, on a full journal, there.
    _boot_with_the_link(vm32_frozen, heaps.BOARD_HEAP_INITIAL, tmp_path,
                        "(link) frozen firmware, the heap before it grows,")


ROUNDS = 60
CUT_EVERY = 6


def test_mpy_firmware_with_the_link_at_the_boards_heap(vm32):
    """Power-ons with cuts at the board's heap on a full journal, on the
    bench worker, the floor link connected at every power-on: every round
    settled once, and the floor stored every record the journal holds. Then
    the same at the goal (heaps.LINK_GOAL of a board's heap: the VM's less
    the simulator's objects, bench/board_heap.py)."""
    _need_mosquitto()
    board_heap.compile_all()
    floor = board_heap.LinkFloor()
    board_heap.LINK["floor"] = floor
    try:
        interp = board_heap.Interp(vm32)
        full, _run = board_heap.fill_journal(interp, board=BOARD, table=TABLE)
        try:
            c = board_heap.campaign(interp, full, heaps.BOARD_HEAP, ROUNDS, CUT_EVERY, 7)
            # The goal, a board's heap of heaps.LINK_GOAL: the VM's heap is
            # that and the bytes the simulated machine and the worker hold
            # (measured by a boot first; each power-on says its own).
            _in_use, before, _up, _names, own = board_heap.heap_after_boot(interp, full)
            sim = before - own
            goal = board_heap.campaign(interp, full, heaps.LINK_GOAL + sim, ROUNDS, CUT_EVERY, 7)
        finally:
            board_heap.shutil.rmtree(full, ignore_errors=True)
    finally:
        floor.stop()
        board_heap.LINK["floor"] = None
    assert c.failure is None, "at the board's heap (%d bytes): %s" % (heaps.BOARD_HEAP, c.failure)
    assert goal.failure is None, ("at the goal, a board's %d bytes (the VM's %d, the simulator's "
                                  "%d): %s" % (heaps.LINK_GOAL, heaps.LINK_GOAL + sim, sim,
                                               goal.failure))
    # No power-on's simulator held less than the probe's: the firmware had
    # at most the goal's bytes at every one.
    assert min(goal.sim_heaps) >= sim, (sim, goal.sim_heaps)
    assert goal.acked >= max(goal.records), (goal.acked, max(goal.records))
    figure("(link) .mpy firmware at the goal, a board's heap of %d bytes (the VM's %d less the "
           "simulator's %d): %d power-ons, %d cuts, the floor acknowledged up to %d"
           % (heaps.LINK_GOAL, heaps.LINK_GOAL + sim, sim, goal.runs, goal.cuts, goal.acked))
    assert c.cuts >= ROUNDS // CUT_EVERY // 2, "too few power cuts to mean anything"
    assert len(c.link_up_heaps) == c.runs, (c.runs, c.link_up_heaps)
    last = max(c.records)
    assert c.acked >= last and c.stored[1] >= last, (c.acked, c.stored, last)
    figure("(link) .mpy firmware, heap %d, bench worker: %d power-ons on a full journal with %d "
           "cuts, the floor link connected at each (heap in use once connected: %d..%d bytes); "
           "the floor stored %d records, up to %d of the journal's %d"
           % (heaps.BOARD_HEAP, c.runs, c.cuts, min(c.link_up_heaps), max(c.link_up_heaps),
              c.stored[0], c.stored[1], last))
