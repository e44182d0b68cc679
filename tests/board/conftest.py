"""The ESP32-heap gate's board tests: real boots through main.py on
the virtual board running the 32-bit VM, at the board's heap.

    SICBO_VM32=build/vm32/sim/micropython SICBO_VM32_FROZEN=build/vm32/frozen/micropython \\
        SICBO_REQUIRE_VM32=1 pytest tests/board          (make test-board does this)

Without SICBO_VM32 (or SICBO_VM32_FROZEN for the frozen image's test) the
tests are skipped with the reason, unless SICBO_REQUIRE_VM32=1: then they
fail, since the gate must not pass without having run. The figures measured
are printed at the end of the run."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from boardkit import FIGURES  # noqa: E402

from host_tools import heaps  # noqa: E402

HOW = ("make test-board MICROPYTHON_SRC=../shared/vendor/micropython-1.28.0.tar.gz "
       "(builds both, needs gcc-multilib)")


def _interpreter(var, frozen):
    exe = os.environ.get(var)
    if not exe:
        why = "%s is not set: the ESP32-heap gate needs the 32-bit VM; %s" % (var, HOW)
        if os.environ.get("SICBO_REQUIRE_VM32") == "1":
            pytest.fail(why + " (SICBO_REQUIRE_VM32=1: the gate may not be skipped)",
                        pytrace=False)
        pytest.skip(why)
    exe = os.path.abspath(exe)
    if not os.access(exe, os.X_OK):
        pytest.fail("%s=%s is not an executable" % (var, exe), pytrace=False)
    if not heaps.is_32bit(exe):
        pytest.fail("%s=%s is not a 32-bit interpreter" % (var, exe), pytrace=False)
    r = subprocess.run([exe, "-c", "import frozen_id"], capture_output=True, text=True,
                       timeout=30, cwd="/", env={"MICROPYPATH": ".frozen"})
    if (r.returncode == 0) != frozen:
        pytest.fail("%s=%s %s the firmware frozen in (import frozen_id)"
                    % (var, exe, "does not have" if frozen else "has"), pytrace=False)
    return exe


@pytest.fixture(scope="session")
def vm32():
    """The 32-bit VM with sim/ frozen in: the firmware deployed as .mpy."""
    return _interpreter("SICBO_VM32", frozen=False)


@pytest.fixture(scope="session")
def vm32_frozen():
    """The 32-bit VM with the firmware frozen in (board_config/manifest.py)."""
    return _interpreter("SICBO_VM32_FROZEN", frozen=True)


# The figures every test measured, as their reports bring them: the gate
# runs its files in several processes (pytest-xdist), and a worker's FIGURES
# are not the controller's.
_REPORTED: list[str] = []


@pytest.fixture(autouse=True)
def _figures_to_report(request):
    start = len(FIGURES)
    yield
    for text in FIGURES[start:]:
        request.node.user_properties.append(("figure", text))


def pytest_runtest_logreport(report):
    if report.when == "teardown":
        _REPORTED.extend(v for k, v in report.user_properties if k == "figure")


def pytest_terminal_summary(terminalreporter):
    if _REPORTED:
        terminalreporter.section("board figures (ESP32-heap gate)")
        for line in _REPORTED:
            terminalreporter.write_line(line)
