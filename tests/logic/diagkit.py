# The rig of the diag safeguard tests (test_safeguards_diag*.py): diag on the
# simulated board with the app stopped as at the REPL, its output kept.
import machine
from appkit import Table, board_dict

import diag
from sicbo import journal
from sicbo import records as R

_out = []


def _print(*args):
    _out.append(" ".join([str(a) for a in args]))


diag.print = _print  # diag's output, kept for the asserts


class _Time:
    """diag's clock: the real one, but a negative sleep returns at once as
    MicroPython's does (host_tools.mpshim's sleep_ms refuses it)."""

    def __init__(self, t):
        self.ticks_ms = t.ticks_ms
        self.ticks_diff = t.ticks_diff
        self.ticks_add = t.ticks_add
        self._sleep = t.sleep_ms

    def sleep_ms(self, ms):
        if ms > 0:
            self._sleep(ms)


diag.time = _Time(diag.time)


class _Gc:
    """CPython's gc has no mem_free/mem_alloc (status() prints the heap)."""

    def __init__(self, gc):
        self.collect = gc.collect

    def mem_free(self):
        return 0

    def mem_alloc(self):
        return 0


if not hasattr(diag.gc, "mem_free"):
    diag.gc = _Gc(diag.gc)


def _pulses(pin):
    return len([1 for _t, _p, v in machine.sim_edges(pin) if v])


def _table(play=True):
    t = Table(board=board_dict(bell_ms=50))
    if play:
        t.play(1, 2, 3)
    t.close()
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    return t


def _diag_records(t):
    from journal_store import JournalStore

    st = JournalStore(t.folder)
    out = []
    for data in st.read_all():
        out.extend([(r.type, r.p(0)) for r in journal.records(data) if r.type == R.J_DIAG])
    st.close()
    return out


def _close(t, cover=1, left=1, right=1):
    t.set("cover", cover)
    t.set("clasp_left", left)
    t.set("clasp_right", right)


