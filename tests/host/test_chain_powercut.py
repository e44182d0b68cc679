"""Power cuts on a provisioned virtual board (the virtual board's power_cut,
at random moments, many times, as bench/powercut_vboard.py makes them):
every boot runs, nothing is lost or doubled, and the board's journal then
verifies against the key store, every record with its MAC."""

import importlib.util
import os

from host_tools import REPO


def _bench():
    path = os.path.join(REPO, "bench", "powercut_vboard.py")
    spec = importlib.util.spec_from_file_location("powercut_vboard", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_power_cuts_never_leave_a_journal_that_does_not_verify():
    bench = _bench()
    r = bench.campaign(rounds=24, cuts=14, seed=13, chain=True)
    assert bench.failed(r) == [], bench.failed(r)
    assert r["cuts"] >= 14 and r["boots"] == r["cuts"] + 1, r
    ch = r["chain"]
    assert ch["verified"], ch["findings"]
    assert ch["records"] == ch["authenticated"] == r["records"] > 24 * 6, ch
    assert [c["first_seq"] for c in ch["chains"]] == [1]
