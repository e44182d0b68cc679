"""The mutation driver's own rules (host_tools/mutate.py): a mutant is killed
by a time limit only well past what its tests take unmutated, its test files
run fastest first, and the equivalent mutants it names match only the lines
they are about."""

import os

from host_tools import mutate as M

OUT = """\
........                                                                 [100%]
============================= slowest durations ==============================
61.20s call     tests/logic/test_app.py::test_a_round
3.50s setup    tests/logic/test_app.py::test_a_round
0.40s teardown tests/logic/test_app.py::test_a_round
2.00s call     tests/logic/test_chain.py::test_keys
0.01s call     tests/host/test_svg.py::test_svg[1-2]
8 passed in 67.11s
"""


def _t(name):
    return os.path.join(M.REPO, "tests", "logic", name)


def test_durations_are_summed_per_test_file():
    got = {}
    M._durations(OUT, got)
    assert round(got[_t("test_app.py")], 2) == 65.10
    assert round(got[_t("test_chain.py")], 2) == 2.00
    assert round(got[os.path.join(M.REPO, "tests", "host", "test_svg.py")], 2) == 0.01
    assert len(got) == 3


def test_a_baseline_that_did_not_time_every_file_gives_no_score():
    seconds = {}
    M._durations(OUT, seconds)
    timed = [_t("test_app.py"), _t("test_chain.py")]
    assert M.untimed(timed, seconds) is None
    why = M.untimed(timed + [_t("test_boot.py")], seconds)
    assert why == "the baseline timed 2 of 3 test files (not: tests/logic/test_boot.py)", why
    assert M.untimed(timed, {}) is not None  # durations not printed at all


def test_the_time_limit_follows_the_unmutated_time_and_never_goes_under_the_floor():
    seconds = {_t("test_app.py"): 100.0, _t("test_chain.py"): 20.0}
    tests = [_t("test_app.py"), _t("test_chain.py")]
    assert M.time_limit(tests, seconds, 60.0) == M.TIME_FACTOR * 120.0 + M.TIME_SLACK_S
    assert M.time_limit([_t("test_chain.py")], {_t("test_chain.py"): 1.0}, 60.0) == 60.0
    assert M.time_limit([_t("unknown.py")], seconds, 45.0) == 45.0


def test_the_module_s_own_tests_run_first_then_the_fastest():
    seconds = {_t("test_app.py"): 90.0, _t("test_access.py"): 40.0,
               _t("test_chain.py"): 2.0, _t("test_journal_store_x.py"): 50.0}
    order = M._order(list(seconds), "journal_store.py", seconds)
    assert [os.path.basename(t) for t in order] == [
        "test_journal_store_x.py", "test_chain.py", "test_access.py", "test_app.py"]


class _M:
    def __init__(self, file, line, desc):
        self.file, self.line, self.desc = file, line, desc


def test_an_equivalent_mutant_is_named_only_on_its_own_line():
    lines = ["def _manifest():", "    try:", "        return read()",
             "    except (OSError, ValueError):", "        return None",
             "def other():", "    if x:", "        return None"]
    why = M.equivalent_reason(_M("diag.py", 5, "deleted: `return None`"), lines)
    assert why and "None" in why
    assert M.equivalent_reason(_M("diag.py", 8, "deleted: `return None`"), lines) is None
    assert M.equivalent_reason(_M("faults.py", 5, "deleted: `return None`"), lines) is None


def test_modules_loaded_by_name_are_seen_by_the_tests_that_reach_their_loader():
    # faults.boot loads start-up and the resumption with faults.load, start-up the
    # running table's modules with _need(faults, "link.table"): a test that
    # boots a table sees them, so their mutants are run, not left untested.
    seen = M.seen_by()
    boots = os.path.join(M.LOGIC, "test_faults.py")
    for rel in ("startup.py", "resumption.py", "link/table.py", "link/plan.py", "bootfail.py"):
        assert boots in seen.get(rel, []), rel


def test_every_equivalent_mutant_named_is_one_of_the_firmware_s():
    # An entry that no longer matches a mutation point (its line edited) would
    # silently stop excusing anything, or excuse nothing it names.
    lines = {}
    matched = set()
    for m in M.all_mutants():
        if m.file not in lines:
            with open(os.path.join(M.DEVICE, m.file), encoding="utf-8") as f:
                lines[m.file] = f.read().splitlines()
        why = M.equivalent_reason(m, lines[m.file])
        if why is not None:
            for entry in M.EQUIVALENT:
                descs = entry[2] if isinstance(entry[2], tuple) else (entry[2],)
                if entry[0] == m.file and m.desc in descs and entry[3] == why:
                    prev, _, here = entry[1].rpartition("\n")
                    if here in lines[m.file][m.line - 1]:
                        matched.add(entry[:3])
    missing = [e[:3] for e in M.EQUIVALENT if e[:3] not in matched]
    assert missing == [], missing
