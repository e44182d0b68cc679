"""Power cuts on the virtual board (issue 5).

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
own code (sicbo.journal, sicbo.resume.Replay), and the round is finished from
the state the board resumed in.

Counted: rounds the host saw completed (the PAYING lamp off after the payout
key, the VOID lamp on after a void: the firmware journals before it lights
lamps) that the journal does not hold as paid or void after a restart (lost);
round ids with two J_ROUND, two results, two payouts, two voids, or both a
payout and a void, and sequence numbers seen with two different records
(doubled). Target: 0 and 0. Exit status 1 otherwise. Leaves no process.
"""

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from host_tools import REPO  # noqa: E402  (puts device/ on sys.path)
from host_tools.deploy import deploy  # noqa: E402
from host_tools.simclient import TableClient  # noqa: E402
from host_tools.vboard import VirtualBoard  # noqa: E402
from sicbo import events as E  # noqa: E402
from sicbo import journal  # noqa: E402
from sicbo.resume import Replay  # noqa: E402

FAST_BOARD = os.path.join(REPO, "bench", "virtual-fast.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
# 400k, not the virtual board's 220k: at 220k a power-on boot after ~16 cuts
# (when the journal first reaches its file cap and the boot rotates) ended at
# the REPL, twice (boots 17 and 18), while a soft reboot on the same journal
# booted; not yet explained (see the closing note of issue 5).
HEAP = os.environ.get("SICBO_VBOARD_HEAP", "400k")
KEYS = ("shake", "key_bell", "key_void", "key_payout", "key_confirm", "key_face_1",
        "key_face_2", "key_face_3", "key_face_4", "key_face_5", "key_face_6")
PRESS_MS = 40
AFTER_PRESS_S = 0.07  # the press, its release, and the release's debounce
LAMP_TIMEOUT_S = 3
BOOT_TIMEOUT_S = 30


class Cut(Exception):
    """The moment chosen for the power cut has come."""


class Missed(Exception):
    """A lamp did not change in time: a key press the interpreter did not see
    (a loaded host can starve it for longer than a press)."""


class Campaign:
    def __init__(self, folder, seed=5, heap=HEAP, log=None):
        self.folder = folder
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
        self.unexpected = []
        self.misses = []  # (round, step, last journal records) of each Missed

    # ---- the board ------------------------------------------------------------

    def start(self):
        self.vb = VirtualBoard(os.path.join(self.folder, "vb"), board=FAST_BOARD,
                               heap=self.heap, table_file=TABLE)
        self.vb.start()
        deploy(self.vb.port, FAST_BOARD, TABLE)
        self.client = TableClient(self.vb.control)
        self.wait_boot(1)

    def stop(self):
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.vb is not None:
            self.vb.stop()
            self.vb = None

    def read_journal(self):
        """Every record on the board's filesystem now, into self.records;
        returns the Replay of the segments as they are."""
        folder = os.path.join(self.vb.fs, "journal")
        rp = Replay()
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
        self.cuts += 1
        self.cut_where[self.step] = self.cut_where.get(self.step, 0) + 1
        self.vb.power_cut()
        for k in KEYS:  # no key held at power-on (confirm would be the recovery mode)
            self.client.release(k)
        self.vb.power_on(timeout=0)
        self.wait_boot(self.boot + 1)
        self.check_lost()

    def check_lost(self):
        ended = {}
        for _seq, (t, rid, _boot, _p) in self.records.items():
            if t == E.J_PAYOUT:
                ended.setdefault(rid, set()).add("paid")
            elif t == E.J_VOID:
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
            if t in (E.J_ROUND, E.J_RESULT, E.J_PAYOUT, E.J_VOID):
                c = per.setdefault(rid, {})
                c[t] = c.get(t, 0) + 1
        bad = []
        for rid, c in sorted(per.items()):
            if (c.get(E.J_ROUND, 0) > 1 or c.get(E.J_RESULT, 0) > 1 or c.get(E.J_PAYOUT, 0) > 1
                    or c.get(E.J_VOID, 0) > 1 or (c.get(E.J_PAYOUT) and c.get(E.J_VOID))):
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
        self.sleep(AFTER_PRESS_S)

    def play(self, void):
        """Play from the state the board is in to the end of a round."""
        c = self.client
        if self.state == E.ST_IDLE:
            self.step = "idle"
            self.due()
            c.cover_on()
            c.fasten_clasps()
            self.sleep(0.02)
            self.step = "shake"
            self.press("shake")
            self.wait_lit("PLACE_BETS")
            self.round += 1
            self.state = E.ST_OPEN
            self.step = "open"
            self.press("key_bell")
            self.wait_lit("PLACE_BETS", on=False)
            self.state = E.ST_CLOSED
        if self.state == E.ST_CLOSED:
            self.step = "closed"
            self.sleep(0.06)  # the bell rings out
            c.open_clasps()
            c.cover_off()
            self.sleep(0.02)
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
                    if len(self.misses) > max(5, rounds // 20):
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


def campaign(rounds=1000, cuts=None, seed=5, heap=HEAP, log=None):
    """Runs the campaign; returns a dict of figures."""
    if cuts is None:
        cuts = max(1, rounds // 4)
    folder = tempfile.mkdtemp(prefix="sicbo-powercut-")
    c = Campaign(folder, seed, heap, log)
    t0 = time.monotonic()
    try:
        c.start()
        play_s = c.run(rounds, cuts)
    finally:
        c.stop()
        shutil.rmtree(folder, ignore_errors=True)
    doubled = c.doubled()
    return {
        "rounds": rounds, "round_ids": c.round, "cuts": c.cuts,
        "completed_seen": len(c.completed),
        "paid": sum(1 for v in c.completed.values() if v == "paid"),
        "voided_by_dealer": sum(1 for v in c.completed.values() if v == "void"),
        "lost": len(c.lost), "lost_rounds": c.lost[:20],
        "doubled": len(doubled) + c.conflicts, "doubled_rounds": doubled[:20],
        "seq_conflicts": c.conflicts, "records": len(c.records),
        "journal_paid": len({r for (t, r, _b, _p) in c.records.values() if t == E.J_PAYOUT}),
        "journal_voids": len({r for (t, r, _b, _p) in c.records.values() if t == E.J_VOID}),
        "voided_at_resumption": sum(1 for (t, _r, _b, p) in c.records.values()
                                    if t == E.J_VOID and p[0] == E.V_POWER),
        "boots": c.boot, "cut_where": c.cut_where,
        "rounds_per_s": rounds / play_s if play_s else 0.0,
        "seconds": time.monotonic() - t0, "seed": seed, "heap": heap,
        "missed": c.misses,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--cuts", type=int, default=None, help="default: rounds / 4")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--heap", default=HEAP, help="interpreter heap (default %s)" % HEAP)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    r = campaign(args.rounds, args.cuts, args.seed, args.heap,
                 log=print if args.verbose else None)
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
    print("  lost    %d %s" % (r["lost"], r["lost_rounds"] or ""))
    print("  doubled %d %s" % (r["doubled"], r["doubled_rounds"] or ""))
    print("  %.2f rounds/s, %.1f s in all" % (r["rounds_per_s"], r["seconds"]))
    return 0 if r["lost"] == 0 and r["doubled"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
