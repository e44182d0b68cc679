"""The heap sizes every tool and test uses, in one place.

The board: an ESP32 without PSRAM starts MicroPython with a 56 KiB heap and
grows it once, to 111,936 bytes in two areas (../shared/docs/esp32-memory.md,
from MicroPython v1.28.0's ports/esp32). A 32-bit build of the unix port
allocates like the ESP32 (16-byte blocks, 4-byte pointers), so on it the
board's own figures apply as they are. Its heap also holds the simulated
machine's objects (about 11.4 KiB with the bench's rig; their code is
frozen in), which a board's C does not: bench/board_heap.py says each
figure as the VM's and as a board's, the VM's less those bytes, and checks
the goals below on a board's.

The 64-bit pip unix port is for function, not memory: there the firmware
takes about 1.6 times its 32-bit heap, and the simulated `machine` and the
bench's rig are loaded from .mpy files into the heap (frozen into the 32-bit
VM, C and wires on a board): `bench/board_heap.py --all` measured the smallest
heap on a full journal at 2.0 times the 32-bit figure, all counted. Its
stand-in for the board's 111,936 bytes is 240k, where the virtual board's
system tests and power-cut campaign pass.
"""

import functools
import subprocess

BOARD_HEAP = 111936  # bytes: the ESP32's heap after its one growth
BOARD_HEAP_INITIAL = 56 * 1024  # before it grows: the frozen image's target
BOOT_GOAL = 90 * 1024  # the .mpy firmware boots and plays at or under this
# With the floor link connected and publishing (plain TCP on the
# 32-bit VM: on the ESP32 mbedtls allocates from the IDF heap).
LINK_GOAL = 96 * 1024  # the .mpy firmware
LINK_GOAL_FROZEN = 52 * 1024  # the frozen image
HEAP_64_EQUIVALENT = "240k"  # the 64-bit port standing in for BOARD_HEAP
# The controller's tests on the 64-bit port: the test rig, the test code and
# the simulated machine's .mpy beside the whole firmware. Memory is gated on
# the 32-bit VM (the same tests, frozen image, at BOARD_HEAP).
HEAP_64_TESTS = "320k"
# The same tests on a board (sicbo test --on), run through mpremote beside
# the board's own start-up: the least heap of a 64-bit virtual board at
# which all of them passed (320k left two short of memory). A 32-bit board
# with the firmware as .mpy (the ESP32's 111,936 bytes) cannot hold them:
# the gate runs them on the frozen image (make test-board).
CONTROLLER_BOARD_HEAP_64 = 384 * 1024
# What such a board reports as its heap (gc.mem_free() + gc.mem_alloc(), all
# a board can tell): the -X heapsize less the GC's own tables, measured on a
# virtual board started with --heap 384k.
CONTROLLER_BOARD_USABLE_64 = 388608


@functools.lru_cache(maxsize=None)
def is_32bit(micropython):
    """True when this MicroPython interpreter has 32-bit pointers."""
    r = subprocess.run([micropython, "-c", "import sys; print(sys.maxsize)"],
                       capture_output=True, text=True, timeout=30)
    return r.returncode == 0 and r.stdout.strip() == str(2**31 - 1)


def board_heap(micropython):
    """The -X heapsize value that stands for the board on this interpreter."""
    return str(BOARD_HEAP) if is_32bit(micropython) else HEAP_64_EQUIVALENT
