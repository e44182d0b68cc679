"""bench/board_heap.py's campaign can fail: its accounting on power-ons that
a fake interpreter plays (no MicroPython run here), and its bisection, which
takes only a MemoryError as "does not fit"."""

import importlib.util
import os

import pytest

from host_tools import REPO
from sicbo import journal
from sicbo import records as R


def _bench():
    path = os.path.join(REPO, "bench", "board_heap.py")
    spec = importlib.util.spec_from_file_location("board_heap", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Interp:
    frozen = None
    exe = "fake"


def _full(tmp_path, bench):
    """A journal of one round (round 1, paid), as the full journal's stand-in."""
    folder = tmp_path / "full"
    folder.mkdir(exist_ok=True)
    data = b"".join(journal.encode(t, seq, 1, 1, 0, None, p) for seq, t, p in (
        (1, R.J_ROUND, bytes(8)), (2, R.J_OPEN, bytes(8)), (3, R.J_BELL, bytes(8)),
        (4, R.J_COVER_OFF, bytes(8)), (5, R.J_RESULT, bytes((1, 2, 3, 0, 0, 0, 0, 0))),
        (6, R.J_PAYOUT, bytes(8))))
    (folder / "j00000001.log").write_bytes(data)
    return str(folder)


def _run(bench, lines, rc=0, boot="@boot 1 0 1000 2000 500 0 1 100"):
    return bench.Run(rc, "\n".join([boot, "@meters 1 1 0"] + lines
                                   + ["@exit 10 1 0"]) + "\n", "")


def test_a_power_on_that_plays_without_journaling_its_round_fails_the_campaign(
        tmp_path, monkeypatch):
    bench = _bench()
    # A power-on that was to play rounds and ends cleanly, but nothing new is
    # in the journal: without this check the campaign would go on for ever.
    monkeypatch.setattr(bench, "power_on", lambda *a: _run(bench, []))
    c = bench.campaign(_Interp(), _full(tmp_path, bench), 100000, 5, 10, 1)
    assert c.failure is not None and "no new round journaled" in c.failure, c.failure
    assert c.runs == 1


def test_a_round_started_that_is_not_a_new_round_of_the_journal_fails(tmp_path, monkeypatch):
    bench = _bench()
    # The dealer started round 2 and it was paid, but its J_ROUND is not in the
    # journal (a lost round); or a round id used again (round 1).
    monkeypatch.setattr(bench, "power_on", lambda *a: _run(bench, ["@start 2", "@end 2 paid 123"]))
    c = bench.campaign(_Interp(), _full(tmp_path, bench), 100000, 5, 10, 1)
    assert c.failure is not None and "not a new round of the journal" in c.failure
    monkeypatch.setattr(bench, "power_on", lambda *a: _run(bench, ["@start 1"]))
    c = bench.campaign(_Interp(), _full(tmp_path, bench), 100000, 5, 10, 1)
    assert c.failure is not None and "not a new round of the journal" in c.failure


def test_a_restart_at_every_power_on_is_a_failure_not_a_boot(monkeypatch):
    bench = _bench()
    monkeypatch.setattr(bench, "_power_on",
                        lambda *a: bench.Run(bench.RESTART_EXIT, "@restart\n", ""))
    r = bench.power_on(_Interp(), "/nowhere", 100000, "play", 0, 0, 1, 0)
    assert r.failure() == "restarts at every power-on (the files checked and cached again)"


def test_the_bisection_takes_only_a_memory_error_as_does_not_fit(monkeypatch):
    bench = _bench()

    class _C:
        runs = cuts = 1
        seconds = 0.0

        def __init__(self, failure):
            self.failure = failure

    monkeypatch.setattr(bench, "campaign", lambda interp, full, heap, *a: _C(
        None if heap >= 90 * 1024 else "power-on 3: MemoryError: memory allocation failed"))
    kib, _c, _tried = bench.smallest_heap(_Interp(), "/nowhere", 70 * 1024, 10, 5, 1)
    assert kib == 90
    monkeypatch.setattr(bench, "campaign", lambda interp, full, heap, *a: _C(
        None if heap >= 90 * 1024 else "doubled rounds [77]"))
    with pytest.raises(bench.BenchError, match="not the heap's: doubled rounds"):
        bench.smallest_heap(_Interp(), "/nowhere", 70 * 1024, 10, 5, 1)


def test_a_boards_heap_is_the_vms_less_the_least_the_simulator_held(tmp_path, monkeypatch):
    bench = _bench()
    # Each power-on says its heap in use before the firmware (the 5th figure)
    # and the interpreter's own at the worker's start (the 8th): the
    # simulator's bytes are their difference, and a board's heap is the VM's
    # less the least of them over the campaign's power-ons.
    monkeypatch.setattr(bench, "power_on",
                        lambda *a: _run(bench, [], boot="@boot 1 0 1000 2000 5000 0 1 600"))
    c = bench.campaign(_Interp(), _full(tmp_path, bench), 100000, 5, 10, 1)
    assert c.sim_heaps == [4400]  # recorded at its boot (the campaign then fails)
    c.sim_heaps.append(4200)
    assert bench.board_bytes(100, c) == (100 * 1024 - 4200, 4200)


def test_a_power_on_of_a_worker_of_another_revision_is_refused(tmp_path, monkeypatch):
    bench = _bench()
    # A VM built before the worker said the interpreter's own heap: its @boot
    # line has 7 figures; its simulator's bytes cannot be told.
    r = _run(bench, [], boot="@boot 1 0 1000 2000 500 0 1")
    assert r.failure() is not None and "not this bench's 8" in r.failure()
    r = _run(bench, [])
    assert r.failure() is None and r.boot[4] - r.boot[7] == 400
