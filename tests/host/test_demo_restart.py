"""`make run` always plays: `sicbo demo` interrupted (SIGINT, as Ctrl-C) at
many moments of a round, and started again on the same folder each time,
plays at least one more whole round each time (a new result journaled by
the board), and the journal never loses or doubles a round.

The moments: the shake, betting open, after the bell, result entry, paying,
a round held for the supervisor (the dice reader disagrees), an alarm not yet
acknowledged. Each run first plays a whole round of its own, then is
interrupted at the next moment; waits are for the demo's own lines (the
dealer's steps and the board's journal records), with generous deadlines."""

import re
import subprocess

from demokit import ROUND_DEADLINE, SICBO, Demo, check_journal, read_journal

from host_tools import REPO, heaps
from sicbo import events as E

# (name, a line of the demo's that says the moment has come)
MOMENTS = (
    ("shaking", r"^  board \| journal +\d+ round +\d+ round "),
    ("betting open", r"^  board \| journal +\d+ round +\d+ open "),
    ("after the bell", r"^  board \| journal +\d+ round +\d+ bell "),
    ("result entry", r"^  board \| journal +\d+ round +\d+ cover_off "),
    ("paying", r"^  board \| journal +\d+ round +\d+ result "),
    ("hold", r"^dealer: round \d+ is held"),
    ("alarm", r"^dealer: the alarm lamp is lit"),
)
# What the stop cut (read from the journal after it: Ctrl-C lands a little
# after the moment's line, and the dealer may have gone on meanwhile) and the
# line of the next run that says the board or its dealer dealt with it.
AFTER_CUT = {
    "before the bell":
        r"^  board \| journal .* alarm +round interrupted by a power cut or a reset before "
        r"the bell",
    "after the bell": r"^dealer: round \d+ was cut after the bell: lift the cover, enter the dice",
    "in result entry": r"^dealer: round \d+ was cut in result entry: void it",
    "while paying": r"^dealer: round \d+ was cut while paying",
    "held": r"^dealer: round \d+ is held",
    "alarm": r"^dealer: the alarm lamp is lit",
}
RESULT = re.compile(r"^  board \| journal +\d+ round +(\d+) result ")
ENDED = re.compile(r"^round (\d+) (paid|void)")


def cut_left(folder):
    """What the last stop left in the journal for the next run: a key of
    AFTER_CUT, or None (a round between rounds, no alarm)."""
    rd, _recs = read_journal(folder)
    st = rd.replay.state
    if st in (E.ST_SHAKING, E.ST_OPEN):
        return "before the bell"
    kind = {E.ST_CLOSED: "after the bell", E.ST_RESULT: "in result entry",
            E.ST_PAYING: "while paying", E.ST_HOLD: "held"}.get(st)
    if kind is None and rd.replay.alarm:
        kind = "alarm"
    return kind


def test_the_demo_plays_on_after_a_stop_at_any_moment(tmp_path):
    folder = str(tmp_path / "demo")
    ended = {}  # round id -> "paid" / "void", as the demo said
    results = 0
    first = True
    cuts = []  # what each stop left: keys of AFTER_CUT, None for nothing
    for k, (moment, pattern) in enumerate(MOMENTS):
        demo = Demo(folder, 100 + k, *(("--fresh",) if first else ()))
        try:
            if cuts and cuts[-1] is not None:
                demo.wait(AFTER_CUT[cuts[-1]], timeout=ROUND_DEADLINE)
            # a whole round of this run first: a result journaled, then its end
            i = demo.wait(RESULT.pattern)
            i = demo.wait(r"^round %s paid" % RESULT.match(demo.lines[i]).group(1), i)
            if first:
                # a second demo on the same folder would be a second board on
                # its filesystem, writing its journal: refused
                r = subprocess.run(SICBO + ["demo", "--folder", folder, "--fresh"], cwd=REPO,
                                   capture_output=True, text=True, timeout=60)
                assert r.returncode == 2 and r.stdout == "", r
                assert r.stderr.strip() == (
                    "sicbo demo: %s is in use by sicbo demo (pid %d): stop it first (one "
                    "virtual board per run folder)" % (folder, demo.proc.pid)), r.stderr
            demo.wait(pattern, i + 1)
        finally:
            code = demo.stop()
        out = demo.text()
        assert code == 130, (moment, code, out[-3000:])
        assert "Traceback" not in out and "sicbo demo:" not in out, (moment, out[-3000:])
        for line in demo.lines:
            m = ENDED.match(line)
            if m:
                ended[int(m.group(1))] = m.group(2)
        now = check_journal(folder, ended)
        assert now > results, (moment, now, results)  # this run journaled a new result
        results = now
        first = False
        cuts.append(cut_left(folder))
    # the stops cut rounds in many states, not only between rounds
    kinds = {c for c in cuts if c is not None}
    assert len(kinds) >= 4, cuts
    # and once more, to its end: a whole round after the last stop
    demo = Demo(folder, 99, "--rounds", "1", "--incidents", "0")
    try:
        code = demo.proc.wait(ROUND_DEADLINE)
    except subprocess.TimeoutExpired:
        demo.stop()
        raise
    demo.thread.join(10)
    out = demo.text()
    assert code == 0, out[-3000:]
    if cuts[-1] is not None:  # what the last stop left was mended first
        assert re.search(AFTER_CUT[cuts[-1]], out, re.M), (cuts[-1], out[-3000:])
    assert re.search(r"^1 round played", out, re.M), out[-2000:]
    for line in demo.lines:
        m = ENDED.match(line)
        if m:
            ended[int(m.group(1))] = m.group(2)
    assert check_journal(folder, ended) > results
    rd, _recs = read_journal(folder)
    assert rd.replay.state == E.ST_IDLE and not rd.replay.alarm
    assert all(r.status in ("paid", "void") for r in rd.recall.rounds)


def test_a_board_out_of_service_is_said_with_what_to_type(tmp_path):
    # Three failed boots in a row counted on the board: it stays out of
    # service, which the demo cannot mend; it says so, and what to type.
    folder = tmp_path / "demo"
    (folder / "fs").mkdir(parents=True)
    (folder / "fs" / "fault.txt").write_text("3\nstage 3: MemoryError: a test\n")
    r = subprocess.run(SICBO + ["demo", "--folder", str(folder), "--pace", "0.05"], cwd=REPO,
                       capture_output=True, text=True, timeout=ROUND_DEADLINE)
    assert r.returncode == 2, r.stdout[-3000:] + r.stderr
    err = r.stderr.strip()
    assert err.count("\n") == 0 and "Traceback" not in r.stdout + r.stderr
    assert err.startswith("sicbo demo: the board cannot play: OUT OF SERVICE after 3 failed "
                          "boots (last: stage 3: MemoryError: a test)"), err
    assert "sicbo diag --port %s status" % (folder / "tty") in err
    assert "sicbo demo --fresh" in err
    assert "=== round" not in r.stdout  # no dealer on a board that cannot play


def test_a_folder_a_virtual_board_runs_on_is_refused(tmp_path):
    from host_tools.vboard import VirtualBoard

    folder = str(tmp_path / "vb")
    with VirtualBoard(folder, heap=heaps.HEAP_64_EQUIVALENT):
        r = subprocess.run(SICBO + ["demo", "--folder", folder], cwd=REPO, capture_output=True,
                           text=True, timeout=60)
    assert r.returncode == 2, r
    assert r.stderr.strip() == (
        "sicbo demo: a virtual board already runs on %s (its control socket answers): stop it "
        "first (one virtual board per run folder)" % folder), r.stderr
