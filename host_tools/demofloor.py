"""The floor beside the demo's table (`sicbo demo --floor`, `make run`; `sicbo
demo --broker HOST:PORT` for a floor of several tables).

With `--floor` the demo starts, in its run folder's `floor/`, a site (its CA,
the broker's, the floor service's and the table's certificates, made once:
`site/`), a mosquitto on free loopback ports with the site's ACL (its
persistence in `mq/`), and the floor service storing into `floor.db`; then
the table is deployed with its secrets (the site CA and its own certificate
and key, DER, and the virtual board's Wi-Fi key) and a line is shown per
round the floor has stored. Without mosquitto the demo says so in one line
and plays without a floor.

    site = DemoSite(folder)            # the certificates, made if missing
    floor = LocalFloor(folder, site).start()    # broker + service
    secrets = site.secrets("T01", folder + "/secrets-T01")
    board = floor_board(BOARD, floor_section(...), folder + "/board-T01.json")
    StoreWatcher(floor.db, "T01", out).start()
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from typing import Callable

from host_tools import REPO

SITE = "demo"  # the demo floor's site id
BROKER_NAME = "broker.demo"  # its broker's certificate's name (and 127.0.0.1)
# The board file's broker: on the virtual board every connection goes to
# its network relay (sim/network.py), so the nominal address stays the same
# from one run to the next (the configuration, and its id, with it).
NOMINAL_BROKER = "127.0.0.1"
VBOARD_WIFI = "vboard-net"  # the virtual board's Wi-Fi (sim/network needs one)
VBOARD_WIFI_KEY = "vboard-wifi-key"
READY_S = 60.0  # the floor service's subscription, on a busy machine


class DemoFloorError(RuntimeError):
    """The floor could not be started or read (one line)."""


def why_no_floor() -> str | None:
    """None when mosquitto is installed, else why the floor is not shown."""
    from host_tools.broker import require_mosquitto

    return require_mosquitto()


class DemoSite:
    """A site folder as `sicbo floor certs` makes it (host_tools/certs.py):
    the site id is its CA's organisation, the broker's name its
    certificate's common name."""

    def __init__(self, folder: str, site: str = SITE, make: bool = True) -> None:
        from host_tools import certs

        self.folder = folder
        self.files = certs.SiteFiles(folder)
        if not os.path.exists(self.files.ca_pem):
            if not make:
                raise DemoFloorError("no site CA in %s (sicbo floor certs --out %s --site SITE "
                                     "--broker-host NAME makes one)" % (folder, folder))
            certs.make_site(folder, site, [BROKER_NAME, "127.0.0.1"])
        self.site, self.broker_name = _names(self.files.ca_pem, self.files.broker_pem)

    def client(self, cn: str):
        """A client's files (made, signed by the site CA, if missing)."""
        from host_tools import certs

        files = certs.ClientFiles(self.folder, cn)
        if not (os.path.exists(files.cert_der) and os.path.exists(files.key_der)):
            try:
                files = certs.make_client(self.folder, cn)
            except FileNotFoundError as e:
                raise DemoFloorError(str(e)) from None
        return files

    def secrets(self, table: str, out: str) -> str:
        """A secrets folder for `sicbo deploy --secrets` (TLS): the site CA,
        the table's certificate and key (DER), the virtual board's Wi-Fi key."""
        c = self.client(table)
        os.makedirs(out, exist_ok=True)
        for name, path in (("ca.der", self.files.ca_der), ("cert.der", c.cert_der),
                           ("key.der", c.key_der)):
            with open(path, "rb") as f:
                data = f.read()
            _write(os.path.join(out, name), data)
        _write(os.path.join(out, "wifi"), (VBOARD_WIFI_KEY + "\n").encode())
        return out


def _write(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _names(ca_pem: str, broker_pem: str) -> tuple[str, str]:
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    try:
        with open(ca_pem, "rb") as f:
            ca = x509.load_pem_x509_certificate(f.read())
        with open(broker_pem, "rb") as f:
            broker = x509.load_pem_x509_certificate(f.read())
    except (OSError, ValueError) as e:
        raise DemoFloorError("cannot read the site's certificates: %s" % e) from None
    org = ca.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    cn = broker.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if not org or not cn:
        raise DemoFloorError("%s names no site (its organisation)" % ca_pem)
    return str(org[0].value), str(cn[0].value)


def floor_section(site: str, table: str, host: str, port: int, tls: bool,
                  server_name: str | None) -> dict:
    """The board file's floor section of a virtual table (docs/board-files.md)."""
    floor = {"site": site, "table": table, "broker": host, "port": port, "tls": tls,
             "wifi": VBOARD_WIFI}
    if tls and server_name:
        floor["server_name"] = server_name
    return floor


def floor_board(board_path: str, floor: dict, out: str) -> str:
    """The board file with this floor section (a board file that has one
    keeps its own), written to out (unchanged bytes when nothing changed:
    a redeploy then copies nothing)."""
    with open(board_path, encoding="utf-8") as f:
        obj = json.load(f)
    if obj.get("floor") is None:
        obj["floor"] = floor
    text = json.dumps(obj, indent=2) + "\n"
    try:
        with open(out, encoding="utf-8") as f:
            if f.read() == text:
                return out
    except OSError:
        pass
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return out


class LocalFloor:
    """A mosquitto on free loopback ports (TLS, client certificates, the
    site's ACL; host_tools/broker.py) and the floor service (`sicbo floor`)
    in a process of its own, logging to floor/floor.log."""

    def __init__(self, folder: str, site: DemoSite) -> None:
        self.folder = folder
        self.site = site
        self.db = os.path.join(folder, "floor.db")
        self.log_path = os.path.join(folder, "floor.log")
        from host_tools.broker import Broker

        self.broker: Broker | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._said: set[str] = set()  # the parts whose exit exited() has said

    def start(self) -> LocalFloor:
        from host_tools import certs
        from host_tools.broker import Broker, TlsFiles

        f = self.site.files
        try:
            broker = Broker(os.path.join(self.folder, "mq"),
                            tls=TlsFiles(f.ca_pem, f.broker_pem, f.broker_key),
                            acl=certs.acl(self.site.site), plain=False).start()
        except (OSError, RuntimeError) as e:
            raise DemoFloorError("the broker did not start: %s" % e) from None
        self.broker = broker
        floor = self.site.client("floor")
        with open(self.log_path, "ab") as log:
            start = log.tell()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "host_tools", "floor", "--broker",
                 "127.0.0.1:%d" % broker.tls_port, "--db", self.db, "--site",
                 self.site.site, "--cafile", f.ca_pem, "--cert", floor.cert_pem, "--key",
                 floor.key_pem], cwd=REPO, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + READY_S
        while "subscribed" not in self._log(start):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                text = self._log(start).strip().splitlines()
                self.stop()
                raise DemoFloorError("the floor service did not start: %s"
                                     % (text[-1] if text else "no output"))
            time.sleep(0.05)
        return self

    @property
    def port(self) -> int:
        return self.broker.tls_port if self.broker is not None else 0

    def exited(self) -> list[str]:
        """A line for each of the broker and the floor service that has exited
        since this was last asked (each said once): the demo goes on, the
        table keeps what the floor has not stored in its journal."""
        lines = []
        b = self.broker
        if b is not None and b.proc is not None and b.proc.poll() is not None \
                and "broker" not in self._said:
            self._said.add("broker")
            lines.append("floor | the broker (mosquitto, pid %d) exited, status %s (its log: "
                         "%s): the table plays on and keeps its records in its journal; no "
                         "record reaches the floor until a broker runs on 127.0.0.1:%d again"
                         % (b.proc.pid, b.proc.returncode, b.log_path, b.tls_port))
        p = self.proc
        if p is not None and p.poll() is not None and "service" not in self._said:
            self._said.add("service")
            lines.append("floor | the floor service (pid %d) exited, status %s (its log: %s): "
                         "the table plays on; the broker holds the records for the service's "
                         "session, stored once a floor service runs again"
                         % (p.pid, p.returncode, self.log_path))
        return lines

    def _log(self, start: int) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(start)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
        self.proc = None
        if self.broker is not None:
            self.broker.stop()
            self.broker = None


class StoreWatcher:
    """Shows, a line each, the rounds of a table the floor's store holds as
    finished (paid or void) that it had not shown: round, dice, the last
    sequence number of the round stored, what the floor has acknowledged;
    and, given `exited`, the floor's parts that stopped meanwhile.
    Reads the store read-only beside the service (docs/floor.md)."""

    def __init__(self, db: str, table: str, out: Callable[[str], None],
                 every: float = 0.3, exited: Callable[[], list[str]] | None = None) -> None:
        self.db = db
        self.table = table
        self.out = out
        self.every = every
        self.exited = exited  # the floor's parts that stopped (LocalFloor.exited), said too
        self.shown: set[int] = set()
        self.first = True
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="floor-store", daemon=True)

    def start(self) -> StoreWatcher:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            if self.exited is not None:
                for line in self.exited():
                    self.out(line)
            try:
                self.poll()
            except sqlite3.Error:
                pass  # the service makes the store; read again later

    def poll(self) -> list[str]:
        """The new lines (shown through out), from one read of the store."""
        with self._lock:
            return self._poll()

    def _poll(self) -> list[str]:
        if not os.path.exists(self.db):
            return []
        conn = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True, timeout=5)
        try:
            rows = conn.execute(
                "SELECT round, status, dice, void_reason, last_seq FROM rounds "
                "WHERE table_id=? AND status IN ('paid', 'void') ORDER BY round",
                (self.table,)).fetchall()
            acked = conn.execute("SELECT acked FROM tables WHERE table_id=?",
                                 (self.table,)).fetchone()
        finally:
            conn.close()
        lines = []
        if self.first:
            # rounds of earlier runs are not news
            self.first = False
            self.shown.update(r[0] for r in rows)
            if rows:
                lines.append("floor | %s: %d rounds stored from earlier runs"
                             % (self.table, len(rows)))
        for rid, status, dice, void_reason, last_seq in rows:
            if rid in self.shown:
                continue
            self.shown.add(rid)
            if status == "paid" and dice:
                what = "%s paid" % "-".join(str(d) for d in json.loads(dice))
            else:
                what = "void (%s)" % (void_reason or "?")
            lines.append("floor | %s round %d stored: %s, records up to seq %d (the floor "
                         "acknowledged %d)" % (self.table, rid, what, last_seq,
                                               acked[0] if acked else 0))
        for line in lines:
            self.out(line)
        return lines
