"""Power cuts on the virtual board.

    .venv/bin/python bench/powercut_vboard.py [--rounds 1000] [--cuts N] [--seed 5]

A VirtualBoard (host_tools/vboard.py) with bench/virtual-fast.json (the
virtual board's wiring, the shortest timings the board file allows) and the
macau-2004 table is deployed once; then rounds are played through the
simulated table's control channel (TableClient), as a dealer would: cover and
clasps on, shake, bell, cover off, three faces and confirm (or a void: void
key, reason, confirm), payout. In `--cuts` rounds chosen at random (seeded) the
interpreter is killed (VirtualBoard.power_cut(), then power_on()) at a random
moment of the round. After each restart the journal is read from the board's
filesystem folder (vb.fs/journal) and decoded on the host with the firmware's
own code (sicbo.journal, sicbo.roundstate.RoundState), and the round is finished from
the state the board resumed in.

Every boot must reach the running table: the campaign keeps the board's
serial console open (reopened after each power cut, before the power comes
back) and waits, after each power-on, for the line the app prints once the
table runs (`sicbo: <table name>, round N, state S`). A boot that prints a
fault, goes out of service, ends at the REPL or prints nothing of the kind
within BOOT_TIMEOUT_S is a failed boot (the campaign then power-cycles again,
up to MAX_FAILED_IN_A_ROW times, and stops). Every start of the interpreter
(vboard's count) must have its running line: a reset the board made itself
(a contained fault, the watchdog) is counted too.

Counted: rounds the host saw completed (the PAYING lamp off after the payout
key, the VOID lamp on after a void: the firmware journals before it lights
lamps) that the journal does not hold as paid or void after a restart (lost);
round ids with two J_ROUND, two results, two payouts, two voids, or both a
payout and a void, and sequence numbers seen with two different records
(doubled); boots (J_BOOT records, interpreter starts, running lines), failed
boots, resets the board made itself, and fault records journaled (J_FAULT).
Target: 0 lost, 0 doubled, 0 failed boots, 0 faults, 0 resets of its own.
Exit status 1 otherwise. Leaves no process.

The heap is the board's (host_tools/heaps.py: 111936 on a 32-bit
interpreter, 240k on the 64-bit pip port; SICBO_MICROPYTHON names the
interpreter); --heap or SICBO_VBOARD_HEAP set another.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from host_tools import REPO  # noqa: E402  (puts device/ on sys.path)
from host_tools.deploy import deploy  # noqa: E402
from host_tools.serialwatch import SerialWatch  # noqa: E402
from host_tools.simclient import TableClient  # noqa: E402
from host_tools.vboard import VirtualBoard, default_heap  # noqa: E402
from sicbo import events as E  # noqa: E402
from sicbo import journal  # noqa: E402
from sicbo import records as R  # noqa: E402
from sicbo.roundstate import RoundState  # noqa: E402

FAST_BOARD = os.path.join(REPO, "bench", "virtual-fast.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
# The board's heap on this interpreter (host_tools/heaps.py), unless set.
HEAP = os.environ.get("SICBO_VBOARD_HEAP") or None
KEYS = ("shake", "key_bell", "key_void", "key_payout", "key_confirm", "key_face_1",
        "key_face_2", "key_face_3", "key_face_4", "key_face_5", "key_face_6")
# A press for the board's attention (host_tools/simclient.py): held until it
# has read it for PRESS_MS, then released as long; the dealer goes on once
# the board has seen the release.
PRESS_MS = 40
# Waits end when what they wait for comes; these are for a board that never
# gets there, long enough for a busy machine.
LAMP_TIMEOUT_S = 60
BOOT_TIMEOUT_S = 120
MAX_FAILED_IN_A_ROW = 3
# What the app prints once the table runs (device/startup.py), and what a
# boot that does not get there prints.
RUNNING = re.compile(r"^sicbo: .*, round (\d+), state (\S+)\s*$")
FAILING = ("sicbo: FAULT", "sicbo: OUT OF SERVICE", "Traceback (most recent call last)",
           "table not started", "app not started", "MemoryError")


class Console(SerialWatch):
    """The board's console (host_tools.serialwatch): opened after the deploy
    (mpremote must have the port alone) and again after each power cut."""

    def running_lines(self, mark=0):
        return [ln for ln in self.since(mark) if RUNNING.match(ln)]


class BootFailed(Exception):
    """A boot that did not reach the running table."""


class Cut(Exception):
    """The moment chosen for the power cut has come."""


class Missed(Exception):
    """A lamp did not change in time: a key press the interpreter did not see
    (a loaded host can starve it for longer than a press)."""


class Campaign:
    def __init__(self, folder, seed=5, heap=HEAP, log=None, chain=False):
        self.folder = folder
        # chain: the board provisioned (a MAC chain over its journal, sicbo
        # deploy --provision): its journal is verified at the end.
        self.keys = os.path.join(folder, "keys.json") if chain else None
        self.rng = random.Random(seed)
        self.heap = heap
        self.log = log or (lambda text: None)
        self.vb = None
        self.client = None
        self.cut_at = None  # time.monotonic() of the pending cut, or None
        self.records = {}  # seq -> (type, round, boot, payload): every record ever read
        self.conflicts = 0  # a sequence number read with two different records
        self.completed = {}  # round id -> "paid" / "void", as the host saw it
        self.checked = set()  # round ids already found in the journal
        self.lost = []
        self.cuts = 0
        self.cut_where = {}  # what the round was doing when the power went
        self.boot = 0  # highest boot count in the journal
        self.state = E.ST_IDLE
        self.round = 0
        self.step = "idle"
        self.round_s = 0.6  # running mean of a round's duration
        self.rung = None  # the bell's ring count before this round's bell key
        self.unexpected = []
        self.misses = []  # (round, step, last journal records) of each Missed
        self.console = None
        self.failed_boots = []  # why each boot that did not reach the running table failed
        self.starts0 = 0  # the interpreter's starts before the campaign's first power-on
        self.resets0 = 0  # resets the board made itself before it

    # ---- the board ------------------------------------------------------------

    def start(self):
        self.vb = VirtualBoard(os.path.join(self.folder, "vb"), board=FAST_BOARD,
                               heap=self.heap, table_file=TABLE)
        self.heap = self.vb.heap
        self.vb.start()
        deploy(self.vb.port, FAST_BOARD, TABLE, reset=False, provision_to=self.keys,
               table_id="T01")
        # the board's clock, as a deploy with its reset sets it
        mpremote = os.path.join(os.path.dirname(sys.executable), "mpremote")
        subprocess.run([mpremote, "connect", self.vb.port, "rtc", "--set"], check=True,
                       capture_output=True, timeout=60)
        self.client = TableClient(self.vb.control)
        # The deployed firmware's first boot: a reset typed on the console,
        # which is open from now on (mpremote had the port alone until now).
        # A reset, not a power cycle: the deploy set the clock, which a power
        # cut would lose, and the table's approval needs it on the first boot.
        self.console = Console(self.vb.port)
        self.console.reattach()
        self.starts0 = self.vb.boots
        self.resets0 = self.own_resets() + 1  # this reset is the campaign's
        mark = self.console.mark()
        self.console.write(b"\r\x03\x03\rimport machine; machine.reset()\r")
        try:
            self.wait_running(mark)
            self.wait_boot(1)
        except BootFailed as e:
            self.failed_boots.append(str(e))
            self.log("failed boot: %s" % e)
            self.vb.power_cut()
            self.boot_up()

    def own_resets(self):
        """Resets the board made itself: machine.reset(), the watchdog, a crash."""
        vb = self.vb
        return vb.hard_resets + vb.watchdog_resets + vb.crashes

    def boot_up(self):
        """Power on, then wait for the running table (the app's console line)
        and the journal of that boot. A boot that does not get there is
        counted; the campaign power-cycles again, and gives up after
        MAX_FAILED_IN_A_ROW in a row."""
        in_a_row = 0
        while True:
            for k in KEYS:  # no key held at power-on (confirm would be the recovery mode)
                self.client.release(k)
            mark = self.console.mark()
            # the console is open before the interpreter prints
            self.vb.power_on(timeout=0, before_boot=self.console.reattach)
            try:
                self.wait_running(mark)
                break
            except BootFailed as e:
                self.failed_boots.append(str(e))
                self.log("failed boot: %s" % e)
                in_a_row += 1
                if in_a_row >= MAX_FAILED_IN_A_ROW:
                    raise
                self.vb.power_cut()
        return self.wait_boot(self.boot + 1)

    def wait_running(self, mark):
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        bad_at = None
        while True:
            lines = self.console.since(mark)
            for ln in lines:
                m = RUNNING.match(ln)
                if m:
                    return m
            now = time.monotonic()
            if bad_at is None and any(f in ln for ln in lines for f in FAILING):
                bad_at = now  # what it prints next (a traceback's end) is part of it
            if (bad_at is not None and now - bad_at > 1.0) or now > deadline:
                shown = [ln for ln in lines if ln.strip()][-8:]
                why = "no running table after %.0f s" % (now - deadline + BOOT_TIMEOUT_S)
                raise BootFailed("boot %d (interpreter start %d): %s; console: %s"
                                 % (self.boot + 1, self.vb.boots, why, " | ".join(shown)))
            time.sleep(0.02)

    def stop(self):
        if self.console is not None:
            self.console.close()
            self.console = None
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.vb is not None:
            self.vb.stop()
            self.vb = None

    def read_journal(self):
        """Every record on the board's filesystem now, into self.records;
        returns the RoundState of the segments as they are."""
        folder = os.path.join(self.vb.fs, "journal")
        rp = RoundState()
        names = sorted(n for n in os.listdir(folder) if n.startswith("j") and n.endswith(".log"))
        for n in names:
            with open(os.path.join(folder, n), "rb") as f:
                data = f.read()
            rp.feed(data)
            for r in journal.records(data):
                key = (r.type, r.round, r.boot, bytes(r.payload))
                old = self.records.get(r.seq)
                if old is None:
                    self.records[r.seq] = key
                elif old != key:
                    self.conflicts += 1
        return rp

    def wait_boot(self, boot):
        """Until the journal holds the J_BOOT of boot count `boot` and what
        the resumption wrote with it (one append)."""
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                rp = self.read_journal()
            except OSError:
                rp = None
            if rp is not None and rp.boot >= boot:
                self.boot = rp.boot
                self.state = rp.state
                self.round = rp.round
                return rp
            time.sleep(0.05)
        raise RuntimeError("the board did not boot (boot %d) within %d s" % (boot, BOOT_TIMEOUT_S))

    def power_cycle(self):
        self.rung = None  # a bell rung before the cut is not waited for after it
        self.cuts += 1
        self.cut_where[self.step] = self.cut_where.get(self.step, 0) + 1
        self.vb.power_cut()
        self.boot_up()
        self.check_lost()

    def check_lost(self):
        ended = {}
        for _seq, (t, rid, _boot, _p) in self.records.items():
            if t == R.J_PAYOUT:
                ended.setdefault(rid, set()).add("paid")
            elif t == R.J_VOID:
                ended.setdefault(rid, set()).add("void")
        for rid, how in self.completed.items():
            if rid in self.checked:
                continue
            if how in ended.get(rid, ()):
                self.checked.add(rid)
            else:
                self.lost.append(rid)
                self.checked.add(rid)

    def doubled(self):
        per = {}
        for _seq, (t, rid, _boot, _p) in self.records.items():
            if t in (R.J_ROUND, R.J_RESULT, R.J_PAYOUT, R.J_VOID):
                c = per.setdefault(rid, {})
                c[t] = c.get(t, 0) + 1
        bad = []
        for rid, c in sorted(per.items()):
            if (c.get(R.J_ROUND, 0) > 1 or c.get(R.J_RESULT, 0) > 1 or c.get(R.J_PAYOUT, 0) > 1
                    or c.get(R.J_VOID, 0) > 1 or (c.get(R.J_PAYOUT) and c.get(R.J_VOID))):
                bad.append(rid)
        return bad

    # ---- the dealer, with the cut pending ---------------------------------------

    def due(self):
        if self.cut_at is not None and time.monotonic() >= self.cut_at:
            raise Cut()

    def sleep(self, s):
        end = time.monotonic() + s
        while True:
            self.due()
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.005))

    def lit(self):
        return set(n for n in self.client.lamps()["lit"] if isinstance(n, str))

    def wait_lit(self, name, on=True, timeout=LAMP_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.due()
            if (name in self.lit()) == on:
                return
            time.sleep(0.005)
        raise Missed("round %d (%s): lamp %s never %s; lit %s"
                     % (self.round, self.step, name, "on" if on else "off", sorted(self.lit())))

    def press(self, key):
        self.due()
        self.client.press(key, ms=PRESS_MS)
        deadline = time.monotonic() + LAMP_TIMEOUT_S
        while self.client.state()["inputs"][key]:  # until the board has seen the release
            self.due()
            if time.monotonic() > deadline:
                raise Missed("round %d (%s): the board never read %s" % (self.round, self.step,
                                                                         key))
            time.sleep(0.005)

    def bell_rung(self, before):
        """Until the bell has rung (more than `before` times) and is off."""
        deadline = time.monotonic() + LAMP_TIMEOUT_S
        while True:
            self.due()
            b = self.client.outputs()["bell"]
            if b["on_count"] > before and not b["level"]:
                return
            if time.monotonic() > deadline:
                raise Missed("round %d (%s): the bell never rang out" % (self.round, self.step))
            time.sleep(0.005)

    def play(self, void):
        """Play from the state the board is in to the end of a round."""
        c = self.client
        if self.state == E.ST_IDLE:
            self.step = "idle"
            self.due()
            # until the board has taken them: a shake pressed as the cover
            # goes on can be taken before it (and refused)
            c.set_all({"cover": 1, "clasp_left": 1, "clasp_right": 1}, wait_ms=PRESS_MS)
            self.step = "shake"
            self.press("shake")
            self.wait_lit("PLACE_BETS")
            self.round += 1
            self.state = E.ST_OPEN
            self.step = "open"
            self.rung = c.outputs()["bell"]["on_count"]
            self.press("key_bell")
            self.wait_lit("PLACE_BETS", on=False)
            self.state = E.ST_CLOSED
        if self.state == E.ST_CLOSED:
            self.step = "closed"
            if self.rung is not None:  # the bell rings out (resumed here: rung before the cut)
                self.bell_rung(self.rung)
            self.rung = None
            c.set_all({"clasp_left": 0, "clasp_right": 0, "cover": 0}, wait_ms=PRESS_MS)
            self.state = E.ST_RESULT
        if self.state == E.ST_RESULT:
            self.step = "entry"
            if void:
                for k in ("key_void", "key_face_%d" % self.rng.randint(1, 3), "key_confirm"):
                    self.press(k)
                self.wait_lit("VOID")
                self.completed[self.round] = "void"
                self.state = E.ST_IDLE
                return
            for _ in range(3):
                self.press("key_face_%d" % self.rng.randint(1, 6))
            self.press("key_confirm")
            self.wait_lit("PAYING")
            self.state = E.ST_PAYING
        if self.state == E.ST_PAYING:
            self.step = "paying"
            self.press("key_payout")
            self.wait_lit("PAYING", on=False)
            self.completed[self.round] = "paid"
            self.state = E.ST_IDLE
            return
        if self.state != E.ST_IDLE:
            self.unexpected.append((self.round, self.state))
            raise RuntimeError("round %d: the board resumed in state %d" % (self.round,
                                                                           self.state))

    def run(self, rounds, cuts):
        cut_rounds = [self.rng.randrange(rounds) for _ in range(cuts)] if cuts > rounds \
            else self.rng.sample(range(rounds), cuts)
        plan = {}
        for i in cut_rounds:
            plan[i] = plan.get(i, 0) + 1
        t0 = time.monotonic()
        i = -1
        # Until `rounds` round ids have been started: a cut before the shake
        # was taken leaves the table idle with no round begun.
        while self.round < rounds:
            i += 1
            if i > 2 * rounds:
                raise RuntimeError("only %d rounds in %d attempts" % (self.round, i))
            void = self.rng.random() < 0.1
            n_cuts = plan.get(i, 0)
            start = time.monotonic()
            while True:
                if n_cuts:
                    self.cut_at = time.monotonic() + self.rng.uniform(0, self.round_s)
                try:
                    self.play(void)
                    if n_cuts:
                        self.sleep(max(0.0, self.cut_at - time.monotonic()) + 0.001)
                except Cut:
                    pass
                except Missed as e:
                    # Where the board is, from its journal; then a power cycle,
                    # which also forgets a half-keyed entry, and on from there.
                    last = sorted(self.records.items())[-4:]
                    self.misses.append((str(e), [(t, rid) for _s, (t, rid, _b, _p) in last]))
                    self.log("missed: %s" % e)
                    if len(self.misses) > missed_limit(rounds):
                        raise
                    self.cut_at = None
                    self.power_cycle()
                    if self.state != E.ST_IDLE:
                        continue
                    break
                if n_cuts:
                    self.cut_at = None
                    n_cuts -= 1
                    self.power_cycle()
                    if self.state != E.ST_IDLE:
                        continue  # finish the round from where it resumed
                    # Idle: voided by the resumption, or over before the cut.
                break
            if not plan.get(i):
                self.round_s = 0.9 * self.round_s + 0.1 * (time.monotonic() - start)
            if i % 20 == 19 and not plan.get(i):
                self.read_journal()
                self.check_lost()
            self.log("round %d: %s; %d cuts so far" % (self.round, self.completed.get(
                self.round, "void at the resumption"), self.cuts))
        self.read_journal()
        self.check_lost()
        return time.monotonic() - t0


def failed(r):
    """Why a campaign's figures fail it (empty: it passed)."""
    why = []
    for key in ("lost", "doubled", "failed_boots", "faults", "own_resets"):
        if r[key]:
            why.append("%s %d" % (key.replace("_", " "), r[key]))
    if r["aborted"]:
        why.append("aborted (%s)" % r["aborted"])
    if r.get("chain") is not None and not r["chain"]["verified"]:
        why.append("the journal's MAC chain did not verify (%s)"
                   % "; ".join(f["text"] for f in r["chain"]["findings"][:3]))
    # A key press whose lamp did not change within LAMP_TIMEOUT_S can be the
    # loaded host's (the pty, the relay); more than a few is the board's.
    if len(r.get("missed", ())) > missed_limit(r.get("rounds", 0)):
        why.append("missed key presses %d" % len(r["missed"]))
    return why


def missed_limit(rounds):
    """Key presses a campaign of `rounds` may miss and still pass."""
    return max(2, rounds // 100)


def verify_chain(c):
    """The board's journal verified against the campaign's key store
    (sicbo journal --verify): figures."""
    from host_tools import keystore
    from host_tools.commands import journal as jcmd

    rep = jcmd.verification(jcmd.segments([os.path.join(c.vb.fs, "journal")]),
                            keystore.load(c.keys))
    return {"verified": rep.verified, "records": rep.records,
            "authenticated": rep.authenticated, "findings": rep.findings[:10],
            "notes": rep.notes[:10], "chains": rep.chains}


def campaign(rounds=1000, cuts=None, seed=5, heap=HEAP, log=None, chain=False):
    """Runs the campaign; returns a dict of figures (with chain: also
    "chain", the verification of the board's journal)."""
    if cuts is None:
        cuts = max(1, rounds // 4)
    folder = tempfile.mkdtemp(prefix="sicbo-powercut-")
    c = Campaign(folder, seed, heap, log, chain)
    verified = None
    t0 = time.monotonic()
    aborted = None
    play_s = 0.0
    starts = running = own_resets = 0
    try:
        try:
            c.start()
            play_s = c.run(rounds, cuts)
        except (BootFailed, RuntimeError, Missed, OSError) as e:
            aborted = "%s: %s" % (type(e).__name__, e)
            try:
                c.read_journal()
                c.check_lost()
            except (OSError, AttributeError, TypeError):
                pass
        if c.vb is not None:
            time.sleep(0.3)  # the last boot's lines
            starts = c.vb.boots - c.starts0
            running = len(c.console.running_lines()) if c.console else 0
            own_resets = c.own_resets() - c.resets0
            if chain:
                verified = verify_chain(c)
    finally:
        c.stop()
        shutil.rmtree(folder, ignore_errors=True)
    doubled = c.doubled()
    j_fault = getattr(E, "J_FAULT", None)
    faults = sorted((seq, boot, p.hex()) for seq, (t, _r, boot, p) in c.records.items()
                    if j_fault is not None and t == j_fault)
    # every start of the interpreter must reach the running table: those that
    # did not and were not seen failing (a reset of its own mid-round that
    # never came back up) are failed boots too
    unseen = max(0, starts - running - len(c.failed_boots))
    return {
        "aborted": aborted, "interpreter_starts": starts, "running_seen": running,
        "failed_boots": len(c.failed_boots) + unseen, "failed_boot_details": c.failed_boots[:10],
        "own_resets": own_resets, "faults": len(faults), "fault_records": faults[:10],
        "rounds": rounds, "round_ids": c.round, "cuts": c.cuts,
        "completed_seen": len(c.completed),
        "paid": sum(1 for v in c.completed.values() if v == "paid"),
        "voided_by_dealer": sum(1 for v in c.completed.values() if v == "void"),
        "lost": len(c.lost), "lost_rounds": c.lost[:20],
        "doubled": len(doubled) + c.conflicts, "doubled_rounds": doubled[:20],
        "seq_conflicts": c.conflicts, "records": len(c.records),
        "journal_paid": len({r for (t, r, _b, _p) in c.records.values() if t == R.J_PAYOUT}),
        "journal_voids": len({r for (t, r, _b, _p) in c.records.values() if t == R.J_VOID}),
        "voided_at_resumption": sum(1 for (t, _r, _b, p) in c.records.values()
                                    if t == R.J_VOID and p[0] == E.V_POWER),
        "boots": c.boot, "cut_where": c.cut_where,
        "rounds_per_s": rounds / play_s if play_s else 0.0,
        "seconds": time.monotonic() - t0, "seed": seed, "heap": c.heap,
        "missed": c.misses, "chain": verified,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--cuts", type=int, default=None, help="default: rounds / 4")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--heap", default=HEAP,
                    help="interpreter heap (default: the board's, %s here)"
                    % (HEAP or default_heap()))
    ap.add_argument("--chain", action="store_true",
                    help="provision the board (a MAC chain over its journal) and verify its "
                         "journal at the end (sicbo journal --verify)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    r = campaign(args.rounds, args.cuts, args.seed, args.heap,
                 log=print if args.verbose else None, chain=args.chain)
    print("powercut_vboard: %d rounds (round ids 1..%d), %d power cuts at random moments "
          "(seed %d, heap %s), %d boots" % (r["rounds"], r["round_ids"], r["cuts"], r["seed"],
                                             r["heap"], r["boots"]))
    print("  cut while: %s" % json.dumps(r["cut_where"], sort_keys=True))
    print("  rounds seen completed by the host: %d (paid %d, dealer voids %d)"
          % (r["completed_seen"], r["paid"], r["voided_by_dealer"]))
    print("  rounds settled in the journal: paid %d, void %d"
          % (r["journal_paid"], r["journal_voids"]))
    print("  rounds voided by the resumption (cut before the bell): %d"
          % r["voided_at_resumption"])
    print("  journal records read: %d" % r["records"])
    print("  key presses the board missed (lamp not changed in %d s; recovered by a power "
          "cycle, counted in the cuts): %d" % (LAMP_TIMEOUT_S, len(r["missed"])))
    for m in r["missed"]:
        print("    %s; last records (type, round): %s" % m)
    print("  boots: %d journaled (J_BOOT), %d interpreter starts, %d reached the running "
          "table" % (r["boots"], r["interpreter_starts"], r["running_seen"]))
    print("  failed boots %d" % r["failed_boots"])
    for d in r["failed_boot_details"]:
        print("    %s" % d)
    print("  resets the board made itself (machine.reset, watchdog, crash): %d" % r["own_resets"])
    print("  fault records journaled %d %s" % (r["faults"], r["fault_records"] or ""))
    print("  lost    %d %s" % (r["lost"], r["lost_rounds"] or ""))
    print("  doubled %d %s" % (r["doubled"], r["doubled_rounds"] or ""))
    if r["chain"] is not None:
        ch = r["chain"]
        print("  MAC chain: %d records, %d with a MAC, %s%s" % (
            ch["records"], ch["authenticated"], "verified" if ch["verified"] else
            "NOT VERIFIED", "".join("\n    " + f["text"] for f in ch["findings"])))
    print("  %.2f rounds/s, %.1f s in all" % (r["rounds_per_s"], r["seconds"]))
    why = failed(r)
    print("powercut_vboard: %s" % ("FAILED: " + "; ".join(why) if why else "passed"))
    return 1 if why else 0


if __name__ == "__main__":
    sys.exit(main())
