# Fault containment: whatever escapes start-up or a task of the running table
# ends here. Every actuator off, the fault pattern on the lamps, a line in
# FAULT_FILE saying what failed and where, a journal record, then the caller
# resets the board. FAULT_FILE counts the failed boots in a row across
# resets; after E.MAX_FAILED_BOOTS the board stays out of service at the
# REPL (outputs off, no watchdog) instead of resetting for ever. The
# controller clears the count once the table has run for E.STABLE_MS.
#
# A fault before the journal can be written (a damaged file, a bad pin) is
# kept in FAULT_FILE and journaled by the next boot that opens the journal,
# or by diag.clear_fault() before it clears anything, so every failed boot
# reaches the journal.
#
# One Faults is made per power-on, first of all (startup.py); start-up tells
# it what exists as it goes (the stage, the module being loaded, the lamps
# and their fault frame, the adapters, the journal), and the controller gets
# the same object for its tasks. Nothing here imports the controller or
# start-up: they import this.
#
# FAULT_FILE, one line each:
#   <failed boots in a row>
#   <stage> <kind> <detail> <journaled: 0 or 1> <what failed, for people>
#   ... (the last _KEEP failed boots, oldest first)

from micropython import const

from sicbo import events as E

FAULT_FILE = "/fault.txt"
# The board's files (written by `sicbo deploy`; host_tools/deploy.py names
# the same): here, not in tablefiles, so that the fault path, out of service
# and diag know where they are without loading the files' reader, which may
# be the damaged file.
BOARD_FILE = "/board.json"
TABLE_FILE = "/table.json"
JOURNAL_DIR = "/journal"
_KEEP = const(4)  # failed boots listed in FAULT_FILE


def read_file(path=FAULT_FILE):
    """(count, [[stage, kind, detail, journaled, text], ...]) of FAULT_FILE;
    (0, []) when there is none or it cannot be read. A line that is not in
    the format (written by hand, or by an older firmware) is kept as its
    text, stage and kind 0 (unknown), so the failed boot it tells of is
    still shown and journaled."""
    try:
        with open(path) as f:
            n = int(f.readline())
            entries = []
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                parts = line.split(" ", 4)
                try:
                    entries.append([int(parts[0]), int(parts[1]), int(parts[2]),
                                    int(parts[3]), parts[4]])
                except (ValueError, IndexError):
                    entries.append([0, 0, 0, 0, line])
            return n, entries
    except (OSError, ValueError):
        return 0, []


def write_file(n, entries, path=FAULT_FILE):
    """Best effort: False when the filesystem refuses."""
    try:
        with open(path + ".new", "w") as f:
            f.write("%d\n" % n)
            for st, kind, detail, journaled, text in entries[-_KEEP:]:
                f.write("%d %d %d %d %s\n" % (st, kind, detail, journaled, text))
        import os

        os.rename(path + ".new", path)
        return True
    except Exception:  # noqa: BLE001 - a fault must never stop containment
        return False


class Faults:
    """The fault path of one power-on (see the module doc)."""

    def __init__(self, path=FAULT_FILE, log=print):
        self.path = path
        self.log = log
        self.stage = E.F_START
        self.module = None  # the module being loaded, if any (named in the fault)
        self.hw = None  # the adapters, once built (hw.Hardware: all_off())
        self.lamps = None  # a lamp driver (write(frame)), once made
        self.frame = None  # the fault pattern for it (set_table)
        self.board = None  # the board file, once read: the lamps can be made from it
        self.journal = None  # once the journal is open: journal(stage, kind, detail, late)

    def set_table(self, table):
        """The fault pattern for the table's lamps (a SettlementTable), made
        now so that showing it allocates nothing: every status lamp lit and
        every area dark, which no round shows (PLACE_BETS and PAYING are never
        lit together), so no dealer can take it for a result. With no status
        lamp wired, every lamp dark."""
        from sicbo.settle import set_channel

        frame = bytearray(table.row_bytes)
        for ch in table.status_channel.values():
            set_channel(frame, ch, 1)
        self.frame = frame

    def load(self, name):
        """The module `name`, imported now; a damaged file is named in the
        fault with its path (bootfail.name_file)."""
        self.module = name
        try:
            mod = __import__(name)
        except BaseException as e:
            try:
                import bootfail

                bootfail.name_file(self, name)
            except BaseException:  # noqa: BLE001 - the fault is contained all the same
                pass
            raise e
        self.module = None
        return mod

    def failed_boots(self):
        """(count, text of the last) of the failed boots in a row, (0, "") if none."""
        n, entries = read_file(self.path)
        return n, entries[-1][4] if entries else ""

    def what(self, e, stage):
        """What failed, for people: the stage, the module being loaded (and
        its file: start-up names it), the exception."""
        if self.module is not None:
            return "stage %d loading %s: %s %s" % (stage, self.module, type(e).__name__, e)
        return "stage %d: %s %s" % (stage, type(e).__name__, e)

    def contain(self, e, stage=None, detail=0):
        """Best effort, each step on its own: outputs off, the fault lamps,
        the fault counted and described in FAULT_FILE, a journal record (or
        kept for a later boot to journal). True when the fault is counted:
        the caller resets the board; False, it must not (start)."""
        if stage is None:
            stage = self.stage
        hw = self.hw
        if hw is not None:
            try:
                hw.all_off()
            except Exception:  # noqa: BLE001 - a fault must never stop containment
                pass
        self.lamps_on()
        if isinstance(e, MemoryError):
            kind = E.K_MEMORY
        elif isinstance(e, OSError):
            kind = E.K_OS
        elif isinstance(e, ValueError):
            kind = E.K_VALUE
        else:
            kind = E.K_OTHER
        journaled = 0
        if self.journal is not None:
            try:
                self.journal(stage, kind, detail, 0)
                journaled = 1
            except Exception:  # noqa: BLE001
                pass
        text = ""
        try:
            text = self.what(e, stage)
        except Exception:  # noqa: BLE001 - a MemoryError may leave no room for text
            pass
        n, entries = read_file(self.path)
        n += 1
        entries.append([stage, kind, detail, journaled, text])
        counted = write_file(n, entries, self.path)
        try:
            if self.module is not None:
                self.log("sicbo: FAULT in stage %d loading %s: %s %s"
                         % (stage, self.module, type(e).__name__, e))
            else:
                self.log("sicbo: FAULT in stage %d: %s %s" % (stage, type(e).__name__, e))
        except Exception:  # noqa: BLE001
            pass
        return counted

    def lamps_on(self):
        """The fault pattern on the lamps: through the adapters' lamp driver,
        or one made here from the board file alone (the hardware stage may
        have failed before it made one); False, and why on the log, when
        they cannot be lit."""
        lamps = self.lamps
        if lamps is None and self.hw is not None:
            lamps = self.hw.lamps
        why = ""
        err = None
        try:
            if self.frame is None or (lamps is None and self.board is None):
                why = "no lamp layout yet: the fault came before the files were read"
            else:
                if lamps is None:
                    from hw import build

                    lamps = self.lamps = build.lamps(self.board, len(self.frame))
                lamps.write(self.frame)
                return True
        except Exception as e:  # noqa: BLE001
            err = e
        try:
            if err is not None:
                why = "%s %s" % (type(err).__name__, err)
            self.log("sicbo: fault lamps not lit: " + why)
        except Exception:  # noqa: BLE001
            pass
        return False

    def journal_pending(self, journal):
        """Journal the failed boots FAULT_FILE holds that no journal record
        names yet (late: their J_FAULT says so), with journal(stage, kind,
        detail, late); then mark them journaled. Returns how many."""
        n, entries = read_file(self.path)
        done = 0
        for entry in entries:
            if not entry[3]:
                journal(entry[0], entry[1], entry[2], 1)
                entry[3] = 1
                done += 1
        if done:
            write_file(n, entries, self.path)
        return done

    def clear(self):
        """The table runs (or a technician cleared the fault): the failed boots
        are no longer in a row. The file goes once nothing in it is left to
        journal."""
        import os

        n, entries = read_file(self.path)
        for entry in entries:
            if not entry[3]:
                if n:
                    write_file(0, entries, self.path)  # keep what must still be journaled
                return
        try:
            os.remove(self.path)  # none left in a row, none left to journal
        except OSError:
            pass


def start(board_path=None, table_path=None, journal_dir=None, log=print, ticks_ms=None,
          fault_file=FAULT_FILE):
    """main.py's entry: the table started (startup.open_table) and run
    (controller.run) under containment. Returns (to the REPL) on refused
    files, in recovery mode, without an approval in force, or out of
    service, with every output off and the watchdog never armed; otherwise
    runs the table until a fault, contained and then a reset. Ctrl-C (a
    technician, mpremote) stops the table without a reset. Paths default to
    the board's (BOARD_FILE, TABLE_FILE, JOURNAL_DIR); log and ticks_ms: as startup.open_table."""
    import machine

    faults = Faults(fault_file, log)
    ctl = None
    try:
        ctl, restart = boot(faults, board_path, table_path, journal_dir, log, ticks_ms)
        if restart:
            machine.reset()  # the configuration is cached: the next boot runs the table
        if ctl is None:
            return None
        import gc

        import controller

        gc.collect()
        controller.run(ctl)
    except KeyboardInterrupt:
        # A technician (Ctrl-C, mpremote) stopped the app: outputs off first,
        # then the stop journaled; nothing of that may keep the outputs on or
        # the REPL away.
        if faults.hw is not None:
            try:
                faults.hw.all_off()
            except Exception:  # noqa: BLE001 - the stop goes on to the REPL
                pass
        try:
            import access

            access.stopped(faults, ctl, journal_dir, log)  # J_REPL; never raises
        except BaseException:  # noqa: BLE001 - access.py unloadable: only the record lost
            pass
        raise
    except SystemExit:
        raise  # a reset under way (the unix port's machine.reset() raises it)
    except BaseException as e:  # noqa: BLE001 - contain everything, then reset
        counted = False
        try:
            counted = faults.contain(e)
        finally:
            # A reset, even for the last allowed failure: the next boot finds
            # the count and stays out of service with no watchdog armed (an
            # armed machine.WDT cannot be stopped). Not when the count could
            # not be written (a full filesystem): every boot would fault and
            # reset for ever, never out of service.
            if counted:
                machine.reset()
        try:
            import bootfail

            bootfail.out_of_service(faults, 0, "", board_path, table_path, log)
        except Exception as e:  # noqa: BLE001 - out of service all the same
            log("sicbo: OUT OF SERVICE: %s %s" % (type(e).__name__, e))
    finally:
        if ctl is not None:
            ctl.hw.all_off()
            ctl.store.close()
    return ctl


def _open_table(faults, board_path, table_path, journal_dir, cause, rtc, log, ticks_ms):
    # startup.open_table, then its module forgotten, in a frame of its own:
    # a slot of the caller's frame left pointing into start-up (the call's
    # own) would keep all its code through the resumption, the boot's peak.
    import memory

    startup = faults.load("startup")
    try:
        return startup.open_table(faults, board_path, table_path, journal_dir, cause=cause,
                                  rtc=rtc, ticks_ms=ticks_ms, log=log)
    finally:
        memory.forget(startup.BOOT_MODULES)


def boot(faults, board_path=None, table_path=None, journal_dir=None, log=print, ticks_ms=None):
    """The start-up (startup.open_table; out of service, bootfail, after
    E.MAX_FAILED_BOOTS failed boots), its module forgotten, then the table
    resumed (resumption.resume_table) and its modules forgotten: (Controller
    or None, restart). A function of its own, so that when it returns no
    slot of a running frame holds any of start-up's objects: the garbage
    collector is conservative, and one such pointer (even to its tuple of
    module names) would keep the whole module's code in the heap."""
    import machine
    import memory

    n, text = faults.failed_boots()
    if n >= E.MAX_FAILED_BOOTS:
        # Out of service without start-up or the files' reader: either file
        # may be what failed the boots.
        try:
            import bootfail

            bootfail.out_of_service(faults, n, text, board_path, table_path, log)
        except Exception as e:  # noqa: BLE001 - out of service all the same
            log("sicbo: OUT OF SERVICE: %s %s" % (type(e).__name__, e))
        return None, False
    # sicbo deploy's mark of a copy under way (device/remote/deploy_agent.py):
    # /manifest.prev without /manifest.json, beside the board file. A power
    # cut left it: the files may be two releases mixed, never to be run. A
    # fault like any (counted, then out of service, diag names it).
    import os

    root = board_path or BOARD_FILE
    root = root[:root.rfind("/") + 1]
    cut = True
    try:
        os.stat(root + "manifest.prev")
    except OSError:
        cut = False
    if cut:
        try:
            os.stat(root + "manifest.json")
        except OSError:
            raise OSError("a deploy was cut before its end (manifest.prev, no manifest.json): "
                          "the files may be two releases mixed; sicbo deploy again") from None
    cause = machine.reset_cause()
    ctl, restart, opened = _open_table(faults, board_path or BOARD_FILE,
                                       table_path or TABLE_FILE, journal_dir or JOURNAL_DIR,
                                       cause, machine.RTC(), log, ticks_ms)
    if ctl is None:
        return None, restart
    resumption = faults.load("resumption")
    try:
        if not resumption.resume_table(faults, ctl, opened, cause, log, ticks_ms):
            return None, False
    finally:
        memory.forget(resumption.MODULES)
    return ctl, False
