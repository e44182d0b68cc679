"""What CPython needs to run the firmware's pure modules unchanged.

The device code imports `const` from `micropython` and uses `time.ticks_*`,
as MicroPython code should. On CPython neither exists, so this module provides
them, with the ESP32's wrap-around of ticks at 2**30, before `sicbo` is
imported. Installing it twice is harmless; it never replaces a real module.
"""

import sys
import time
import types

TICKS_PERIOD = 1 << 30
_TICKS_MAX = TICKS_PERIOD - 1
_TICKS_HALF = TICKS_PERIOD // 2


def ticks_add(ticks, delta):
    # As MicroPython's extmod/modtime.c: a delta that ticks_diff could not
    # give back is refused, so a swapped (ticks, delta) fails here as there.
    if not -_TICKS_HALF < delta < _TICKS_HALF:
        raise OverflowError("ticks interval overflow")
    return (ticks + delta) & _TICKS_MAX


def ticks_diff(end, start):
    # Signed difference in the wrapped range, as on the board.
    return ((end - start + _TICKS_HALF) & _TICKS_MAX) - _TICKS_HALF


def ticks_ms():
    return int(time.monotonic() * 1000) & _TICKS_MAX


def ticks_us():
    return int(time.monotonic() * 1_000_000) & _TICKS_MAX


def _const(x):
    return x


def _noop(*args, **kwargs):
    return None


def install():
    if "micropython" not in sys.modules:
        shim = types.ModuleType("micropython")
        shim.const = _const  # type: ignore[attr-defined]
        shim.heap_lock = _noop  # type: ignore[attr-defined]
        shim.heap_unlock = _noop  # type: ignore[attr-defined]
        shim.schedule = lambda f, arg: f(arg)  # type: ignore[attr-defined]
        shim.native = lambda f: f  # type: ignore[attr-defined]
        shim.viper = lambda f: f  # type: ignore[attr-defined]
        sys.modules["micropython"] = shim
    for name, fn in (("ticks_add", ticks_add), ("ticks_diff", ticks_diff),
                     ("ticks_ms", ticks_ms), ("ticks_us", ticks_us),
                     ("sleep_ms", lambda ms: time.sleep(max(0, ms) / 1000)),  # < 0: at once
                     ("sleep_us", lambda us: time.sleep(max(0, us) / 1_000_000))):
        if not hasattr(time, name):
            setattr(time, name, fn)
    import asyncio

    if not hasattr(asyncio, "sleep_ms"):
        # MicroPython's asyncio.sleep_ms, for the app's tasks run under pytest.
        asyncio.sleep_ms = lambda ms: asyncio.sleep(ms / 1000)  # type: ignore[attr-defined]
