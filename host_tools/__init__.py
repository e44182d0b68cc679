"""Host-side tools of the Sic Bo table controller (CPython).

The rules come from the firmware's own `sicbo` package (device/sicbo), never
from a second copy: importing host_tools makes that package importable here.
"""

import os
import sys

from host_tools import mpshim

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# SICBO_DEVICE_DIR: another copy of device/ to import the firmware from (the
# mutation tests, host_tools/mutate.py, point the tests at a mutated copy).
DEVICE = os.environ.get("SICBO_DEVICE_DIR") or os.path.join(REPO, "device")
mpshim.install()
if DEVICE not in sys.path:
    sys.path.insert(0, DEVICE)
