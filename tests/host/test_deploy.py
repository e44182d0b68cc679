"""sicbo deploy against the virtual board, with the real mpremote CLI.

The device/ copy the tests deploy has a main.py of its own that appends one
byte to /starts.txt each time it runs and prints a running line as the app's
start-up does (round N: its Nth start): every start of the entry shows,
whether by a reset or by a no-change deploy's restart, and deploy reads it
from the serial port, without the whole app (which does not fit the 110k heap
these tests use)."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from host_tools import DEVICE, REPO, heaps
from host_tools import deploy as dp
from host_tools.vboard import RTC_FILE, SIM_DIR, VirtualBoard

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")
STARTS = "starts.txt"
COUNTING_MAIN = """\
# test entry: counts its starts, says so as the app's start-up line does
f = open('/starts.txt', 'a')
f.write('s')
f.close()
print('sicbo: counting entry, round %d, state 0' % len(open('/starts.txt').read()))
"""


@pytest.fixture(scope="module")
def vb(tmp_path_factory):
    # the 64-bit port standing in for the board's heap (its simulated machine
    # loaded first, as a board's C classes are there before the firmware)
    with VirtualBoard(str(tmp_path_factory.mktemp("vb-deploy")),
                      heap=heaps.HEAP_64_EQUIVALENT) as board:
        yield board


@pytest.fixture(scope="module")
def device(tmp_path_factory):
    """A private copy of device/ that the tests may change."""
    d = str(tmp_path_factory.mktemp("dev") / "device")
    shutil.copytree(DEVICE, d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write(COUNTING_MAIN)
    return d


def starts(vb):
    try:
        with open(os.path.join(vb.fs, STARTS)) as f:
            return len(f.read())
    except FileNotFoundError:
        return 0


def wait_starts(vb, n, timeout=60):
    end = time.monotonic() + timeout
    while starts(vb) < n and time.monotonic() < end:
        time.sleep(0.01)
    return starts(vb)


def board_files(vb):
    out = {}
    for top, dirs, files in os.walk(vb.fs):
        if top == vb.fs and "journal" in dirs:
            dirs.remove("journal")  # the board's own records (a deploy journals itself)
        for name in files:
            if name in (RTC_FILE, STARTS) and top == vb.fs:
                continue  # the simulated RTC's state, the test main.py's count
            path = os.path.join(top, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, vb.fs)] = hashlib.sha256(f.read()).hexdigest()
    return out


def manifest(vb):
    with open(os.path.join(vb.fs, dp.MANIFEST)) as f:
        return json.load(f)


def assert_consistent(vb):
    m = manifest(vb)
    files = board_files(vb)
    assert {k: v for k, v in files.items() if k != dp.MANIFEST} == m["files"]
    return m


def run_deploy(vb, device, **kw):
    resets = vb.hard_resets
    r = dp.deploy(vb.port, kw.pop("board", BOARD), kw.pop("table", TABLE), device_dir=device,
                  settle=0, **kw)
    if kw.get("reset", True) and not r.current:
        # as with a real board, bytes sent while it resets are lost: wait for the reboot
        end = time.monotonic() + 60
        while vb.hard_resets == resets and time.monotonic() < end:
            time.sleep(0.01)
        assert vb.hard_resets > resets, "the board did not reset"
    if r.current:
        assert vb.hard_resets == resets, "a board up to date was reset"
    return r


def test_deploy_from_empty(vb, device):
    r = run_deploy(vb, device)
    m = assert_consistent(vb)
    assert set(r.copied) == set(m["files"])
    assert "main.py" not in m["files"] or os.path.exists(os.path.join(vb.fs, "main.py"))
    assert all(p.endswith(".mpy") for p in m["files"]
               if p not in ("main.py", "boot.py", "board.json", "table.json", "config.cache"))
    assert m["firmware"] == __import__("sicbo").FIRMWARE_VERSION
    assert m["revision"] and m["mpy"] == "6.3"
    assert m["board"] == "virtual"
    assert m["kind"] == "deployed" and r.kind == "deployed"
    assert m["code_sha256"] == dp.code_hash(device) == r.code
    assert m["compiler"] == dp.mpy_cross_version_line()
    assert not any(p.startswith("remote/") for p in m["files"])  # host-side code stays home
    assert not os.path.exists(os.path.join(vb.fs, "remote"))
    assert r.summary().startswith("deployed code %s (firmware " % r.code)
    assert wait_starts(vb, 1) == 1  # the reset started main.py
    # what the board printed as it started, read from the serial port
    assert [(st.kind, st.table, st.round, st.state) for st in r.states] == [
        ("running", "counting entry", 1, 0)]
    assert r.board_lines("P") == ["board reset: the table runs: counting entry, round 1, idle"]
    assert open(os.path.join(vb.fs, "table.json")).read() == open(TABLE).read()
    assert r.mpremote_runs == 2  # the probe, the copy; the reset is typed on the console
    # the compiled firmware imports on the board
    out = subprocess.run([MPREMOTE, "connect", vb.port, "exec",
                          "import sicbo.settle, sicbo; print(sicbo.FIRMWARE_VERSION, "
                          "sicbo.settle.__file__)"],
                         capture_output=True, text=True, timeout=30).stdout
    assert out.split() == [m["firmware"], "sicbo/settle.mpy"], out


def board_year(vb):
    out = subprocess.run([MPREMOTE, "connect", vb.port, "exec",
                          "import machine; print('YEAR', machine.RTC().datetime()[0])"],
                         capture_output=True, text=True, timeout=30).stdout
    return int(out.split("YEAR")[1].split()[0])


def test_redeploy_without_change_copies_nothing_and_does_not_reset(vb, device):
    subprocess.run([MPREMOTE, "connect", vb.port, "exec",
                    "import machine; machine.RTC().datetime((2001, 1, 1, 0, 0, 0, 0, 0))"],
                   check=True, capture_output=True, timeout=30)
    assert board_year(vb) == 2001
    before = (vb.bytes_in, vb.hard_resets, starts(vb))
    r = run_deploy(vb, device)
    assert r.current and r.copied == [] and r.removed == []
    assert r.mpremote_runs == 1  # the probe; the clock and the restart ride on it
    assert vb.hard_resets == before[1]  # no reset
    assert vb.bytes_in - before[0] < 10_000
    assert r.summary().startswith("board up to date: deployed code %s (firmware " % r.code)
    assert "nothing copied, no reset, app restarted" in r.summary()
    # the probe's Ctrl-C stopped the app: it was started again, once, without a reset
    assert wait_starts(vb, before[2] + 1) == before[2] + 1
    assert [(st.kind, st.round) for st in r.states] == [("running", before[2] + 1)]
    assert r.board_lines() == ["board: the table runs: counting entry, round %d, idle"
                               % (before[2] + 1)]
    time.sleep(0.2)
    assert starts(vb) == before[2] + 1 and vb.hard_resets == before[1]
    assert board_year(vb) == time.gmtime().tm_year  # the clock was set all the same
    # --no-reset: not even that
    r = run_deploy(vb, device, reset=False)
    assert r.current and not r.reset
    time.sleep(0.2)
    assert starts(vb) == before[2] + 1
    assert_consistent(vb)


def test_cli_redeploy_without_change(vb, device):
    """Through `sicbo deploy` as a technician runs it: says so, no reset."""
    run_deploy(vb, device)  # whatever an earlier test left: up to date now
    before = (vb.hard_resets, starts(vb))
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "host_tools", "deploy", "--port", vb.port,
                        "--board", BOARD, "--table", TABLE, "--device", device],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    seconds = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("board up to date: deployed code %s" % dp.code_hash(device)), last
    assert "nothing copied, no reset" in last
    assert vb.hard_resets == before[0]
    assert wait_starts(vb, before[1] + 1) == before[1] + 1
    assert seconds < 30  # a hang, not a figure: the 0.6 s goal is bench/bench_deploy.py's
    assert_consistent(vb)


def test_changed_configuration_is_copied_and_resets(vb, device, tmp_path):
    table = tmp_path / "table.json"
    table.write_text(open(TABLE).read().replace("{", "{ ", 1))  # same table, other bytes
    r = run_deploy(vb, device, table=str(table))  # asserts the reset
    # the configuration cache is the files' (keyed by their bytes): it follows
    assert r.copied == ["config.cache", "table.json"] and not r.current
    r = run_deploy(vb, device)
    assert r.copied == ["config.cache", "table.json"]
    assert_consistent(vb)


def test_redeploy_after_changing_one_file_copies_only_it(vb, device):
    path = os.path.join(device, "sicbo", "dates.py")
    with open(path, "a") as f:
        f.write("\nDEPLOY_TEST_MARK = 1\n")
    resets = vb.hard_resets
    r = run_deploy(vb, device)
    assert r.copied == ["sicbo/dates.mpy"] and not r.current
    assert vb.hard_resets > resets  # a deploy that changed files resets
    assert r.mpremote_runs == 2
    assert_consistent(vb)


def test_removed_file_and_shadowing_py_are_removed(vb, device):
    extra = os.path.join(device, "sicbo", "extra_mod.py")
    with open(extra, "w") as f:
        f.write("X = 1\n")
    r = run_deploy(vb, device, reset=False)
    assert r.copied == ["sicbo/extra_mod.mpy"]
    os.remove(extra)
    # a stray source beside a compiled module would shadow it
    with open(os.path.join(vb.fs, "sicbo", "areas.py"), "w") as f:
        f.write("raise ImportError('stale')\n")
    r = run_deploy(vb, device, reset=False)
    assert sorted(r.removed) == ["sicbo/areas.py", "sicbo/extra_mod.mpy"]
    assert r.copied == []
    assert not os.path.exists(os.path.join(vb.fs, "sicbo", "extra_mod.mpy"))
    assert not os.path.exists(os.path.join(vb.fs, "sicbo", "areas.py"))
    assert_consistent(vb)


def test_interrupted_deploy_is_repaired(vb, device, tmp_path):
    # change many files so that the copy takes a while, and cut the power in the middle
    for name in sorted(os.listdir(os.path.join(device, "sicbo"))):
        if name.endswith(".py"):
            with open(os.path.join(device, "sicbo", name), "a") as f:
                f.write("\n_INTERRUPT_MARK = 2\n")
    start = {}

    def cut_later(stage):
        if stage != "copying":
            return

        def watch():
            t0 = time.monotonic()
            while vb.bytes_in - start["bytes"] < 15_000 and time.monotonic() - t0 < 20:
                time.sleep(0.005)
            vb.power_cut()
        start["bytes"] = vb.bytes_in
        start["thread"] = threading.Thread(target=watch)
        start["thread"].start()

    with pytest.raises(dp.DeployError):
        run_deploy(vb, device, hook=cut_later, reset=False)
    start["thread"].join()
    assert not os.path.exists(os.path.join(vb.fs, dp.MANIFEST))  # never a stale manifest
    assert os.path.exists(os.path.join(vb.fs, dp.MANIFEST_PREV))
    vb.power_on(timeout=0)
    r = run_deploy(vb, device, reset=False)
    assert r.copied  # what the cut left undone
    assert not os.path.exists(os.path.join(vb.fs, dp.MANIFEST_PREV))
    assert_consistent(vb)


def _with_main(device, text):
    with open(os.path.join(device, "main.py"), "w") as f:
        f.write(text)


def test_what_the_board_prints_after_the_reset_is_reported(vb, device):
    """Deploy reports the board's own start-up lines, whatever they say: a
    fault (after which a board resets itself) then out of service; and says
    so plainly when the board prints nothing it knows."""
    try:
        _with_main(device, "print('MicroPython noise')\n"
                           "print('sicbo: FAULT in stage 3: MemoryError: memory allocation "
                           "failed')\n"
                           "print('sicbo: OUT OF SERVICE after 3 failed boots (last: stage 3: "
                           "MemoryError). Outputs are off.')\n")
        r = run_deploy(vb, device)
        assert [st.kind for st in r.states] == ["fault", "out of service"]
        lines = r.board_lines("P")
        assert lines[0] == ("board reset: FAULT in stage 3 (hardware): MemoryError: memory "
                            "allocation failed; the board resets")
        assert lines[1].startswith("board reset: OUT OF SERVICE after 3 failed boots")
        assert lines[2].startswith("  do: sicbo diag --port P status")
        # an entry that ends without a word: the board's REPL comes up
        _with_main(device, "print('nothing to say')\n")
        r = run_deploy(vb, device)
        assert [st.kind for st in r.states] == ["repl"]
        assert r.board_lines("P") == [
            "board reset: the board started to its REPL with no start-up line: nothing runs "
            "(is the firmware deployed?)",
            "  do: sicbo deploy --port P --board FILE --table FILE"]
        # one that runs on without a word: nothing is known, and that is said
        _with_main(device, "import time\nprint('busy')\nwhile True:\n    time.sleep(0.05)\n")
        t0 = time.monotonic()
        r = run_deploy(vb, device, watch=1.0)
        assert time.monotonic() - t0 >= 1.0
        assert r.states == []
        assert r.board_lines() == ["board reset: the board printed no start-up line within "
                                   "1 s (nothing known about its state; sicbo console shows "
                                   "what it prints)"]
    finally:
        _with_main(device, COUNTING_MAIN)
    run_deploy(vb, device)
    assert_consistent(vb)


def test_deploy_sets_the_clock_in_utc(vb, device):
    import datetime

    run_deploy(vb, device)  # whatever an earlier test left: up to date now
    # A computer eight hours east of UTC (POSIX TZ: no time zone files needed)
    env = dict(os.environ, TZ="MAC-8")
    r = subprocess.run([sys.executable, "-m", "host_tools", "deploy", "--port", vb.port,
                        "--board", BOARD, "--table", TABLE, "--device", device, "-q"],
                       cwd=REPO, capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([MPREMOTE, "connect", vb.port, "exec",
                          "import machine; print('RTC', machine.RTC().datetime())"],
                         capture_output=True, text=True, timeout=30).stdout
    y, mo, d, _wd, h, mi, sec, _us = eval(out.split("RTC", 1)[1].strip())
    board = datetime.datetime(y, mo, d, h, mi, sec, tzinfo=datetime.timezone.utc)
    now = datetime.datetime.now(datetime.timezone.utc)
    assert abs((now - board).total_seconds()) < 60, (board, now)


def test_refused_configuration_copies_nothing(vb, device, tmp_path):
    before = (vb.bytes_in, board_files(vb))
    bad_table = tmp_path / "table.json"
    obj = json.load(open(TABLE))
    obj["shaker"] = "robot"
    bad_table.write_text(json.dumps(obj))
    with pytest.raises(dp.DeployError, match="table file .* refused: shaker"):
        run_deploy(vb, device, table=str(bad_table))
    bad_board = tmp_path / "board.json"
    obj = json.load(open(BOARD))
    obj["outputs"]["bell"] = 6  # a flash pin
    bad_board.write_text(json.dumps(obj))
    with pytest.raises(dp.DeployError, match="board file .* refused: outputs.bell"):
        run_deploy(vb, device, board=str(bad_board))
    assert (vb.bytes_in, board_files(vb)) == before


def test_hash_that_does_not_verify_is_reported(vb, device):
    with open(os.path.join(device, "sicbo", "dates.py"), "a") as f:
        f.write("\nVERIFY_MARK = 3\n")

    class Corrupting(dp.MpRemote):
        def run(self, *args):
            # alter the bytes sent for dates.mpy after its hash went into the manifest
            mark = "sd_w('/sicbo/dates.mpy', 'wb', '"
            args = [a.replace(mark + a[a.find(mark) + len(mark)], mark + "A", 1)
                    if mark in a else a for a in args]
            return super().run(*args)

    with pytest.raises(dp.DeployError, match="hash does not verify .*sicbo/dates.mpy"):
        run_deploy(vb, device, mpremote=Corrupting(vb.port), reset=False)
    assert not os.path.exists(os.path.join(vb.fs, dp.MANIFEST))
    run_deploy(vb, device, reset=False)
    assert_consistent(vb)


# -- frozen firmware ----------------------------------------------------------

def frozen_image(folder, code):
    """A stand-in for a frozen firmware image on the virtual board: sim/ (which
    it serves as frozen modules anyway) plus the generated module frozen_id."""
    os.makedirs(folder)
    for name in os.listdir(SIM_DIR):
        if name.endswith(".py"):
            shutil.copy(os.path.join(SIM_DIR, name), os.path.join(folder, name))
    with open(os.path.join(folder, "frozen_id.py"), "w") as f:
        f.write('CODE_SHA256 = "%s"\n' % code)
    return folder


def frozen_board(folder, image):
    vb = VirtualBoard(folder, heap=heaps.HEAP_64_EQUIVALENT, frozen=image)
    vb.start()
    if vb.frozen_in:  # an interpreter with sim/ frozen in serves no frozen folder
        vb.stop()
        pytest.skip("this interpreter has sim/ frozen in: no stand-in frozen image")
    return vb


def test_frozen_firmware_gets_the_configuration_only(tmp_path, device):
    folder = str(tmp_path / "vbf")
    code = dp.code_hash(device)
    compiled = sorted(rel for rel, _, c in dp.plan_sources(device) if c)
    # deployed code, before the image
    with VirtualBoard(folder, heap=heaps.HEAP_64_EQUIVALENT) as vb:
        r = run_deploy(vb, device)
        assert r.kind == "deployed" and r.code == code
    # the frozen image built from the same tree: the code files would shadow it
    vb = frozen_board(folder, frozen_image(str(tmp_path / "image"), code))
    try:
        lines = []
        r = run_deploy(vb, device, log=lines.append)
        assert (r.kind, r.code) == ("frozen", code)
        assert any(line.endswith("frozen firmware " + code) for line in lines), lines
        assert r.copied == [] and sorted(r.removed) == compiled
        assert r.summary().startswith("frozen firmware %s (firmware %s"
                                      % (code, __import__("sicbo").FIRMWARE_VERSION))
        m = assert_consistent(vb)
        assert sorted(m["files"]) == ["board.json", "config.cache", "main.py", "table.json"]
        assert (m["kind"], m["code_sha256"], m["compiler"]) == ("frozen", code, None)
        assert sorted(os.listdir(vb.fs)) == sorted(
            ["board.json", "config.cache", "main.py", "table.json", dp.MANIFEST, STARTS,
             "journal"]  # the first deploy's records (the journal stays: it is evidence)
            + [n for n in os.listdir(vb.fs) if n.startswith(".")])  # no code, no other folder
        # again: nothing to do
        r = run_deploy(vb, device)
        assert r.current and r.mpremote_runs == 1
        assert r.summary().startswith("board up to date: frozen firmware " + code)
        # a code file on the filesystem would shadow the frozen module: removed
        with open(os.path.join(vb.fs, "faults.mpy"), "wb") as f:
            f.write(b"M")
        r = run_deploy(vb, device, reset=False)
        assert r.removed == ["faults.mpy"] and r.copied == []
        # main.py (the entry, not frozen code) is copied when it differs
        os.remove(os.path.join(vb.fs, "main.py"))
        r = run_deploy(vb, device, reset=False)
        assert r.copied == ["main.py"]
        assert_consistent(vb)
    finally:
        vb.stop()
    # an image of other code: the board runs it, and deploy says so
    other = "ab" * 32
    vb = frozen_board(folder, frozen_image(str(tmp_path / "image2"), other))
    try:
        lines = []
        r = run_deploy(vb, device, log=lines.append)
        assert (r.kind, r.code) == ("frozen", other) and not r.current
        assert any("not this tree's (%s)" % code in line for line in lines), lines
        m = assert_consistent(vb)
        assert m["code_sha256"] == other and m["firmware"] is None
    finally:
        vb.stop()
    # stock MicroPython again: the code is deployed again
    with VirtualBoard(folder, heap=heaps.HEAP_64_EQUIVALENT) as vb:
        r = run_deploy(vb, device)
        assert r.kind == "deployed" and sorted(r.copied) == compiled
        assert assert_consistent(vb)["kind"] == "deployed"


# -- the code hash and the board-side code ------------------------------------

def test_code_hash_definition(tmp_path):
    d = tmp_path / "dev"
    files = {"a.py": b"A = 1\n", "pkg/__init__.py": b"", "pkg/b.py": b"B = 2\n",
             "pkg/remote/c.py": b"C = 3\n",  # only device/remote/ is the host's
             "main.py": b"import a\n", "boot.py": b"\n", "remote/agent.py": b"x = 1\n",
             "pkg/__pycache__/b.py": b"no\n", ".hidden/h.py": b"no\n", "notes.txt": b"no\n"}
    for rel, data in files.items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_bytes(data)
    code = ["a.py", "boot.py", "main.py", "pkg/__init__.py", "pkg/b.py", "pkg/remote/c.py"]
    assert [rel for rel, _ in dp.code_files(str(d))] == code
    h = hashlib.sha256()
    for rel in code:
        h.update(b"%s\n%d\n" % (rel.encode(), len(files[rel])) + files[rel])
    assert dp.code_hash(str(d)) == h.hexdigest()
    assert [r for r, _, _ in dp.plan_sources(str(d))] == [
        "a.mpy", "boot.py", "main.py", "pkg/__init__.mpy", "pkg/b.mpy", "pkg/remote/c.mpy"]
    # the host's code and what is not installed do not count
    for rel in ("remote/agent.py", "pkg/__pycache__/b.py", ".hidden/h.py", "notes.txt"):
        (d / rel).write_bytes(b"changed\n")
    assert dp.code_hash(str(d)) == h.hexdigest()
    # a module's bytes (main.py's too) or its path do
    for rel in ("pkg/b.py", "main.py"):
        (d / rel).write_bytes(b"B = 3\n")
        assert dp.code_hash(str(d)) != h.hexdigest()
        (d / rel).write_bytes(files[rel])
    assert dp.code_hash(str(d)) == h.hexdigest()
    (d / "pkg" / "b.py").rename(d / "pkg" / "b2.py")
    assert dp.code_hash(str(d)) != h.hexdigest()


def test_board_side_code_comes_from_the_agent_file(tmp_path):
    with open(dp.AGENT) as f:
        agent = f.read()
    codes = [dp.probe_code(["sicbo/a.mpy", "main.py"], {"code": "c", "compiler": "m",
                                                       "files": {"main.py": "h"}}),
             dp.prep_code(["sicbo/a.mpy"], ["x.mpy"]),
             dp.commit_code('{"files": {}}')]
    for i, code in enumerate(codes):
        assert '"""' not in code and "#" not in code  # no docstrings, no comments sent
        for line in code.splitlines():
            if line.startswith("def "):
                assert line in agent  # every function sent is the agent's own
        src = tmp_path / ("step%d.py" % i)
        src.write_text(code)
        r = subprocess.run([dp.mpy_cross_exe(), "-o", str(tmp_path / "x.mpy"), str(src)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    assert "def sd_commit" not in codes[0] and "def sd_probe" not in codes[2]
    with pytest.raises(ValueError, match="sd_nothing"):
        dp.agent_code("sd_nothing")


# -- decisions, without a board ---------------------------------------------

def test_mpy_version_decisions():
    assert dp.mpy_version_of(2822) == (6, 3, "x64")
    assert dp.mpy_version_of(6 | 3 << 8 | 10 << 10) == (6, 3, "xtensawin")
    assert dp.compiler_args(6 | 3 << 8, "6.3") == []
    assert dp.compiler_args(6 | 2 << 8, "6.3") == ["-b", "6.2"]
    assert dp.compiler_args(5, "6.3") == ["-b", "5"]
    with pytest.raises(dp.DeployError, match="incompatible .mpy version.*v7"):
        dp.compiler_args(7, "6.3")
    with pytest.raises(dp.DeployError, match="does not report"):
        dp.compiler_args(None, "6.3")
    assert dp.mpy_cross_default_version() == "6.3"


class FakeBoard(dp.MpRemote):
    """A board that answers the probe; its port a name of the test's own
    (the port's lock is taken by that name: a shared one such as /dev/null
    was busy whenever another test process held it)."""

    def __init__(self, info, port):
        super().__init__(port)
        self.info = info
        self.calls = []

    def check_port(self):
        pass

    def run(self, *args):
        self.calls.append(args)
        if args[0] == "exec" and "SICBO-PROBE" in args[1]:
            return "SICBO-PROBE %r\nSICBO-END\n" % (self.info,)
        raise AssertionError("nothing may be copied: %r" % (args[:3],))


def probe_info(**kw):
    info = {"name": "micropython", "version": (1, 29, 0), "mpy": 6 | 3 << 8 | 10 << 10,
            "platform": "esp32", "machine": "ESP32", "manifest": None, "manifest_name": None}
    info.update(kw)
    return info


def test_incompatible_mpy_version_is_refused_before_copying(device, tmp_path):
    port = str(tmp_path / "tty")
    fake = FakeBoard(probe_info(mpy=7 | 10 << 10), port)
    with pytest.raises(dp.DeployError, match="incompatible .mpy version"):
        dp.deploy(port, BOARD, TABLE, device_dir=device, mpremote=fake)
    assert len(fake.calls) == 1


def test_not_micropython_is_refused(device, tmp_path):
    port = str(tmp_path / "tty")
    fake = FakeBoard(probe_info(name="circuitpython"), port)
    with pytest.raises(dp.DeployError, match="not MicroPython"):
        dp.deploy(port, BOARD, TABLE, device_dir=device, mpremote=fake)
    e = dp.MpRemote("/dev/x").error("", "b'\\r\\n$ '\nmpremote: could not enter raw repl\n")
    assert "does not answer as MicroPython" in str(e)
    e = dp.MpRemote("/dev/x").error("", "mpremote: failed to access /dev/x\n")
    assert "nothing at the port" in str(e)


def test_cli_nothing_at_the_port(tmp_path):
    r = subprocess.run([sys.executable, "-m", "host_tools", "deploy", "--port",
                        str(tmp_path / "ttyNONE"), "--board", BOARD, "--table", TABLE],
                       cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0
    assert "nothing at the port" in r.stderr


def test_the_cache_deploy_writes_is_one_the_board_accepts(tmp_path):
    # deploy keys the configuration cache from the files' texts; the board
    # keys it with tablefiles.config_id of the files as written, and names it
    # tablefiles.CACHE_NAME: the same key and name, or the board parses again.
    import tablefiles

    from sicbo import cache

    board_text, table_text, board, table = dp.check_config(BOARD, TABLE)
    (tmp_path / dp.BOARD_FILE).write_bytes(board_text.encode("utf-8"))
    (tmp_path / dp.TABLE_FILE).write_bytes(table_text.encode("utf-8"))
    (tmp_path / dp.CACHE_FILE).write_bytes(
        dp.config_cache(board_text, table_text, board, table).encode("utf-8"))
    assert dp.CACHE_FILE == tablefiles.CACHE_NAME
    key = tablefiles.config_id(str(tmp_path / dp.BOARD_FILE), str(tmp_path / dp.TABLE_FILE))
    got = cache.load(str(tmp_path / dp.CACHE_FILE), key)
    assert got is not None and got[1].name == table.name and got[0].name == board.name


def test_deploy_writes_where_the_board_reads():
    # one set of paths: deploy's (host) and the firmware's (device/faults.py)
    import faults

    assert "/" + dp.BOARD_FILE == faults.BOARD_FILE
    assert "/" + dp.TABLE_FILE == faults.TABLE_FILE
    assert dp.JOURNAL_DIR == faults.JOURNAL_DIR
