"""sicbo deploy cut by a power cut at exact points, on the virtual board with
the real mpremote CLI.

Each cut is placed without timing: the copy run is given one more exec at
the chosen point (after some files, in the middle of one; after the commit,
before the deploy's record) that writes /cut.here and then waits; the test
waits for that file, then cuts the power. What must hold after power returns:
no file on the board is ever cut short (each is the old release's or the
new one's, as the host computed it), a board cut before the commit is marked
as holding an interrupted deploy (/manifest.prev without /manifest.json: the
boot refuses it, device/faults.py), the next deploy completes and journals
it without losing a record, and a cut between the commit and the deploy's
record is journaled by the next deploy."""

import concurrent.futures
import glob
import hashlib
import json
import os
import shutil
import time

import pytest

from host_tools import DEVICE, REPO, heaps
from host_tools import deploy as dp
from host_tools.vboard import VirtualBoard
from sicbo import journal
from sicbo import records as R

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
SIGNAL = "cut.here"
# test entry (the whole app does not fit the heap these tests use; test_deploy.py)
MAIN = "print('sicbo: counting entry, round 1, state 0')\n"
BLOCK = "open('/%s', 'w').close()\nimport time\nwhile True:\n    time.sleep(0.05)\n" % SIGNAL


@pytest.fixture(scope="module")
def vb(tmp_path_factory):
    with VirtualBoard(str(tmp_path_factory.mktemp("vb-cuts")),
                      heap=heaps.HEAP_64_EQUIVALENT) as board:
        yield board


@pytest.fixture(scope="module")
def device(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("dev") / "device")
    shutil.copytree(DEVICE, d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write(MAIN)
    return d


class CutAt(dp.MpRemote):
    """mpremote, with BLOCK inserted into the copy run (the run that calls
    sd_prep) after the exec at the index where(execs) gives."""

    def __init__(self, port, where):
        super().__init__(port)
        self.where = where

    def run(self, *args):
        if "sd_prep(" in args[1]:
            execs = [i for i, a in enumerate(args) if a == "exec"]
            i = execs[self.where([args[j + 1] for j in execs])]
            args = args[:i + 2] + ("+", "exec", BLOCK) + args[i + 2:]
        return super().run(*args)


def mid_copy(codes):
    """The first exec after 3 whole files that ends inside a file."""
    done = 0
    for i, code in enumerate(codes):
        done += code.count("sd_fin(")
        if done >= 3 and code.rstrip().splitlines()[-1].startswith("sd_w("):
            return i
    raise AssertionError("no exec ends inside a file")


def after_commit(codes):
    return next(i for i, code in enumerate(codes) if "sd_commit(" in code)


def deploy_cut(vb, device, where):
    """A deploy of device, cut where the signal is written; returns its
    DeployError. The power is off on return, the signal removed."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        job = pool.submit(dp.deploy, vb.port, BOARD, TABLE, device_dir=device,
                          mpremote=CutAt(vb.port, where), reset=False)
        path = os.path.join(vb.fs, SIGNAL)
        end = time.monotonic() + 60
        while not os.path.exists(path) and not job.done():
            assert time.monotonic() < end, "the deploy never reached the cut"
            time.sleep(0.005)  # waiting for the board to reach the point
        assert not job.done(), job.result()
        vb.power_cut()
        with pytest.raises(dp.DeployError) as e:
            job.result(timeout=60)
    os.remove(path)
    return e.value


def deploy(vb, device, **kw):
    return dp.deploy(vb.port, BOARD, TABLE, device_dir=device, reset=False, settle=0, **kw)


def files_on(vb):
    out = {}
    for top, _dirs, names in os.walk(vb.fs):
        for name in names:
            path = os.path.join(top, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, vb.fs)] = hashlib.sha256(f.read()).hexdigest()
    return out


def manifest(vb, name=dp.MANIFEST):
    with open(os.path.join(vb.fs, name)) as f:
        return json.load(f)


def marked(vb):
    """The board holds an interrupted deploy: what the boot refuses."""
    return (os.path.exists(os.path.join(vb.fs, dp.MANIFEST_PREV))
            and not os.path.exists(os.path.join(vb.fs, dp.MANIFEST)))


def records(vb):
    out = []
    for path in sorted(glob.glob(os.path.join(vb.fs, "journal", "j*.log"))):
        with open(path, "rb") as f:
            out += [(r.seq, r.type, r.payload) for r in journal.records(f.read())]
    return out


def deploys(vb):
    """(kind, code hex, configuration id hex, copied) of every J_DEPLOY."""
    return [(p[R.P_DEPLOY_KIND], p[R.P_DEPLOY_CODE:R.P_DEPLOY_CODE + R.CODE_ID_LEN].hex(),
             p[R.P_DEPLOY_CONFIG:R.P_DEPLOY_CONFIG + R.CONFIG_ID_LEN].hex(),
             p[R.P_DEPLOY_COPIED])
            for _s, t, p in records(vb) if t == R.J_DEPLOY]


def config_id():
    board_text, table_text, _b, _t = dp.check_config(BOARD, TABLE)
    return dp.config_cache_id(board_text, table_text)


def assert_whole(on_board, *releases):
    """Every code file on the board is one release's, whole."""
    code = [p for p in on_board if p.endswith((".mpy", ".py"))]
    assert code
    for p in code:
        assert any(on_board[p] == m["files"].get(p) for m in releases), p


def change(device, mark):
    for name in sorted(os.listdir(os.path.join(device, "sicbo"))):
        if name.endswith(".py"):
            with open(os.path.join(device, "sicbo", name), "a") as f:
                f.write("\n_CUT_MARK = %d\n" % mark)


def test_cut_in_the_copy(vb, device):
    # the first deploy, cut: an empty manifest marks it
    e = deploy_cut(vb, device, mid_copy)
    assert "nothing is committed before the manifest" not in str(e)
    assert marked(vb) and manifest(vb, dp.MANIFEST_PREV) == {}
    on_board = files_on(vb)
    assert any(p.endswith(".part") for p in on_board)  # the file being written
    vb.power_on(timeout=0)
    lines = []
    r = deploy(vb, device, log=lines.append)
    a = manifest(vb)
    assert not marked(vb) and not os.path.exists(os.path.join(vb.fs, dp.MANIFEST_PREV))
    assert_whole(on_board, a)
    assert any(line.startswith("removed 1 partial file") for line in lines), lines
    assert not any(p.endswith(".part") for p in files_on(vb))
    assert r.copied and not r.current

    # a new release over it, cut after some files: a mix, marked
    before = records(vb)
    change(device, 1)
    e = deploy_cut(vb, device, mid_copy)
    assert "nothing is committed before the manifest" not in str(e)
    assert marked(vb) and manifest(vb, dp.MANIFEST_PREV) == a  # the release it replaces
    on_board = files_on(vb)
    vb.power_on(timeout=0)
    r = deploy(vb, device)
    b = manifest(vb)
    assert_whole(on_board, a, b)
    mixed = [p for p in a["files"] if p.endswith(".mpy") and a["files"][p] != b["files"][p]]
    new = [p for p in mixed if on_board[p] == b["files"][p]]
    assert new and len(new) < len(mixed)  # some files copied, some not: the mix
    # completed: the board is b, the deploy journaled, every record kept
    assert not marked(vb) and not os.path.exists(os.path.join(vb.fs, dp.MANIFEST_PREV))
    now = files_on(vb)
    assert {p: h for p, h in now.items() if p in b["files"]} == b["files"]
    assert not any(p.endswith(".part") for p in now)
    assert b["code_sha256"] == dp.code_hash(device)
    after = records(vb)
    assert after[:len(before)] == before
    assert deploys(vb)[-1][:3] == (R.CODE_FILES, b["code_sha256"][:16], config_id())
    assert r.journaled[-1] == (True, "deploy")


def test_cut_between_commit_and_record(vb, device):
    deploy(vb, device)  # up to date, whatever the test before left
    before = records(vb)
    known = deploys(vb)
    change(device, 2)
    e = deploy_cut(vb, device, after_commit)
    # the commit was heard: never "nothing is committed"
    assert "nothing is committed" not in str(e)
    assert dp.CUT_BEFORE_RECORD in str(e), str(e)
    c = manifest(vb)
    assert c["code_sha256"] == dp.code_hash(device) and not marked(vb)
    assert deploys(vb) == known  # not journaled
    vb.power_on(timeout=0)
    lines = []
    r = deploy(vb, device, log=lines.append)
    assert r.current and r.rejournaled and r.mpremote_runs == 1
    assert "the deploy journaled" in r.summary()
    assert any("does not name the code the board runs" in line for line in lines), lines
    got = deploys(vb)
    assert got[:len(known)] == known and len(got) == len(known) + 1
    assert got[-1] == (R.CODE_FILES, c["code_sha256"][:16], config_id(), 0)
    assert records(vb)[:len(before)] == before
    # journaled once: the next deploy finds it
    r = deploy(vb, device)
    assert r.current and not r.rejournaled and len(deploys(vb)) == len(got)
