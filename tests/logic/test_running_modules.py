# mprun-heap: controller
# What the running table keeps loaded. A module a boot loads stays in the
# heap, its code until it is forgotten (memory.forget) and its names for good
# (docs/design.md, "Heap"): the modules only a boot, the file parsers or the
# host need must be gone once the table runs, and those whose names the
# running table has no use for never loaded by it.

import sys

from appkit import Table

from sicbo import events as E

# Forgotten once the table runs: start-up, the parsers, the resumption and
# the approval's calendar.
_BOOT_ONLY = ("startup", "tablefiles", "sicbo.board", "sicbo.config", "sicbo.areas",
              "sicbo.cache", "resumption", "sicbo.approval", "sicbo.dates", "hw.build",
              "hw.inputs")


def test_the_running_table_keeps_no_module_only_its_boot_needs():
    t = Table()
    try:
        if sys.implementation.name == "micropython":
            left = [name for name in _BOOT_ONLY if name in sys.modules]
            assert left == [], left
        # Its wall clock and its lamp channels' names work without them.
        assert t.table.cfg.channel_name(0) == t.table.cfg.lamp_order[0]
        t.play(1, 2, 3)
        assert t.m.state == E.ST_IDLE
    finally:
        t.close()
