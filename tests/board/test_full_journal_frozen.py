"""(b) The production image on a full journal, on the 32-bit VM with the
firmware frozen in (its own file, so that the gate runs it beside the .mpy
firmware's full-journal test: each takes most of a minute)."""

from prefill import boot_on_prefilled

from host_tools import heaps


def test_frozen_image_boots_on_a_full_journal_at_the_boards_heap(vm32_frozen, tmp_path):
    """(b) The production image (firmware frozen in: deploy copies only main.py,
    board.json, table.json and the configuration cache) boots on a full
    journal and plays at the ESP32's heap, and in the heap the ESP32 starts
    with, before it grows (56 KiB: the frozen image's goal). The
    smallest heaps, with 1,000 rounds and power cuts, are figures:
    `bench/board_heap.py --all` bisects them."""
    out = boot_on_prefilled(vm32_frozen, heaps.BOARD_HEAP, str(tmp_path / "vb"),
                             "(b) frozen firmware,")
    assert "frozen firmware" in out, out
    out = boot_on_prefilled(vm32_frozen, heaps.BOARD_HEAP_INITIAL, str(tmp_path / "vb56"),
                             "(b) frozen firmware, the heap before it grows,")
    assert "frozen firmware" in out, out
