"""The whole table on the floor, for the system tests (tests/host/
test_floor_system*.py): the real firmware on virtual boards (the 64-bit pip
port, over TLS with the table's own client certificate; the 32-bit VM at the
board's heap over the password listener), deployed by `sicbo deploy
--secrets` exactly as a technician deploys a table, played by the demo's
dealer through the simulated table; a real mosquitto (brokerkit) with the
site's certificates and ACL; the real floor service in a process of its own
(floorkit.FloorProc). The checks read the floor's store (SQLite, read-only)
and the table's journal read back from the board's filesystem with the
host's decoder (host_tools/commands/journal.py).

Everything waits for an event (a record stored, a journal record, a lamp, a
line), with a generous deadline: the machine is a busy one."""

from __future__ import annotations

import json
import os
import pathlib
import random
import socket
import threading
import time

import pytest

from brokerkit import need_mosquitto
from floorkit import SITE, FloorProc, q, wait_for
from host_tools import REPO, certs
from host_tools.broker import Broker, TlsFiles
from host_tools.commands import demo
from host_tools.commands import journal as jcmd
from host_tools.deploy import deploy
from host_tools.floor.site import FLOOR_USER, READER_ID
from host_tools.vboard import VirtualBoard
from sicbo import records as R

FAST_BOARD = os.path.join(REPO, "bench", "virtual-fast.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
BROKER_NAME = "broker.test"  # the broker certificate's name, the tables' floor.server_name
WIFI = "vboard-net"  # sim/network routes the board's connections once it has a network
WIFI_KEY = "wifi-key-of-the-test"
DEADLINE_S = 240.0  # for anything a busy machine may be slow at
FLOOR_PASSWORD = "floor-pw-of-the-test"
READER_PASSWORD = "compliance-pw-of-the-test"  # the read-only account (READER_ID)


def need_vm32(frozen=False):
    """The 32-bit VM with sim/ frozen in (make vm32; frozen: with the
    firmware frozen in too, the production image, make vm32-frozen): built
    here when MICROPYTHON_SRC names MicroPython's source (make test exports
    it); without it a test fails where the real parts are required (CI) and
    is skipped with the reason elsewhere."""
    from host_tools import vm32

    var = "SICBO_VM32_FROZEN" if frozen else "SICBO_VM32"
    exe = os.environ.get(var) or vm32.binary_path(frozen)
    if not os.environ.get(var) and os.environ.get("MICROPYTHON_SRC"):
        # (a build cached by the hash of its inputs: only checked if current)
        try:
            exe = vm32.build(frozen=frozen, log=lambda text: None)
        except vm32.BuildError as e:
            pytest.fail("the 32-bit VM did not build: %s" % e, pytrace=False)
    if os.path.exists(exe):
        return os.path.abspath(exe)
    why = "the 32-bit VM is not built (make %s MICROPYTHON_SRC=...)" % (
        "vm32-frozen" if frozen else "vm32")
    if os.environ.get("SICBO_REQUIRE_PARTS") == "1" or os.environ.get("SICBO_REQUIRE_VM32") \
            == "1" or os.environ.get("CI"):
        pytest.fail(why + " (the real parts are required here)", pytrace=False)
    pytest.skip(why)


def password_of(tid):
    return "mqtt-pw-of-%s" % tid


class SiteBroker(Broker):
    """The tests' mosquitto (host_tools/broker.py) with what a site's broker
    configuration adds (host_tools/floor/site.py): TCP_NODELAY, without
    which an acknowledgement waits behind the PUBACKs just sent for the
    peer's delayed ACK."""

    def _config(self):
        return Broker._config(self) + "set_tcp_nodelay true\n"


class Site:
    """A site: its CA and the broker's, the floor's and every table's
    certificates (host_tools/certs.py), a mosquitto with a TLS listener
    (client certificate required, its CN the username) and a password
    listener, both under the site's ACL, and the floor service on the TLS
    listener. `plain` names the tables that use the password listener."""

    def __init__(self, folder, tables, plain=()):
        self.folder = str(folder)
        self.certs = os.path.join(self.folder, "site")
        site = certs.make_site(self.certs, SITE, [BROKER_NAME, "127.0.0.1"])
        self.site_files = site
        # The floor service, the site's read-only account and every table.
        self.ids = {cn: certs.make_client(self.certs, cn)
                    for cn in [FLOOR_USER, READER_ID] + list(tables)}
        self.plain = tuple(plain)
        passwords = {FLOOR_USER: FLOOR_PASSWORD, READER_ID: READER_PASSWORD}
        passwords.update({t: password_of(t) for t in plain})
        acl = certs.acl(SITE)
        need_mosquitto()
        self.broker = SiteBroker(os.path.join(self.folder, "mq"),
                                 tls=TlsFiles(site.ca_pem, site.broker_pem, site.broker_key),
                                 acl=acl, passwords=passwords, plain_acl=True).start()
        self.floor = None

    def start_floor(self):
        f = self.ids["floor"]
        self.floor = FloorProc(pathlib.Path(self.folder), self.broker.tls_port,
                               db=os.path.join(self.folder, "floor.db"),
                               tls=(f.ca_pem, f.cert_pem, f.key_pem)).start()
        return self.floor

    @property
    def db(self):
        return os.path.join(self.folder, "floor.db")

    def stop(self):
        if self.floor is not None:
            self.floor.stop()
        self.broker.stop()

    # ---- the store -------------------------------------------------------------------

    def stored(self, tid):
        """[(seq, raw bytes, checked)] the floor holds of a table, by seq."""
        return [(s, bytes(r), c) for s, r, c in q(
            self.db, "SELECT seq, raw, checked FROM records WHERE table_id=? ORDER BY seq", tid)]

    def floor_table(self, tid):
        """The floor's row of a table (tables), as a dict, or {}."""
        rows = q(self.db, "SELECT * FROM tables WHERE table_id=?", tid)
        if not rows:
            return {}
        cols = [r[1] for r in q(self.db, "PRAGMA table_info(tables)")]
        return dict(zip(cols, rows[0], strict=True))

    def acked(self, tid):
        return self.floor_table(tid).get("acked", 0)


class Dealer(demo.Dealer):
    """The demo's dealer at the fast board's pace: each key read pressed by
    the board for 60 ms (it debounces 5 ms), no pause between steps, no incidents. `hands`:
    held by the test while it cuts the power, so that no key is pressed
    while the board boots (a confirm key held at power-on is the recovery
    mode)."""

    press_ms = 60

    def __init__(self, *a, **kw):
        demo.Dealer.__init__(self, *a, **kw)
        self.hands = threading.Lock()

    def press(self, key):
        with self.hands:
            demo.Dealer.press(self, key)


class Table:
    """One virtual table on the site: its board file (bench/virtual-fast.json
    with a floor section: TLS with its certificate, or its password), its
    secrets folder, a VirtualBoard whose network leads to `broker` (the
    site's listener, or a proxy in front of it), deployed with sicbo deploy
    --secrets, its console held and its rounds played by the demo's dealer."""

    def __init__(self, site, tid, folder, tls=True, command=None, heap=None, broker=None,
                 seed=1):
        self.site = site
        self.tid = tid
        self.tls = tls
        self.folder = str(folder)
        os.makedirs(self.folder, exist_ok=True)
        with open(FAST_BOARD, encoding="utf-8") as f:
            board = json.load(f)
        board["floor"] = {"site": SITE, "table": tid, "broker": "127.0.0.1",
                          "port": 8883 if tls else 1883, "tls": tls,
                          "server_name": BROKER_NAME, "wifi": WIFI}
        self.board_path = os.path.join(self.folder, "board-%s.json" % tid)
        with open(self.board_path, "w", encoding="utf-8") as f:
            json.dump(board, f, indent=1)
        self.secrets = os.path.join(self.folder, "secrets-%s" % tid)
        os.makedirs(self.secrets, exist_ok=True)
        if tls:
            c = site.ids[tid]
            for name, path in (("ca.der", c.ca_der), ("cert.der", c.cert_der),
                               ("key.der", c.key_der)):
                with open(path, "rb") as f, open(os.path.join(self.secrets, name), "wb") as g:
                    g.write(f.read())
        else:
            with open(os.path.join(self.secrets, "password"), "w") as f:
                f.write(password_of(tid) + "\n")
        with open(os.path.join(self.secrets, "wifi"), "w") as f:
            f.write(WIFI_KEY + "\n")
        if broker is None:
            broker = ("127.0.0.1", site.broker.tls_port if tls else site.broker.port)
        self.vb = VirtualBoard(os.path.join(self.folder, "vb"), board=self.board_path,
                               broker=broker, table_file=TABLE, command=command, heap=heap)
        self.lines = []  # what the console and the dealer said, for a failure's message
        self.rng = random.Random(seed)
        self.console = None
        self.client = None
        self.dealer = None
        self.deploy_log = []
        self.seen = {}  # seq -> record bytes: every record read back from the board
        self._names = None

    def out(self, text):
        self.lines.append(text)

    def tail(self, n=40):
        return "\n".join(self.lines[-n:])

    # ---- life ------------------------------------------------------------------------

    def start(self):
        from host_tools import boardstate
        from host_tools.rules import load_table

        vb = self.vb
        vb.start(timeout=0)
        cfg, table = load_table(TABLE)
        self._names = list(cfg.lamp_order)
        self.console = demo.BoardConsole(vb.port, self.out, table)
        self.console.open()
        mark = self.console.mark()
        deadline = time.monotonic() + boardstate.BOOT_TIMEOUT_S
        while time.monotonic() < deadline and self.console.settled_since(mark) is None \
                and not vb.wait_ready(0.05):
            pass
        self.console.close()
        report = deploy(vb.port, self.board_path, TABLE, reset=False, secrets=self.secrets,
                        log=self.deploy_log.append)
        self.deploy_log.append(report.summary())
        self.client = demo._patient_client(vb.control, 30)
        self.console.open()
        self.reset()
        self.dealer = Dealer(self.client, self.console, self._names, 0, self.rng, self.out, 0,
                             [n for n in self._names if n], False)
        return self

    def reset(self):
        """The board reset with its clock set, typed on the console (as the
        demo does), until it says it runs."""
        from host_tools import boardstate

        frames = self.client.lamps()["frames"]
        mark = self.console.mark()
        self.console.type(boardstate.INTERRUPT + boardstate.reset_code(boardstate.clock_tuple()))
        self.wait_running(mark)
        self.client.wait_for(lambda t: t.lamps()["frames"] >= frames + 2, timeout=DEADLINE_S)

    def wait_running(self, mark):
        c = self.console
        if not c.wait(lambda: c.settled_since(mark) is not None, DEADLINE_S):
            raise AssertionError("%s: no start-up line within %.0f s:\n%s"
                                 % (self.tid, DEADLINE_S, self.tail()))
        s = c.settled_since(mark)
        assert s.running, "%s: %s\n%s" % (self.tid, s.describe(), self.tail())
        return s

    def power_cut(self):
        """Cut the power now (no key pressed meanwhile), power on with every
        key released, and wait for the running table's start-up line.
        Returns (before, after, last): the host's clock (time.time(), the
        floor store's `received` clock) just before the cut was asked for
        and once it was done, and the last sequence number the journal held
        when the power went."""
        with self.dealer.hands:
            before = time.time()
            self.vb.power_cut()
            after = time.time()
            last = self.last_seq()
            table = self.vb.table
            for key in table.handle({"op": "signals"})["inputs"]:
                if key.startswith("key_") or key in ("shake", "supervisor"):
                    table.handle({"op": "release", "key": key})
            mark = self.console.mark()
            c = self.console
            opens = c.opens
            # The console takes the new port before the board starts: what
            # a board prints with nobody attached is lost, its start-up
            # line with it (under load the reader can be slower than a boot).
            self.vb.power_on(timeout=0, before_boot=lambda: self._reopened(opens))
            self.wait_running(mark)
            return before, after, last

    def _reopened(self, opens):
        c = self.console
        if not c.wait(lambda: c.opens > opens, DEADLINE_S):
            raise AssertionError("%s: the console did not take the port again within %.0f s"
                                 % (self.tid, DEADLINE_S))

    def stop(self):
        if self.console is not None:
            self.console.close()
        if self.client is not None:
            self.client.close()
        self.vb.stop()

    # ---- playing ---------------------------------------------------------------------

    def play(self, n=1):
        """Play n more whole rounds (a round the board resumed is finished
        first, as a dealer would)."""
        d = self.dealer
        d.play(d.played + n, lambda s: "%s cannot play: %s" % (self.tid, s))

    def player(self):
        """A context manager that plays rounds in a thread until it exits (at
        the end of a round); `rounds` counts them; an error of the dealer is
        raised at the exit."""
        return _Player(self)

    def rounds_paid(self):
        """Round ids the board's journal holds as paid (J_PAYOUT)."""
        return {r.round for _n, r, code in self.reading().records
                if code == 0 and r.type == R.J_PAYOUT}

    # ---- the board's journal -----------------------------------------------------------

    def reading(self):
        """The board's journal read back from its filesystem with the host's
        decoder (sicbo journal's Reading); every record also kept in
        self.seen (seq -> bytes), so that records rotated away later are
        still compared."""
        folder = os.path.join(self.vb.fs, "journal")
        segs = [(n, d) for n, d in _segments(folder)]
        from host_tools.rules import load_table

        rd = jcmd.Reading(segs, load_table(TABLE)[1])
        data = dict(segs)
        rd.raw = {}
        for name, rec, code in rd.records:
            if code < 0:
                continue
            raw = bytes(data[name][rec.offset:rec.offset + rec.length])
            rd.raw[rec.seq] = raw
            self.seen.setdefault(rec.seq, raw)
        return rd

    def last_seq(self):
        rd = self.reading()
        return max(rd.raw) if rd.raw else 0

    def links(self, since=0):
        """[(seq, event, fault, detail)] of the J_LINK records after seq
        `since`; for an `up`, detail is the sequence number the floor had
        acknowledged (P_LINK_SEQ)."""
        out = []
        for _n, r, code in self.reading().records:
            if code == 0 and r.type == R.J_LINK and r.seq > since:
                if r.p(R.P_LINK) == R.LINK_UP:
                    detail = int.from_bytes(r.payload[R.P_LINK_SEQ:R.P_LINK_SEQ + 4], "little")
                else:
                    detail = r.p(R.P_LINK_DETAIL) | (r.p(R.P_LINK_DETAIL + 1) << 8)
                out.append((r.seq, r.p(R.P_LINK), r.p(R.P_LINK_FAULT), detail))
        return out

    def cursor(self):
        """The delivery cursor the board saved (journal/acked), or 0."""
        try:
            with open(os.path.join(self.vb.fs, "journal", "acked")) as f:
                return int(f.read().strip() or 0)
        except (OSError, ValueError):
            return 0


def _segments(folder):
    names = sorted(n for n in os.listdir(folder) if n.startswith("j") and n.endswith(".log"))
    out = []
    for n in names:
        try:
            with open(os.path.join(folder, n), "rb") as f:
                out.append((n, f.read()))
        except OSError:
            pass  # rotated away while listed
    return out


class _Player:
    def __init__(self, table):
        self.t = table
        self.rounds = 0
        self.error = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name="dealer-" + table.tid)

    def _run(self):
        try:
            while not self._stop.is_set():
                self.t.play(1)
                self.rounds += 1
        except BaseException as e:  # noqa: BLE001 - raised in the test's thread at the exit
            self.error = e

    def wait_rounds(self, n, what=None):
        """Until n more rounds have been played (a dealer's failure raised)."""
        goal = self.rounds + n
        wait_for(lambda: self.rounds >= goal or self.error is not None,
                 what or "%s: %d rounds" % (self.t.tid, n), timeout=DEADLINE_S + 20 * n)
        self.check()

    def check(self):
        if self.error is not None:
            raise AssertionError("%s: the dealer stopped: %s\n%s"
                                 % (self.t.tid, self.error, self.t.tail()))

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(DEADLINE_S)
        if exc[0] is None:
            assert not self._thread.is_alive(), "%s: the dealer did not stop" % self.t.tid
            self.check()


class SlowDownlink:
    """The board's network relay's tap (host_tools/simnet.py), which holds
    every chunk from the broker to the board `delay` seconds before the
    relay forwards it: an acknowledgement the floor published at t reaches
    the board after t + delay, whatever it is (TLS hides which chunk it
    is)."""

    def __init__(self, delay):
        self.delay = delay

    def __call__(self, number, way, data, held):
        if way == "down" and not held:
            time.sleep(self.delay)


# ---- the checks --------------------------------------------------------------------------

def wait_delivered(site, table, what="every record stored and acknowledged"):
    """Until the floor has stored and acknowledged the board's last record,
    and the board's cursor says so too."""
    def done():
        last = table.last_seq()
        return last and site.acked(table.tid) >= last and table.cursor() >= last
    try:
        wait_for(done, "%s: %s" % (table.tid, what), timeout=DEADLINE_S,
                 alive=site.floor.dead if site.floor is not None else None)
    except AssertionError as e:
        raise AssertionError("%s (journal up to %d, the floor acknowledged %s, the board's "
                             "cursor %d)\n%s" % (e, table.last_seq(), site.acked(table.tid),
                                                  table.cursor(), table.tail())) from None


def assert_store_matches(site, table):
    """The floor's store holds every record of the table's journal (every one
    read back from the board during the test) exactly once, with its bytes,
    in sequence order, replayed by the floor (none pending, late or
    damaged), with no gap but those the board's own journal has."""
    rd = table.reading()
    stored = site.stored(table.tid)
    seqs = [s for s, _r, _c in stored]
    assert len(seqs) == len(set(seqs))
    by_seq = {s: r for s, r, _c in stored}
    missing = sorted(s for s in table.seen if s not in by_seq)
    assert not missing, "%s: journal records not in the floor's store: %s" % (
        table.tid, missing[:20])
    differ = sorted(s for s, raw in table.seen.items() if by_seq[s] != raw)
    assert not differ, "%s: stored with other bytes: %s" % (table.tid, differ[:20])
    last = max(table.seen)
    # No gap in the store that the board's journal does not also have: the
    # journal holds every number from its oldest record to its last.
    held = sorted(rd.raw)
    board_gaps = set(range(held[0], held[-1] + 1)) - set(held)
    assert not board_gaps, "%s: the board's journal itself misses %s" % (
        table.tid, sorted(board_gaps)[:20])
    assert seqs == list(range(1, last + 1)), "%s: the store's numbers are not 1..%d: %s" % (
        table.tid, last, _gaps(seqs))
    not_applied = [(s, c) for s, _r, c in stored if c != 0]
    assert not not_applied, "%s: records the floor did not replay in order: %s" % (
        table.tid, not_applied[:20])
    row = site.floor_table(table.tid)
    for key in ("conflicts", "damaged", "rejected", "lost", "late", "open_gaps"):
        assert row[key] == 0, "%s: the floor counts %s %s" % (table.tid, key, row[key])
    return rd


def _gaps(seqs):
    out = []
    for a, b in zip(seqs, seqs[1:], strict=False):
        if b != a + 1:
            out.append((a + 1, b - 1))
    return out[:20]


def assert_one_down_per_outage(table, outages, since=0):
    """The J_LINK records after `since`: one `down` per outage (each given
    as (first seq, last seq) of the journal while it lasted: the down falls
    in it), none elsewhere, and an `up` after each."""
    links = table.links(since)
    downs = [x for x in links if x[1] == R.LINK_DOWN]
    for first, last in outages:
        inside = [d for d in downs if first < d[0] <= last]
        assert len(inside) == 1, "%s: %d J_LINK down records in the outage (seq %d..%d): %s" \
            % (table.tid, len(inside), first, last, links)
        assert any(x[1] == R.LINK_UP and x[0] > inside[0][0] for x in links), links
    assert len(downs) == len(outages), "%s: J_LINK down records %s for %d outages" % (
        table.tid, downs, len(outages))
    return links


# ---- a broker that misbehaves --------------------------------------------------------------

def packets(buf):
    """Split whole MQTT packets off the front of buf (a bytearray): yields
    each packet's bytes; what is left is an unfinished one."""
    while len(buf) >= 2:
        n, shift, i = 0, 0, 1
        while i < len(buf) and buf[i] & 0x80 and i < 5:
            n |= (buf[i] & 0x7F) << shift
            shift += 7
            i += 1
        if i >= len(buf):
            return
        n |= buf[i] << shift
        i += 1
        if len(buf) < i + n:
            return
        pkt = bytes(buf[:i + n])
        del buf[:i + n]
        yield pkt


def mqtt_packet(first, body):
    n = len(body)
    head = bytearray([first])
    while True:
        b = n & 0x7F
        n >>= 7
        head.append(b | (0x80 if n else 0))
        if not n:
            return bytes(head) + body


class FaultProxy:
    """A broker that misbehaves once, on loopback: it passes the board's
    connection through to the real broker packet by packet (plain MQTT),
    and when armed (arm(fault)) it sends the board, right after the next
    journal PUBLISH the board sent, one of FAULTS, then goes on as the
    broker (or, for "truncated", ends the connection there). `fired` counts
    the faults sent; `journal` the journal publishes seen (board -> broker)."""

    FAULTS = {
        # bytes no MQTT packet starts with
        "garbage": b"\xff\xfe\xfd\xfc\xfb",
        # a PUBLISH that says it is 100,000 bytes long (the board takes 160)
        "oversized": b"\x30\xa0\x8d\x06" + b"\x00\x05sicbo" + b"x" * 64,
        # a PUBACK cut after its first byte of packet id, then the connection ends
        "truncated": b"\x40\x02\x00",
    }

    def __init__(self, target_port, site, tid):
        self.target = ("127.0.0.1", target_port)
        self.ack_topic = ("sicbo/%s/%s/ack" % (site, tid)).encode()
        self.armed = None
        self.fired = []
        self.journal = 0
        self.connections = 0
        self.lock = threading.Lock()
        self.ls = socket.socket()
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(8)
        self.port = self.ls.getsockname()[1]
        self._stop = False
        threading.Thread(target=self._serve, daemon=True, name="fault-proxy").start()

    def arm(self, fault, value=None):
        """The next fault to send: a name of FAULTS, or "ack" (a publish on
        the table's ack topic with `value`, beyond what it sent)."""
        with self.lock:
            self.armed = (fault, value)

    def _serve(self):
        while not self._stop:
            try:
                a, _ = self.ls.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(self.target, timeout=30)
            except OSError:
                a.close()
                continue
            self.connections += 1
            pair = {"closed": False, "wlock": threading.Lock()}
            threading.Thread(target=self._up, args=(a, b, pair), daemon=True).start()
            threading.Thread(target=self._down, args=(b, a, pair), daemon=True).start()

    def _up(self, board, broker, pair):
        buf = bytearray()
        try:
            while True:
                data = board.recv(65536)
                if not data:
                    break
                buf += data
                for pkt in packets(buf):
                    broker.sendall(pkt)
                    if pkt[0] >> 4 == 3 and b"/journal" in pkt[:64]:
                        self.journal += 1
                        self._fire(board, pair)
        except OSError:
            pass
        _close(board, broker)

    def _fire(self, board, pair):
        with self.lock:
            armed, self.armed = self.armed, None
        if armed is None:
            return
        fault, value = armed
        if fault == "ack":
            body = len(self.ack_topic).to_bytes(2, "big") + self.ack_topic + str(value).encode()
            data = mqtt_packet(0x30, body)  # QoS 0: nothing for the board to acknowledge
        else:
            data = self.FAULTS[fault]
        with pair["wlock"]:
            board.sendall(data)
            self.fired.append(fault)
            if fault == "truncated":
                pair["closed"] = True
                board.shutdown(socket.SHUT_RDWR)

    def _down(self, broker, board, pair):
        buf = bytearray()
        try:
            while True:
                data = broker.recv(65536)
                if not data:
                    break
                buf += data
                for pkt in packets(buf):
                    with pair["wlock"]:
                        if pair["closed"]:
                            return
                        board.sendall(pkt)
        except OSError:
            pass
        _close(board, broker)

    def stop(self):
        self._stop = True
        self.ls.close()


def _close(*socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            s.close()
        except OSError:
            pass
