"""The floor service for the tests: a real mosquitto (brokerkit), the
service as its own process (`python -m host_tools floor ...`, so that a
kill -9 is a crash), simulated tables (host_tools/floor/simtables.py), and
checks of the store against the tables' own journals."""

import os
import sqlite3
import subprocess
import sys
import threading
import time

from brokerkit import start_broker
from host_tools import REPO
from host_tools.floor import site
from host_tools.floor.simtables import SimTables, password_auth

SITE = "site1"
FLOOR_PASSWORD = "floor-secret"
DEADLINE_S = 120.0  # generous: CI is a busy machine


def wait_for(cond, what, timeout=DEADLINE_S, alive=None):
    """Poll cond() until true; fail naming what was awaited (and why, when a
    process it needs has died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        if alive is not None:
            why = alive()
            if why:
                raise AssertionError("waiting for %s: %s" % (what, why))
        time.sleep(0.02)
    if cond():
        return
    raise AssertionError("%s: not within %.0f s" % (what, timeout))


def broker_for(tmp_path, tables, acl=True):
    """A broker with the site's ACL on its plain listener and a password for
    the floor and for every table (username: its id)."""
    passwords = {site.FLOOR_USER: FLOOR_PASSWORD}
    passwords.update({t: "pw-" + t for t in tables})
    b = start_broker(tmp_path / "mq", acl=site.acl_text(SITE) if acl else None,
                     passwords=passwords, plain_acl=acl)
    return b, passwords


class FloorProc:
    """The service in a process of its own."""

    def __init__(self, tmp_path, port, db=None, extra=(), tls=None):
        # tls: (ca, cert, key) PEM paths: the TLS listener, the floor's
        # certificate (CN floor); else the floor's password.
        self.db = str(db or tmp_path / "floor.db")
        self.port = port
        self.pwfile = str(tmp_path / "floor.pw")
        with open(self.pwfile, "w") as f:
            f.write(FLOOR_PASSWORD + "\n")
        self.log_path = str(tmp_path / "floor.log")
        self.auth = (["--cafile", tls[0], "--cert", tls[1], "--key", tls[2]] if tls else
                     ["--username", site.FLOOR_USER, "--password-file", self.pwfile])
        self.extra = list(extra)
        self.proc = None
        self.starts = 0

    def start(self):
        with open(self.log_path, "ab") as log:
            start = log.tell()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "host_tools", "floor", "--broker",
                 "127.0.0.1:%d" % self.port, "--db", self.db, "--site", SITE] + self.auth
                + self.extra,
                cwd=REPO, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        self.starts += 1
        wait_for(lambda: "subscribed" in self.log()[start:], "the floor service subscribed",
                 alive=self.dead)
        return self

    def log(self):
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def dead(self):
        if self.proc is not None and self.proc.poll() is not None:
            return "the floor service exited (%s): %s" % (self.proc.returncode,
                                                          self.log()[-2000:])
        return None

    def kill(self):
        """kill -9: a crash of the service."""
        self.proc.kill()
        self.proc.wait(60)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(60)


def sim_tables(port, passwords, ids, **kw):
    kw.setdefault("resend_s", 3.0)
    return SimTables("127.0.0.1", port, SITE, ids, auth=password_auth(passwords), **kw)


def db(path):
    conn = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=30)
    return conn


def q(path, sql, *args):
    if not os.path.exists(path):
        return []
    conn = db(path)
    try:
        return conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError:
        return []  # the service has not made its schema yet
    finally:
        conn.close()


def stored_count(path):
    rows = q(path, "SELECT COUNT(*) FROM records")
    return rows[0][0] if rows else 0


def assert_every_record_once(path, *sims):
    """The store holds every record of every table's journal exactly once,
    with its bytes, in sequence order, and nothing else."""
    tables = [t for sim in sims for t in sim.tables]
    for t in tables:
        sim = t.owner
        rows = q(path, "SELECT seq, raw FROM records WHERE table_id=? ORDER BY seq", t.id)
        with sim.lock:
            want = list(t.journal.records)
        assert [s for s, _r in rows] == list(range(1, len(want) + 1)), t.id
        assert [bytes(r) for _s, r in rows] == want, t.id
    ids = {t.id for t in tables}
    assert {r[0] for r in q(path, "SELECT DISTINCT table_id FROM records")} == ids


class Player:
    """Plays a round on every table every `every` seconds, in a thread, until
    stopped: a stream that goes on while the tests break things."""

    def __init__(self, sim, every=0.05):
        self.sim = sim
        self.every = every
        self.rounds = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(self.every):
            self.sim.play(1)
            self.rounds += 1

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(30)
