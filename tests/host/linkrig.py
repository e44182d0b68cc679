"""The host side of the link tests: a stand-in for the floor service (a paho
subscriber that stores each table's records once and acknowledges the
highest sequence number up to which it holds every one), the link driver run
on CPython or a MicroPython port (tests/host/link_driver.py), a TCP relay
that can go silent, and the site's broker with TLS.

The floor stand-in follows docs/floor.md's floor side only as far as the
table's tests need; the floor service itself is host_tools/floor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from host_tools import REPO, certs
from host_tools.broker import TlsFiles

DRIVER = os.path.join(REPO, "tests", "host", "link_driver.py")
MICROPYTHON_64 = os.path.join(REPO, ".venv", "bin", "micropython")
VM32 = os.environ.get("SICBO_VM32") or os.path.join(REPO, "build", "vm32", "sim", "micropython")
SITE = "S1"


def u32(b: bytes, o: int) -> int:
    return int.from_bytes(b[o:o + 4], "little")


def split_records(data: bytes) -> list[tuple[int, bytes]]:
    out = []
    o = 0
    while o + 8 <= len(data):
        n = data[o + 2] | (data[o + 3] << 8)
        if n < 28 or o + n > len(data):
            raise ValueError("not whole records at %d" % o)
        out.append((u32(data, o + 4), data[o:o + n]))
        o += n
    return out


def wait_for(pred, timeout=60.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError("timed out waiting for %s" % what)


class Floor:
    """Stores every table's records once; acknowledges (retained, QoS 1)
    after every journal message, duplicates included, so that a table whose
    saved cursor lags catches up. `messages` keeps every publish seen, with
    its DUP flag; `stored[table]` maps seq -> record bytes; `dups` counts
    records received again. ack=False: a floor that never acknowledges."""

    def __init__(self, port: int, site: str = SITE, ack: bool = True, tls: dict | None = None,
                 user: str | None = None, password: str | None = None,
                 client_id: str = "floor-test") -> None:
        self.site = site
        self.ack = ack
        self.lock = threading.Lock()
        self.stored: dict[str, dict[int, bytes]] = {}
        self.messages: list[tuple[str, int, bool, bytes]] = []  # topic, mid, dup, payload
        self.dups = 0
        self.acked: dict[str, int] = {}
        self.c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                             clean_session=False)
        if tls:
            self.c.tls_set(ca_certs=tls["ca"], certfile=tls["cert"], keyfile=tls["key"])
        if user:
            self.c.username_pw_set(user, password)
        self.c.on_connect = self._on_connect
        self.c.on_message = self._on_message
        self.connected = threading.Event()
        self.c.reconnect_delay_set(0.05, 0.5)
        self.c.connect("127.0.0.1", port, keepalive=10)
        self.c.loop_start()
        wait_for(self.connected.is_set, 60, "the floor stand-in to connect")

    def _on_connect(self, c, userdata, flags, rc, props=None):
        c.subscribe("sicbo/%s/+/journal" % self.site, qos=1)
        c.subscribe("sicbo/%s/+/status" % self.site, qos=1)
        self.connected.set()

    def _on_message(self, c, userdata, msg):
        parts = msg.topic.split("/")
        with self.lock:
            self.messages.append((msg.topic, msg.mid, bool(msg.dup), bytes(msg.payload)))
        if len(parts) != 4 or parts[3] != "journal":
            return
        table = parts[2]
        with self.lock:
            got = self.stored.setdefault(table, {})
            for seq, rec in split_records(bytes(msg.payload)):
                if seq in got:
                    self.dups += 1
                got.setdefault(seq, rec)
            n = self.acked.get(table, 0)
            while n + 1 in got:
                n += 1
            self.acked[table] = n
        if self.ack:
            c.publish("sicbo/%s/%s/ack" % (self.site, table), str(n), qos=1, retain=True)

    def seqs(self, table: str) -> list[int]:
        with self.lock:
            return sorted(self.stored.get(table, {}))

    def journal_messages(self, table: str) -> list[tuple[str, int, bool, bytes]]:
        with self.lock:
            return [m for m in self.messages if m[0] == "sicbo/%s/%s/journal" % (self.site, table)]

    def status(self, table: str) -> list[bytes]:
        with self.lock:
            return [m[3] for m in self.messages if m[0] == "sicbo/%s/%s/status" % (self.site,
                                                                                    table)]

    def stop(self) -> None:
        self.c.loop_stop()
        self.c.disconnect()


def interpreters() -> list[str]:
    """The interpreters the link runs on in these tests: CPython, the 64-bit
    pip unix port and, when built (make vm32), the 32-bit VM."""
    return ["cpython", "mp64", "vm32"]


def interpreter_command(which: str) -> list[str]:
    if which == "cpython":
        return [sys.executable]
    if which == "mp64":
        return [MICROPYTHON_64, "-X", "heapsize=2M"]
    if which == "vm32":
        if not os.path.exists(VM32):
            why = "the 32-bit VM is not built (make vm32 MICROPYTHON_SRC=...)"
            if os.environ.get("SICBO_REQUIRE_VM32") == "1" or os.environ.get("CI"):
                pytest.fail(why, pytrace=False)
            pytest.skip(why)
        return [VM32, "-X", "heapsize=1M"]
    raise ValueError(which)


class Driver:
    """The link driver in a subprocess; `events` collects its JSON lines."""

    def __init__(self, which: str, folder: str, **cfg) -> None:
        os.makedirs(folder, exist_ok=True)
        cfg.setdefault("repo", REPO)
        cfg.setdefault("host", "127.0.0.1")
        cfg.setdefault("site", SITE)
        cfg.setdefault("table", "T01")
        cfg.setdefault("cursor_path", os.path.join(folder, "cursor"))
        self.cfg = cfg
        path = os.path.join(folder, "link-%s.json" % which)
        with open(path, "w") as f:
            json.dump(cfg, f)
        self.events: list[dict] = []
        self.err = b""
        self.proc = subprocess.Popen(interpreter_command(which) + [DRIVER, path],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=folder)
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()
        self._e = threading.Thread(target=self._read_err, daemon=True)
        self._e.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.events.append(json.loads(line))
            except ValueError:
                self.events.append({"ev": "text", "text": line.decode("latin-1")})

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.err = self.proc.stderr.read()

    def kinds(self, kind: str) -> list[dict]:
        return [e for e in list(self.events) if e.get("ev") == kind]

    def wait(self, timeout: float = 120) -> dict:
        """The end's stats (fails with the driver's output if it did not end)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self._t.join(10)
        self._e.join(10)
        end = self.kinds("end")
        assert end, "the link driver did not finish: %r %s" % (
            self.events[-5:], self.err.decode("latin-1")[-2000:])
        return end[-1]["stats"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


class Sniffer:
    """Parses the MQTT packets a NetRelay carries, per connection: `packets`
    is a list of (connection, direction, type, flags, packet id or 0, held)
    of every packet (the id of a PUBLISH with QoS 1 and of a PUBACK); held:
    read while the relay held the link down (never delivered if it was cut)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.buf: dict[tuple[int, str], bytearray] = {}
        self.packets: list[tuple[int, str, int, int, int, bool]] = []

    def __call__(self, number: int, way: str, data: bytes, held: bool) -> None:
        with self.lock:
            b = self.buf.setdefault((number, way), bytearray())
            b += data
            while len(b) >= 2:
                n = 0
                shift = 0
                i = 1
                while i < len(b) and b[i] & 0x80:
                    n |= (b[i] & 0x7F) << shift
                    shift += 7
                    i += 1
                if i >= len(b):
                    return
                n |= b[i] << shift
                i += 1
                if len(b) < i + n:
                    return
                kind, flags = b[0] >> 4, b[0] & 15
                pid = 0
                if kind == 3 and flags & 6:
                    tl = (b[i] << 8) | b[i + 1]
                    pid = (b[i + 2 + tl] << 8) | b[i + 3 + tl]
                elif kind == 4:
                    pid = (b[i] << 8) | b[i + 1]
                self.packets.append((number, way, kind, flags, pid, held))
                del b[:i + n]

    def of(self, kind: int, way: str = "up") -> list[tuple[int, str, int, int, int, bool]]:
        with self.lock:
            return [p for p in self.packets if p[2] == kind and p[1] == way]


def site_tls(folder: str, hostnames=("broker.test", "127.0.0.1")) -> tuple[TlsFiles, dict]:
    """A site's certificates (host_tools/certs.py) in folder: the broker's
    TlsFiles and the paths of each identity made (T01, T02, floor)."""
    site = certs.make_site(folder, SITE, list(hostnames))
    ids = {cn: certs.make_client(folder, cn) for cn in ("T01", "T02", "floor")}
    return TlsFiles(site.ca_pem, site.broker_pem, site.broker_key), {"site": site, **ids}


def table_tls(ids: dict, which: str, cn: str = "T01", hostname: str = "broker.test") -> dict:
    c = ids[cn]
    if which == "cpython":
        return {"ca": c.ca_pem, "cert": c.cert_pem, "key": c.key_pem, "hostname": hostname}
    return {"ca": c.ca_der, "cert": c.cert_der, "key": c.key_der, "hostname": hostname}
