"""`sicbo test --on DEV` (host_tools/commands/test.py) without a board: what
it writes to the board and what it runs there.

- The tests keep their asserts: compiled with the firmware's -O3, every
  assert was dropped and every test on a board passed whatever the code did.
- The controller's tests run only where the board's heap holds them."""

import os
import subprocess

from host_tools import deploy as dp
from host_tools import heaps
from host_tools.commands import test as cmd
from host_tools.vboard import micropython_command

SOURCE = "def f():\n    return 1\n\n\nassert f() == 2, 'the assert ran'\n"


def test_the_tests_keep_their_asserts_the_firmware_does_not(tmp_path):
    src = tmp_path / "probe.py"
    src.write_text(SOURCE)
    staged = dp.compile_tree([("t/tests/logic/probe_t.mpy", str(src), True),
                              ("t/device/probe_d.mpy", str(src), True)],
                             str(tmp_path / "stage"), [], keep_asserts=("t/tests/",))

    def run(board_path, name):
        folder = os.path.dirname(staged[board_path])
        return subprocess.run(micropython_command() + [
            "-c", "import sys; sys.path.insert(0, %r); import %s" % (folder, name)],
            capture_output=True, text=True, timeout=60)

    r = run("t/tests/logic/probe_t.mpy", "probe_t")
    assert r.returncode == 1 and "AssertionError: the assert ran" in r.stdout + r.stderr, r
    r = run("t/device/probe_d.mpy", "probe_d")
    assert r.returncode == 0, r


def test_sicbo_test_compiles_the_tests_with_their_asserts():
    # what copy_tests stages: the tests under t/tests/, the firmware not
    tests = [rel for rel, _local, compiled in cmd._sources()
             if compiled and rel.startswith("t/tests/")]
    firmware = [rel for rel, _local, compiled in cmd._sources()
                if compiled and rel.startswith("t/device/")]
    assert tests and firmware
    assert all(rel.startswith(cmd.BOARD_ROOT[1:] + "/tests/") for rel in tests)
    assert not any(rel.startswith(cmd.BOARD_ROOT[1:] + "/tests/") for rel in firmware)
    shipped = [rel for rel, _local, compiled in cmd._sources() if not compiled]
    assert "t/board_config/boards/esp32-devkitc.json" in shipped
    assert "t/board_config/tables/macau-2003.json" in shipped


def test_the_controllers_tests_run_only_where_the_heap_holds_them():
    need = heaps.CONTROLLER_BOARD_USABLE_64  # a board reports its heap less the GC's tables
    assert need < heaps.CONTROLLER_BOARD_HEAP_64
    assert cmd.controller_room(need, True) is None
    why = cmd.controller_room(need - 16, True)
    assert why.startswith("this board's heap of %d bytes is under the %d" % (need - 16, need))
    assert "sicbo vboard --heap 384k" in why
    why = cmd.controller_room(heaps.BOARD_HEAP, False)
    assert "32-bit board (heap 111936 bytes)" in why and "make test-board" in why
    assert cmd.controller_room(4 * 1024 * 1024, False) is not None  # not measured: said


def test_a_virtual_board_started_as_the_advice_says_runs_the_controllers_tests():
    # The advice is a heap size (-X heapsize); a board reports its heap less
    # the GC's own tables. A 64-bit interpreter at the advised size must say
    # a heap that the check takes (it said 388,608 of 393,216: the advice,
    # followed, still skipped them).
    r = subprocess.run(micropython_command() + [
        "-X", "heapsize=%dk" % (heaps.CONTROLLER_BOARD_HEAP_64 // 1024), "-c",
        "import gc, sys; print(gc.mem_free() + gc.mem_alloc(), sys.maxsize > 2 ** 31)"],
        capture_output=True, text=True, timeout=60)
    heap, wide = r.stdout.split()
    assert wide == "True", r.stdout
    assert cmd.controller_room(int(heap), True) is None, (heap, r.stderr)
    assert int(heap) < heaps.CONTROLLER_BOARD_HEAP_64


class _Board:
    """mpremote on a board: the heap it reports."""

    def __init__(self, out):
        self.out = out

    def run(self, *args):
        assert args[0] == "exec"
        return self.out


def test_a_board_that_does_not_say_its_heap_is_a_clear_error():
    import pytest

    from host_tools.cli import UsageError

    assert cmd.board_heap(_Board("HEAP 242816 9223372036854775807\n")) == (242816, True)
    assert cmd.board_heap(_Board("HEAP 111936 2147483647\n")) == (111936, False)
    with pytest.raises(UsageError, match="did not say its heap"):
        cmd.board_heap(_Board("Traceback ...\nMemoryError\n"))
