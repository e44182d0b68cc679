"""The code check and the access records on the 32-bit VMs at the board's
heap (the ESP32-heap gate): `sicbo verify` with the firmware deployed as
.mpy (the board's keyed hash of every code file, with the app stopped by
mpremote, on 111,936 bytes) and on the production image (the running
partition: the frozen VM's own binary, sim/esp32.py's RUNNING partition),
each journaled; an image that is not the one the board runs is named."""

import json
import os
import subprocess
import time

from boardkit import SICBO, Board, figure, read_records

from host_tools import heaps
from sicbo import records as R


def verify(b, *extra):
    t0 = time.monotonic()
    r = subprocess.run([SICBO, "verify", "--port", b.vb.port, "--json", "--no-restart", *extra],
                       capture_output=True, text=True, timeout=240)
    seconds = time.monotonic() - t0
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout), seconds


def _booted(b):
    # A boot read whole: the app runs (then mpremote stops it). The console
    # lets go of the port for mpremote.
    b.open_console()
    b.reset_on_console()
    b.console.close()
    b.console = None


def test_verify_the_mpy_firmware_at_the_board_heap(vm32, tmp_path):
    b = Board(str(tmp_path / "vb"), vm32, heaps.BOARD_HEAP)
    try:
        b.deploy()
        _booted(b)
        code, res, seconds = verify(b, "--by", "gate")
        assert code == 0 and res["match"], res
        assert set(f["status"] for f in res["files"]) == {"match"}
        types = [r.type for r in read_records(b.journal_dir)]
        assert types[-2:] == [R.J_REPL, R.J_VERIFY], types[-6:]  # mpremote's stop, the check
        figure("(verify) .mpy firmware at %d bytes: %d code files matched in %.1f s"
               % (heaps.BOARD_HEAP, len(res["files"]), seconds))
    finally:
        b.close()


def test_verify_the_frozen_image_s_running_partition(vm32_frozen, vm32, tmp_path):
    b = Board(str(tmp_path / "vbf"), vm32_frozen, heaps.BOARD_HEAP)
    try:
        assert b.vb.image() == vm32_frozen  # the partition it serves: the image it runs
        b.deploy()
        _booted(b)
        code, res, seconds = verify(b, "--firmware", vm32_frozen)
        assert code == 0 and res["match"], res
        part = res["partition"]
        assert part["status"] == "match" and part["size"] >= os.path.getsize(vm32_frozen)
        assert [f["path"] for f in res["files"]] == ["main.py"]  # the rest is in the image
        assert res["board"]["frozen"]
        recs = [r for r in read_records(b.journal_dir) if r.type == R.J_VERIFY]
        assert recs and recs[-1].p(R.P_VERIFY_KIND) == R.CHECK_PARTITION
        figure("(verify) frozen image at %d bytes: partition of %d bytes matched in %.1f s"
               % (heaps.BOARD_HEAP, part["bytes"], seconds))
        # Another image (the .mpy VM's binary) is not the one the board runs.
        code, res, _s = verify(b, "--firmware", vm32)
        assert code == 1 and res["partition"]["status"] == "differs", res["partition"]
    finally:
        b.close()
