"""A `sicbo demo` run as the tests see it: the process, its lines as they
come, and its board's journal read back and checked (no round lost, none
doubled, nothing damaged but a record torn by a stop)."""

import os
import re
import signal
import subprocess
import sys
import threading
import time

from host_tools import REPO
from host_tools.commands.journal import Reading, segments
from host_tools.rules import load_table
from sicbo import journal
from sicbo import records as R

SICBO = [sys.executable, "-m", "host_tools"]
ROUND_DEADLINE = 120  # s for a whole round, or a moment with an incident, to come


class Demo:
    """One `sicbo demo` process, its lines read as they come."""

    def __init__(self, folder, seed, *extra):
        self.proc = subprocess.Popen(
            SICBO + ["demo", "--folder", folder, "--pace", "0.05", "--seed", str(seed),
                     "--incidents", "0.6", *extra],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait(self, pattern, since=0, timeout=ROUND_DEADLINE):
        """The index of the first line from `since` on matching pattern."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i in range(since, len(self.lines)):
                    if rx.search(self.lines[i]):
                        return i
                since = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.thread.is_alive()):
                    raise AssertionError("no line %r within %d s (exit %s); last lines:\n%s"
                                         % (pattern, timeout, self.proc.poll(),
                                            "\n".join(self.lines[-40:])))
                self.cond.wait(min(left, 0.5))

    def stop(self):
        """Ctrl-C; the exit status."""
        self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            # where it is stuck: the CLI dumps its threads' stacks on SIGUSR1
            # (the main thread's last); then it is killed
            self.proc.send_signal(signal.SIGUSR1)
            try:
                self.wait(r"^Current thread ", timeout=10)
            except AssertionError:
                pass  # no stacks came: the lines so far are said all the same
            self.proc.kill()
            self.thread.join(10)
            raise AssertionError("the demo did not stop within 60 s of its Ctrl-C; last "
                                 "lines:\n%s" % "\n".join(self.lines[-60:])) from None
        self.thread.join(10)
        return code

    def text(self):
        with self.cond:
            return "\n".join(self.lines)


def read_journal(folder):
    _cfg, table = load_table(None)
    jdir = os.path.join(folder, "fs", "journal")
    segs = segments([jdir])
    return Reading(segs, table), [r for _n, data in segs for r in journal.records(data)]


def check_journal(folder, ended):
    """No round lost (each the demo saw end is in the journal, ended the
    same way), none doubled (a round id started once, one result at most),
    nothing damaged (a record torn by the stop is all there may be).
    Returns the number of rounds with a result."""
    rd, recs = read_journal(folder)
    assert [d for d in rd.damage if d["kind"] != "torn"] == [], rd.damage
    starts = [r.round for r in recs if r.type == R.J_ROUND]
    assert starts == list(range(1, len(starts) + 1)), starts  # none lost, none twice
    results = [r.round for r in recs if r.type == R.J_RESULT]
    assert len(results) == len(set(results)), results
    rounds = {r.round: r for r in rd.recall.rounds}
    for rid, how in ended.items():
        assert rid in rounds, (rid, how, sorted(rounds))
        assert rounds[rid].status == how, (rid, how, rounds[rid].status)
    return len(set(results))


