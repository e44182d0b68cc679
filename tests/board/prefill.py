"""Journals filled to their cap by the firmware itself, elsewhere (bench/
board_heap.py's worker: the same .mpy or frozen firmware, the same board and
table files, through startup.open_table on the simulated machine), to be
copied into a virtual board's /journal; and what the tests do after a boot."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import time

from boardkit import BOARD, TABLE, Board, figure, is_idle, play_and_check, read_records, segments

from host_tools import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))
import board_heap  # noqa: E402

MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")


@functools.lru_cache(maxsize=None)
def prefilled(exe: str) -> str:
    """A folder with a journal at its cap written by `exe`'s firmware (and
    board.json/table.json: the files the tests deploy)."""
    board_heap.compile_all()
    folder, _run = board_heap.fill_journal(board_heap.Interp(exe), board=BOARD, table=TABLE)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def rotate_while_playing(b: Board, first_round: int, mark: int, limit: int = 30) -> int:
    """Rounds from idle until the store has opened a segment by rotation and
    deleted one (beyond the boot's own), each settled; returns how many."""
    before = segments(b.journal_dir)
    n = 0
    while True:
        play_and_check(b, first_round + n, 1, mark)
        n += 1
        now = segments(b.journal_dir)
        if now[0] != before[0] and now[-1] != before[-1]:
            return n
        assert n < limit, "no rotation in %d rounds: %s -> %s" % (n, before, now)


def heap_in_use(b: Board) -> str:
    """gc.mem_alloc() of the running table after collection, through
    mpremote without a soft reset (Ctrl-C stops the app; its objects stay)."""
    if b.console is not None:
        b.console.close()
        b.console = None
    time.sleep(0.1)
    r = subprocess.run([MPREMOTE, "connect", b.vb.port, "resume", "exec",
                        "import gc; gc.collect(); print('HEAP', gc.mem_alloc(), gc.mem_free())"],
                       capture_output=True, text=True, timeout=120)
    for line in r.stdout.splitlines():
        f = line.split()
        if f[:1] == ["HEAP"] and len(f) == 3:
            return "%s bytes (%.1f KiB), %s free" % (f[1], int(f[1]) / 1024, f[2])
    return "not read (%s; console %s, %d starts, %d soft resets)" % (
        (r.stdout + r.stderr).strip()[-200:], b.vb.console_state, b.vb.boots, b.vb.soft_resets)


def boot_on_prefilled(exe, heap, folder, tag):
    """Deploy (no reset), a full journal written by the same firmware elsewhere
    into /journal, power cut, power on: the running table, then rounds until
    the store has rotated while playing, each settled."""
    full = prefilled(exe)
    b = Board(folder, exe, heap)
    try:
        out = b.deploy(reset=False)
        b.install_journal(full)
        records = read_records(b.journal_dir)
        last = max(r.round for r in records)
        assert len(segments(b.journal_dir)) >= 4
        b.open_console()
        mark = b.console.mark()
        t0 = time.monotonic()
        try:
            name, rnd, state = b.power_cycle("power-on on a full journal at heap %d" % heap)
        except AssertionError as e:
            figure("%s heap %d: does NOT boot on a full journal: %s"
                   % (tag, heap, str(e).split("): ", 1)[-1][:600]))
            raise
        boot_s = time.monotonic() - t0
        assert rnd == last and is_idle(state), (rnd, state, last)
        played = rotate_while_playing(b, rnd, mark)
        used = heap_in_use(b)
    finally:
        b.close()
    figure("%s heap %d: boots on a full journal (%.1f s to the running table, round %d) and "
           "plays %d rounds, the journal rotating meanwhile; heap in use by the running table "
           "then: %s" % (tag, heap, boot_s, rnd, played, used))
    return out
