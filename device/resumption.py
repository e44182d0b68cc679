# The table resumed, once start-up (startup.py) has made the controller and
# its code is gone from the heap: run by faults.boot, then forgotten
# (memory.forget), so that the boot's end, its peak with a MAC chain to
# load, holds only these stages beside the running table.
#
#   chain     a provisioning taken, the MAC chain's first record written
#             (stage_chain); then the faults of earlier boots journaled
#   resume    the approval check (fails closed without a clock), the round
#             resumed, the watchdog armed last
#   clock     the RTC against the journal's last wall-clock time: a clock
#             set back by hand journaled
#
# A refused approval comes before any output is driven or the watchdog armed.

import struct
import time

from micropython import const

from sicbo import events as E
from sicbo import records as R

_CLOCK_SLACK = const(2)  # s: the RTC may read this much before the journal's last time
# This module and what only it uses, forgotten once the table runs.
MODULES = ("resumption", "sicbo.approval", "sicbo.dates", "memory")


def stage_chain(ctl):
    """The journal's MAC chain (sicbo/chain.py): a provisioning that `sicbo
    deploy --provision` left beside the journal taken, then the chain's
    first record written (chainfile.take). A table with neither a key file
    nor a provisioning file loads none of the chain's code."""
    import os

    from journal_store import PROVISION_NAME

    try:
        os.stat(ctl.store.folder + "/" + PROVISION_NAME)
    except OSError:
        if ctl.store.open_chain() is None:
            return
    from chainfile import take

    take(ctl)


def stage_resume(faults, ctl, cfg, watchdog_ms, config, cause, say, watchdog, ticks_ms):
    """The approval check, then the round resumed and the watchdog armed;
    False (one line said) when the approval is not in force."""
    faults.stage = E.F_RESUME
    now = time.ticks_ms() if ticks_ms is None else ticks_ms()
    ctl.wall.refresh(now)
    # Loaded here, not with the running table's modules: the MAC chain's
    # code before it finds more of the heap whole.
    faults.load("sicbo.approval")
    from sicbo.approval import refusal

    why = refusal(cfg, ctl.wall.seconds(now), ctl.m, config)
    if why is not None:
        say("sicbo: " + why)
        ctl.store.close()
        return False
    if ctl.wall.seconds(now) is None:
        say("sicbo: RTC not set: journal records carry no wall-clock time")
    ctl.resume(now, cause, config)
    if watchdog:
        from hw.watchdog import arm

        ctl.hw.watchdog = arm(watchdog_ms, ticks_ms)
    return True


def stage_clock(ctl, seen, now):
    """The RTC against the last wall-clock time the journal knows (seen:
    stage_replay's, the last record's that carried one): a clock that reads
    earlier was set back by hand (mpremote rtc --set, the REPL), since the
    firmware's own setting (access.set_clock) journals itself and the
    records after it carry the new time. Journaled as J_CLOCK_MOVED (the
    journal's time, the RTC's). A clock not set says nothing: a power cut
    loses it, and J_BOOT's reset cause says so."""
    rtc = ctl.wall.seconds(now)
    if rtc is None or seen is None or rtc + _CLOCK_SLACK >= seen:
        return False
    ctl._note(R.J_CLOCK_MOVED, struct.pack("<II", seen, rtc))  # the link told, as any record
    return True


def resume_table(faults, ctl, opened, cause, log, ticks_ms=None, watchdog=True):
    """The stages above, on the controller start-up made; opened: start-up's
    (cfg, the watchdog's timeout from the board file, config id, the
    journal's last wall-clock time, the link's
    plan). False (one line said, the journal closed) when the approval is
    not in force."""
    say = log if log is not None else print
    cfg, watchdog_ms, config, seen, plan = opened
    stage_chain(ctl)
    # From now on a fault is journaled as it happens; then the failed boots
    # that FAULT_FILE holds and the journal does not.
    faults.journal = ctl.journal_fault
    faults.journal_pending(ctl.journal_fault)
    if plan is not None:
        from link.table import attach

        attach(ctl, plan)
    if not stage_resume(faults, ctl, cfg, watchdog_ms, config, cause, say, watchdog, ticks_ms):
        return False
    stage_clock(ctl, seen, time.ticks_ms() if ticks_ms is None else ticks_ms())
    # The state as its number (sicbo.events ST_*): its name would load texts.
    say("sicbo: %s, round %d, state %d" % (cfg.name, ctl.m.round, ctl.m.state))
    return True
