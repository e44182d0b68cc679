"""A real mosquitto broker on loopback, started and stopped by the caller.

The tests, the demo and the benches start the Debian `mosquitto` package's
broker with a configuration of their own, in a folder of their own, on free
loopback ports: nothing of the machine's own mosquitto service is used.

    b = Broker(folder, tls=TlsFiles(ca, cert, key), acl=ACL_TEXT).start()
    b.port          the plain listener (loopback, no TLS)
    b.tls_port      the TLS listener (client certificate required, its CN
                    is the username), when tls is given
    b.kill()        kill -9: what was not saved is lost (as on a crash)
    b.restart()     start again on the same ports and persistence file
    b.stop()        a clean stop (the persistence file is written)

Persistence is on with `autosave_interval 1`: mosquitto's default (1800 s)
would lose half an hour of queued messages to a `kill -9`. The keepalive
clients send must be above 0 (mosquitto 2.0.12 and later refuse 0).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

READY_TIMEOUT_S = 60.0  # a busy machine may take long to start a process


class BrokerMissing(RuntimeError):
    """mosquitto is not installed (Debian: apt-get install mosquitto)."""


class TlsFiles:
    """PEM paths for the broker's TLS listener: the site CA that signs the
    tables' client certificates, and the broker's own certificate and key."""

    def __init__(self, ca: str, cert: str, key: str) -> None:
        self.ca = ca
        self.cert = cert
        self.key = key


def mosquitto_path() -> str:
    for path in (shutil.which("mosquitto"), "/usr/sbin/mosquitto"):
        if path and os.access(path, os.X_OK):
            return path
    raise BrokerMissing("mosquitto is not installed (Debian: apt-get install mosquitto); "
                        ".ci/run installs it")


def require_mosquitto() -> str | None:
    """None when mosquitto can run, else the one line that says why not (a
    test fails with it in CI, and says it elsewhere)."""
    try:
        mosquitto_path()
    except BrokerMissing as e:
        return str(e)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Broker:
    """One mosquitto process (see the module doc)."""

    def __init__(self, folder: str, tls: TlsFiles | None = None, acl: str | None = None,
                 passwords: dict[str, str] | None = None, plain: bool = True,
                 plain_acl: bool = False) -> None:
        # acl: the text of an ACL file for the TLS listener (and for the plain
        # one when plain_acl); passwords: user -> password for the plain
        # listener (anonymous clients are then refused there).
        self.folder = os.path.abspath(folder)
        self.tls = tls
        self.acl = acl
        self.passwords = passwords
        self.plain = plain
        self.plain_acl = plain_acl
        self.port = 0
        self.tls_port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = os.path.join(self.folder, "mosquitto.log")
        self.started = 0  # successful starts

    # ---- configuration -------------------------------------------------------

    def _config(self) -> str:
        lines = [
            "user root",  # as root it would drop to user mosquitto, which cannot read our files
            "log_dest stderr",  # stdout is block-buffered into a file
            "log_type error", "log_type warning", "log_type notice", "log_type information",
            "connection_messages true",
            "per_listener_settings true",
            "persistence true",
            "persistence_location %s/" % self.folder,
            "persistence_file mosquitto.db",
            "autosave_interval 1",
            "max_queued_messages 100000",
        ]
        acl_file = os.path.join(self.folder, "acl")
        if self.acl is not None:
            with open(acl_file, "w") as f:
                f.write(self.acl)
        if self.plain:
            lines += ["listener %d 127.0.0.1" % self.port]
            if self.passwords:
                pw = os.path.join(self.folder, "passwords")
                with open(pw, "w") as f:
                    for user in self.passwords:
                        f.write("%s:x\n" % user)
                for user, password in self.passwords.items():
                    subprocess.run([_passwd(), "-b", pw, user, password], check=True,
                                   capture_output=True, timeout=60)
                lines += ["allow_anonymous false", "password_file %s" % pw]
            else:
                lines += ["allow_anonymous true"]
            if self.plain_acl and self.acl is not None:
                lines += ["acl_file %s" % acl_file]
        if self.tls is not None:
            lines += [
                "listener %d 127.0.0.1" % self.tls_port,
                "cafile %s" % self.tls.ca,
                "certfile %s" % self.tls.cert,
                "keyfile %s" % self.tls.key,
                "tls_version tlsv1.2",
                "require_certificate true",
                "use_identity_as_username true",
                "allow_anonymous false",
            ]
            if self.acl is not None:
                lines += ["acl_file %s" % acl_file]
        return "\n".join(lines) + "\n"

    # ---- life ----------------------------------------------------------------

    def start(self) -> Broker:
        exe = mosquitto_path()
        os.makedirs(self.folder, exist_ok=True)
        for _attempt in range(5):
            if not self.started:
                # New ports until the first start succeeds; a restart keeps
                # its ports, since clients know them.
                self.port = free_port() if self.plain else 0
                self.tls_port = free_port() if self.tls is not None else 0
            conf = os.path.join(self.folder, "mosquitto.conf")
            with open(conf, "w") as f:
                f.write(self._config())
            with open(self.log_path, "ab") as log:
                start_size = log.tell()
                self.proc = subprocess.Popen([exe, "-c", conf], stdout=log, stderr=log,
                                             stdin=subprocess.DEVNULL)
            why = self._wait_ready(start_size)
            if why is None:
                self.started += 1
                return self
            self._reap()
            if self.started or "Address already in use" not in why:
                raise RuntimeError("mosquitto did not start: %s" % why)
        raise RuntimeError("mosquitto did not start: no free port in 5 attempts")

    def _wait_ready(self, start_size: int) -> str | None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            text = self._log_since(start_size)
            if " running" in text:
                return None
            proc = self.proc
            if proc is not None and proc.poll() is not None:
                return "exit %s: %s" % (proc.returncode, text.strip()[-500:])
            time.sleep(0.01)
        return "not running after %.0f s: %s" % (READY_TIMEOUT_S,
                                                  self._log_since(start_size)[-500:])

    def _log_since(self, start: int) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(start)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log(self) -> str:
        """Everything the broker logged, every start of it."""
        return self._log_since(0)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash: what was not saved (autosave: 1 s) is lost."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        self._reap()

    def stop(self) -> None:
        """A clean stop: mosquitto writes its persistence file."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self._reap()

    def restart(self) -> Broker:
        """Start again on the same ports, with what persistence kept."""
        if self.running():
            self.kill()
        return self.start()

    def _reap(self) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _passwd() -> str:
    for path in (shutil.which("mosquitto_passwd"), "/usr/bin/mosquitto_passwd"):
        if path and os.access(path, os.X_OK):
            return path
    raise BrokerMissing("mosquitto_passwd is not installed (Debian: mosquitto)")
