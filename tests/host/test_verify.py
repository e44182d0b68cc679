"""sicbo verify against the virtual board, through the real mpremote: the
board's keyed hash of its code (device/remote/verify_agent.py) against the
approved release computed on the host. A board running the release matches;
a changed, a missing and an extra code file are each named; an answer
recorded for one seed fails another; the running partition of a frozen
image (sim/esp32.py on the virtual board) is checked against the image file,
a complete firmware.bin or an application-only one, and a changed image is
named. The check is journaled on the board (J_VERIFY)."""

import hashlib
import json
import os
import shutil
import struct
import time

import pytest

from host_tools import DEVICE, REPO, heaps
from host_tools import deploy as dp
from host_tools.cli import build_parser, main
from host_tools.commands import journal as jcmd
from host_tools.commands import verify as vf
from host_tools.vboard import SIM_DIR, VirtualBoard
from sicbo import records as R

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
SEED_A = "a1" * 32
SEED_B = "b2" * 32
# A main.py that only counts its starts: deploy and verify need no table here
# (the whole app does not fit the 110k heap these tests use).
COUNTING_MAIN = "f = open('/starts.txt', 'a')\nf.write('s')\nf.close()\n"


@pytest.fixture(scope="module")
def device(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("dev") / "device")
    shutil.copytree(DEVICE, d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    with open(os.path.join(d, "main.py"), "w") as f:
        f.write(COUNTING_MAIN)
    return d


@pytest.fixture(scope="module")
def vb(tmp_path_factory, device):
    with VirtualBoard(str(tmp_path_factory.mktemp("vb-verify")),
                      heap=heaps.HEAP_64_EQUIVALENT) as board:
        dp.deploy(board.port, BOARD, TABLE, device_dir=device, settle=0)
        _settled(board)
        yield board


def _settled(board, resets=None):
    # After a reset the board loses what it is sent until it has booted.
    end = time.monotonic() + 10
    while board.hard_resets == (resets or 0) and time.monotonic() < end:
        time.sleep(0.01)
    board.wait_ready(10)


def verify(vb, device, capsys, *extra, mpremote=None):
    """sicbo verify --json: (exit status, result)."""
    argv = ["verify", "--port", vb.port, "--device", device, "--json", "--no-restart", *extra]
    if mpremote is None:
        code = main(argv)
    else:
        args = build_parser().parse_args(argv)
        code = vf.run(args, mpremote=mpremote)
    out, err = capsys.readouterr()
    if code == 2:
        return code, err
    return code, json.loads(out)


def statuses(result):
    return {f["path"]: f["status"] for f in result["files"]}


def journal_of(vb):
    segs = jcmd.segments([os.path.join(vb.fs, "journal")])
    return jcmd.Reading(segs, None)


def last_verify(vb):
    rd = journal_of(vb)
    recs = [rec for _n, rec, code in rd.records if rec.type == R.J_VERIFY and code == 0]
    return jcmd.record_dict("", recs[-1], 0) if recs else None


def test_a_board_running_the_approved_release_matches_and_journals_it(vb, device, capsys):
    code, res = verify(vb, device, capsys, "--seed", SEED_A, "--by", "inspector 7")
    assert code == 0 and res["match"], res
    release = [rel for rel, _local, _c in dp.plan_sources(device)]
    assert sorted(statuses(res)) == sorted(release)  # every code file, nothing more
    assert set(statuses(res).values()) == {"match"}
    assert res["answer"]["consistent"] and res["answer"]["board"] == res["answer"]["expected"]
    assert res["journaled"] == ["verify"]
    rec = last_verify(vb)
    assert rec["kind"] == "code files" and rec["items"] == len(release)
    assert rec["seed"] == SEED_A[:2 * R.SEED_LEN] and rec["by"] == "inspector 7"
    assert rec["answer"] == res["answer"]["board"][:2 * R.ANSWER_LEN]
    # the text output says so too
    assert main(["verify", "--port", vb.port, "--device", device, "--no-restart"]) == 0
    out = capsys.readouterr().out
    assert "MATCH: the board runs the approved release" in out, out
    assert "files: %d of %d match" % (len(release), len(release)) in out


def test_a_changed_a_missing_and_an_extra_code_file_are_named(vb, device, capsys):
    changed = os.path.join(vb.fs, "sicbo", "dates.mpy")
    with open(changed, "rb") as f:
        good = f.read()
    missing = os.path.join(vb.fs, "sicbo", "paytable.mpy")
    with open(missing, "rb") as f:
        kept = f.read()
    try:
        with open(changed, "wb") as f:
            f.write(good[:-1] + bytes((good[-1] ^ 1,)))  # one bit of one file
        code, res = verify(vb, device, capsys)
        assert code == 1 and not res["match"]
        assert {p: s for p, s in statuses(res).items() if s != "match"} == {
            "sicbo/dates.mpy": "differs"}
        assert not res["replayed"] and res["answer"]["consistent"]
        os.remove(missing)
        with open(os.path.join(vb.fs, "boot.py"), "w") as f:
            f.write("print('not the release')\n")
        assert main(["verify", "--port", vb.port, "--device", device, "--no-restart"]) == 1
        out = capsys.readouterr().out
        assert "DIFFERS  sicbo/dates.mpy" in out, out
        assert "MISSING  sicbo/paytable.mpy (in the release, not on the board)" in out
        assert "EXTRA    boot.py (on the board, not in the release)" in out
        assert "MISMATCH: boot.py, sicbo/dates.mpy, sicbo/paytable.mpy" in out
    finally:
        with open(changed, "wb") as f:
            f.write(good)
        with open(missing, "wb") as f:
            f.write(kept)
        if os.path.exists(os.path.join(vb.fs, "boot.py")):
            os.remove(os.path.join(vb.fs, "boot.py"))
    assert verify(vb, device, capsys)[0] == 0  # the release again


class Recorder(dp.MpRemote):
    def __init__(self, port):
        super().__init__(port)
        self.outputs = []

    def run(self, *args):
        out = super().run(*args)
        self.outputs.append(out)
        return out


class Replayer(dp.MpRemote):
    """A board that answers with a recorded answer, whatever it is asked."""

    def __init__(self, port, recorded):
        super().__init__(port)
        self.recorded = recorded

    def run(self, *args):
        return self.recorded


def test_a_recorded_answer_fails_a_new_seed(vb, device, capsys):
    rec = Recorder(vb.port)
    code, res = verify(vb, device, capsys, "--seed", SEED_A, mpremote=rec)
    assert code == 0 and res["match"]
    recorded = rec.outputs[-1]
    # The recorded answer, given to a new seed: every file differs.
    code, res = verify(vb, device, capsys, "--seed", SEED_B,
                       mpremote=Replayer(vb.port, recorded))
    assert code == 1 and not res["match"] and res["replayed"], res
    assert set(statuses(res).values()) == {"differs"}
    assert res["answer"]["board"] != res["answer"]["expected"]
    # (to its own seed it was right: the seed alone makes it useless)
    code, res = verify(vb, device, capsys, "--seed", SEED_A,
                       mpremote=Replayer(vb.port, recorded))
    assert code == 0 and res["match"]


def test_refusals_are_one_line(vb, device, capsys):
    for seed in ("xyz", "", "00" * 65):
        assert main(["verify", "--port", vb.port, "--seed", seed]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sicbo verify: --seed") and err.count("\n") == 1, err
    assert main(["verify", "--port", vb.port, "--firmware", "/nonexistent.bin"]) == 2
    assert "no such firmware image" in capsys.readouterr().err


def test_the_hmac_is_rfc_2104(vb, device, capsys):
    # The board's pads by hand (no hmac module on MicroPython) agree with
    # CPython's hmac: one file's answer recomputed here from its bytes.
    code, res = verify(vb, device, capsys, "--seed", SEED_A, mpremote=Recorder(vb.port))
    with open(os.path.join(vb.fs, "main.py"), "rb") as f:
        data = f.read()
    want = vf.mac_file(bytes.fromhex(SEED_A), "main.py", data)
    import hmac

    assert want == hmac.new(bytes.fromhex(SEED_A), b"file\nmain.py\n%d\n" % len(data) + data,
                            hashlib.sha256).hexdigest()
    assert code == 0 and statuses(res)["main.py"] == "match"


# ---- the running partition ------------------------------------------------------------


def esp_app_image(payload, chip=0, digest=True):
    """A small ESP application image (esptool's layout): the 24-byte header
    (magic 0xE9, 2 segments, the extended header with its chip id and the
    hash-appended flag), each segment (address, length, data), the checksum
    at the end of the padding to 16 bytes, then the SHA-256 of it all."""
    segs = [payload[:len(payload) // 2], payload[len(payload) // 2:]]
    head = bytearray(24)
    head[0] = 0xE9
    head[1] = len(segs)
    head[2:4] = b"\x02\x20"
    head[4:8] = struct.pack("<I", 0x40080000)
    head[12:14] = struct.pack("<H", chip)
    head[23] = 1 if digest else 0
    body = bytes(head)
    check = 0xEF
    for i, s in enumerate(segs):
        body += struct.pack("<II", 0x3F400020 + 0x10000 * i, len(s)) + s
        for b in s:
            check ^= b
    body += b"\x00" * (15 - len(body) % 16) + bytes((check,))
    if digest:
        body += hashlib.sha256(body).digest()
    return body


def complete_firmware(app):
    """bootloader (an ESP32 image header) + partition table at 0x8000 + the
    application at 0x10000, as a firmware.bin flashed at 0x1000."""
    boot = bytearray(esp_app_image(b"\x00" * 64, digest=False))
    data = bytearray(b"\xff" * (0x10000 - 0x1000))
    data[:len(boot)] = boot
    data[0x7000:0x7002] = b"\xaa\x50"
    return bytes(data) + app


def frozen_image(folder, code):
    os.makedirs(folder)
    for name in os.listdir(SIM_DIR):
        if name.endswith(".py"):
            shutil.copy(os.path.join(SIM_DIR, name), os.path.join(folder, name))
    with open(os.path.join(folder, "frozen_id.py"), "w") as f:
        f.write('CODE_SHA256 = "%s"\n' % code)
    return folder


def test_the_running_partition_of_a_frozen_image(tmp_path, device, capsys):
    app = esp_app_image(os.urandom(30000))
    flashed = tmp_path / "partition.bin"
    # The partition as a board holds it: the image, then bytes an earlier
    # firmware left (write-flash erases only the sectors it writes).
    flashed.write_bytes(app + os.urandom(9000))
    (tmp_path / "app.bin").write_bytes(app)
    (tmp_path / "firmware.bin").write_bytes(complete_firmware(app))
    other = bytearray(app)
    other[100] ^= 0xFF  # one byte of a segment
    (tmp_path / "other.bin").write_bytes(bytes(other))
    image = frozen_image(str(tmp_path / "image"), dp.code_hash(device))
    with VirtualBoard(str(tmp_path / "vbf"), heap=heaps.HEAP_64_EQUIVALENT, frozen=image,
                      partition=str(flashed)) as board:
        if board.frozen_in:
            pytest.skip("this interpreter has sim/ frozen in: no stand-in frozen image")
        r = dp.deploy(board.port, BOARD, TABLE, device_dir=device, settle=0)
        assert r.kind == "frozen"
        _settled(board)
        for good in ("app.bin", "firmware.bin"):
            code, res = verify(board, device, capsys, "--firmware", str(tmp_path / good))
            assert code == 0 and res["match"], (good, res)
            assert res["partition"]["status"] == "match"
            assert res["partition"]["bytes"] == len(app)  # the image, not what follows it
            assert statuses(res) == {"main.py": "match"}  # the entry: the rest is frozen
            assert res["board"]["frozen"] == dp.code_hash(device)
        code, res = verify(board, device, capsys, "--firmware", str(tmp_path / "other.bin"))
        assert code == 1 and res["partition"]["status"] == "differs"
        assert main(["verify", "--port", board.port, "--device", device, "--no-restart",
                     "--firmware", str(tmp_path / "other.bin")]) == 1
        assert "MISMATCH: the running partition" in capsys.readouterr().out
        code, err = verify(board, device, capsys)
        assert code == 2 and "runs frozen firmware" in err and "--firmware" in err


def test_image_length_of_an_esp_application():
    app = esp_app_image(b"abc" * 1000)
    assert vf.image_len(app + b"\xff" * 5000, len(app) + 5000) == len(app)
    plain = esp_app_image(b"abc" * 1000, digest=False)
    assert vf.image_len(plain, 1 << 20) == len(plain) and len(plain) % 16 == 0
    assert vf.image_len(b"\x7fELF" + bytes(100), 4096) == 4096  # not an ESP image: all of it
    assert vf.image_of_bytes(complete_firmware(app), 0x10000) == app
