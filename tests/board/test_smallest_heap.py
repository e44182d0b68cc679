"""The smallest heap at which the .mpy firmware boots on a full journal and
plays rounds with power cuts, bisected in 1 KiB steps on the 32-bit VM
(bench/board_heap.py; `make bench` runs it at 1,000 rounds):
at most the ESP32's heap, 111,936 bytes."""

from boardkit import figure
from prefill import board_heap

from host_tools import heaps

ROUNDS = 100
CUT_EVERY = 5


def test_smallest_heap_with_power_cuts_fits_the_board(vm32):
    board_heap.compile_all()
    interp = board_heap.Interp(vm32)
    full, _run = board_heap.fill_journal(interp)
    try:
        in_use, _before, _linked, _names, _own = board_heap.heap_after_boot(interp, full)
        kib, best, tried = board_heap.smallest_heap(interp, full, in_use, ROUNDS, CUT_EVERY, 5)
    finally:
        board_heap.shutil.rmtree(full, ignore_errors=True)
    assert kib is not None, "no heap up to %d KiB works: %s" % (board_heap.MAX_HEAP_KIB, {
        k: c.failure for k, c in tried.items()})
    below = tried.get(kib - 1)
    figure("(d) .mpy firmware: heap in use after boot on a full journal %d bytes; smallest heap "
           "that boots on it and plays %d rounds with %d power cuts: %d KiB (%d bytes)%s; "
           "the board's: %d bytes" % (in_use, ROUNDS, best.cuts, kib, kib * 1024,
                                      "; at %d KiB: %s" % (kib - 1, below.failure[:200])
                                      if below is not None else "", heaps.BOARD_HEAP))
    assert best.cuts >= ROUNDS // CUT_EVERY // 2, "too few power cuts to mean anything"
    assert kib * 1024 <= heaps.BOARD_HEAP, (
        "the firmware needs %d KiB to boot on a full journal and play %d rounds with power "
        "cuts; the board has %d bytes" % (kib, ROUNDS, heaps.BOARD_HEAP))
