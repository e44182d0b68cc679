"""Power cuts on the virtual board, the short version of
bench/powercut_vboard.py: 20 rounds through the simulated
table, the interpreter killed at 10 random moments (seeded) and restarted, at
the board's heap (host_tools/heaps.py). Every boot reaches the running table
(the app's `sicbo: <table>, round N, state S` line on the console), no fault
is journaled, the board never resets itself, every round the host saw
completed is in the journal after the restart, and no round is settled twice.
The long run (1,000 rounds) is `make soak`."""

import importlib.util
import os

from host_tools import REPO


def _bench():
    path = os.path.join(REPO, "bench", "powercut_vboard.py")
    spec = importlib.util.spec_from_file_location("powercut_vboard", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_power_cuts_lose_nothing_double_nothing_and_every_boot_runs():
    bench = _bench()
    r = bench.campaign(rounds=20, cuts=10, seed=11)
    assert r["aborted"] is None, r
    assert r["failed_boots"] == 0, r["failed_boot_details"]
    assert r["faults"] == 0, r["fault_records"]
    assert r["own_resets"] == 0, r
    assert r["cuts"] >= 10  # and one more per key press the loaded host made it miss
    # the first boot (a reset after the deploy), then one per cut; each one
    # journaled and seen running
    assert r["boots"] == r["cuts"] + 1, r
    assert r["interpreter_starts"] == r["running_seen"] == r["boots"], r
    assert r["lost"] == 0, r
    assert r["doubled"] == 0, r
    assert r["completed_seen"] >= 10, r
    assert r["journal_paid"] + r["journal_voids"] >= 19, r
    assert bench.failed(r) == []


def test_a_boot_that_does_not_reach_the_running_table_fails_the_campaign():
    bench = _bench()
    r = {"lost": 0, "doubled": 0, "failed_boots": 1, "faults": 0, "own_resets": 0,
         "aborted": None}
    assert bench.failed(r) == ["failed boots 1"]
    r.update(failed_boots=0, rounds=1000, missed=[("late", [])] * 10)
    assert bench.failed(r) == []
    r["missed"].append(("late", []))
    assert bench.failed(r) == ["missed key presses 11"]
    assert bench.RUNNING.match("sicbo: Macau 2004 demo, round 12, state IDLE")
    assert not bench.RUNNING.match("sicbo: FAULT in stage 7: MemoryError")
