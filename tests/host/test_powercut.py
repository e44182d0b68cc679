"""Power cuts on the virtual board, the short version of
bench/powercut_vboard.py (issue 5): 20 rounds through the simulated table, the
interpreter killed at 10 random moments (seeded) and restarted; every round
the host saw completed is in the journal after the restart, and no round is
settled twice. The long run (1,000 rounds) is `make soak`."""

import importlib.util
import os

from host_tools import REPO


def _bench():
    path = os.path.join(REPO, "bench", "powercut_vboard.py")
    spec = importlib.util.spec_from_file_location("powercut_vboard", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_power_cuts_lose_nothing_and_double_nothing():
    r = _bench().campaign(rounds=20, cuts=10, seed=11)
    assert r["cuts"] >= 10  # and one more per key press the loaded host made it miss
    assert r["boots"] == r["cuts"] + 1  # the deploy's reset, then one per cut
    assert r["lost"] == 0, r
    assert r["doubled"] == 0, r
    assert r["completed_seen"] >= 10, r
    assert r["journal_paid"] + r["journal_voids"] >= 19, r
    assert r["seconds"] < 60, r
