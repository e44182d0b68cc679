"""The real mosquitto for the tests: started by the test itself, on free
loopback ports, in the test's own folder (host_tools/broker.py).

Without mosquitto a test fails when the run requires the real parts (CI:
`.ci/run` exports SICBO_REQUIRE_PARTS=1 after installing them) and is
skipped with the one line that says why otherwise: never a silent pass."""

import os

import pytest

from host_tools.broker import Broker, require_mosquitto


def need_mosquitto():
    why = require_mosquitto()
    if why is None:
        return
    if os.environ.get("SICBO_REQUIRE_PARTS") == "1" or os.environ.get("CI"):
        pytest.fail(why + " (the real parts are required here)", pytrace=False)
    pytest.skip(why)


def start_broker(folder, **kw):
    """A started Broker (host_tools.broker.Broker(folder, **kw)); the caller
    stops it (or use it as a context manager)."""
    need_mosquitto()
    return Broker(str(folder), **kw).start()
