"""sicbo deploy against the virtual board, with the real mpremote CLI."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from host_tools import DEVICE, REPO
from host_tools import deploy as dp
from host_tools.vboard import RTC_FILE, VirtualBoard

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")


@pytest.fixture(scope="module")
def vb(tmp_path_factory):
    # 110k: deploy's board-side code fits even half the ESP32-equivalent heap
    with VirtualBoard(str(tmp_path_factory.mktemp("vb-deploy")), heap="110k") as board:
        yield board


@pytest.fixture(scope="module")
def device(tmp_path_factory):
    """A private copy of device/ that the tests may change."""
    d = str(tmp_path_factory.mktemp("dev") / "device")
    shutil.copytree(DEVICE, d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return d


def board_files(vb):
    out = {}
    for top, _dirs, files in os.walk(vb.fs):
        for name in files:
            if name == RTC_FILE and top == vb.fs:
                continue  # the simulated RTC's state, not deployed content
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
    if kw.get("reset", True):
        # as with a real board, bytes sent while it resets are lost: wait for the reboot
        end = time.monotonic() + 10
        while vb.hard_resets == resets and time.monotonic() < end:
            time.sleep(0.01)
        assert vb.hard_resets > resets, "the board did not reset"
    return r


def test_deploy_from_empty(vb, device):
    r = run_deploy(vb, device)
    m = assert_consistent(vb)
    assert set(r.copied) == set(m["files"])
    assert "main.py" not in m["files"] or os.path.exists(os.path.join(vb.fs, "main.py"))
    assert all(p.endswith(".mpy") for p in m["files"]
               if p not in ("main.py", "boot.py", "board.json", "table.json"))
    assert m["firmware"] == __import__("sicbo").FIRMWARE_VERSION
    assert m["revision"] and m["mpy"] == "6.3"
    assert m["board"] == "virtual"
    assert open(os.path.join(vb.fs, "table.json")).read() == open(TABLE).read()
    assert r.mpremote_runs == 3
    # the compiled firmware imports on the board
    out = subprocess.run([MPREMOTE, "connect", vb.port, "exec",
                          "import sicbo.settle, sicbo; print(sicbo.FIRMWARE_VERSION, "
                          "sicbo.settle.__file__)"],
                         capture_output=True, text=True, timeout=30).stdout
    assert out.split() == [m["firmware"], "sicbo/settle.mpy"], out


def test_redeploy_without_change_copies_nothing(vb, device):
    before = vb.bytes_in
    r = run_deploy(vb, device)
    assert r.copied == [] and r.removed == []
    assert r.mpremote_runs == 2  # probe, reset
    assert vb.bytes_in - before < 20_000
    assert_consistent(vb)


def test_redeploy_after_changing_one_file_copies_only_it(vb, device):
    path = os.path.join(device, "sicbo", "dates.py")
    with open(path, "a") as f:
        f.write("\nDEPLOY_TEST_MARK = 1\n")
    r = run_deploy(vb, device)
    assert r.copied == ["sicbo/dates.mpy"]
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
            mark = "_sicbo_w('/sicbo/dates.mpy', 'wb', '"
            args = [a.replace(mark + a[a.find(mark) + len(mark)], mark + "A", 1)
                    if mark in a else a for a in args]
            return super().run(*args)

    with pytest.raises(dp.DeployError, match="hash does not verify .*sicbo/dates.mpy"):
        run_deploy(vb, device, mpremote=Corrupting(vb.port), reset=False)
    assert not os.path.exists(os.path.join(vb.fs, dp.MANIFEST))
    run_deploy(vb, device, reset=False)
    assert_consistent(vb)


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
    def __init__(self, info):
        super().__init__("/dev/null")
        self.info = info
        self.calls = []

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


def test_incompatible_mpy_version_is_refused_before_copying(device):
    fake = FakeBoard(probe_info(mpy=7 | 10 << 10))
    with pytest.raises(dp.DeployError, match="incompatible .mpy version"):
        dp.deploy("/dev/null", BOARD, TABLE, device_dir=device, mpremote=fake)
    assert len(fake.calls) == 1


def test_not_micropython_is_refused(device):
    fake = FakeBoard(probe_info(name="circuitpython"))
    with pytest.raises(dp.DeployError, match="not MicroPython"):
        dp.deploy("/dev/null", BOARD, TABLE, device_dir=device, mpremote=fake)
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
