"""The machine's processes, as the tests that kill or count them read them."""

import os


def command_lines():
    """(pid, argv) of every process now, argv as text; processes that end
    while they are read are left out."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                raw = f.read()
        except OSError:
            continue
        yield int(d), raw.decode("utf-8", "replace").split("\0")
