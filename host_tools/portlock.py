"""One serial port, one user (and one virtual board per run folder).

A board's serial port carries one conversation: two programs reading it steal
each other's bytes (mpremote then fails with "could not enter raw repl"). So
every `sicbo` command that talks to a port holds it for as long as it does:

* a lock file per port, named after the port's real path (a virtual board's
  ``tty`` link and the pty it points to are one port), in the system's
  temporary folder, holding ``<pid> <who>``, locked with ``fcntl.flock``.
  ``sicbo deploy`` and ``sicbo diag`` take it first and refuse in one line
  ("PORT is in use by sicbo console (pid N)") when another process holds it.
  The kernel drops a flock when its process ends, so a lock left by a dead
  process is free: its file is simply taken over.
* the readers of the console (``sicbo console``, the demo's, the first-state
  watch of deploy and diag) also open the port exclusively (pyserial's
  ``exclusive``, a flock on the device), as mpremote does: an mpremote started
  by hand then fails to open the port ("failed to access") instead of
  sharing it.

The demo takes the same kind of lock on its run folder: two virtual boards
on one filesystem would write one journal at once.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import tempfile
import time

from host_tools.cli import UsageError

PREFIX = "sicbo-port-"


class PortBusy(UsageError):
    """Another process holds the port: one line, exit status 2."""


def real_port(port: str) -> str:
    """The path that names the port whatever link leads to it."""
    try:
        return os.path.realpath(port)
    except OSError:
        return port


def port_key(port: str) -> str:
    """The port's real path; for a pseudo-terminal also the moment it was made:
    pty numbers are reused, and a lock still held on a closed virtual board's
    /dev/pts/N must not refuse the next board that gets N."""
    path = real_port(port)
    if path.startswith("/dev/pts/"):
        try:
            return "%s@%d" % (path, os.stat(path).st_ctime_ns)
        except OSError:
            pass
    return path


def lock_path(port: str, folder: str | None = None) -> str:
    key = hashlib.sha256(port_key(port).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(folder or tempfile.gettempdir(), PREFIX + key + ".lock")


def _read_holder(fd: int) -> tuple[int | None, str]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, 512).decode("utf-8", "replace").strip()
    except OSError:
        return None, ""
    pid_text, _, who = text.partition(" ")
    return (int(pid_text) if pid_text.isascii() and pid_text.isdigit() else None), who.strip()


class PortLock:
    """with PortLock(port, "sicbo console"): ... -- or acquire()/release().
    acquire() raises PortBusy naming the holder when another process (or
    another PortLock of this one) holds the port."""

    def __init__(self, port: str, who: str, folder: str | None = None,
                 rule: str = "one program at a time on a serial port"):
        self.port = port
        self.who = who
        self.folder = folder
        self.rule = rule  # said when refused
        self.path = lock_path(port, folder)
        self.fd: int | None = None

    def acquire(self) -> PortLock:
        if self.fd is not None:
            return self
        self.path = lock_path(self.port, self.folder)  # the link may point elsewhere now
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            writable = True
        except PermissionError:
            # another user's lock file: it can still be locked, not written
            fd = os.open(self.path, os.O_RDONLY)
            writable = False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                os.close(fd)
                raise
            pid, who = None, ""
            for _ in range(20):  # its holder may be writing its name right now
                pid, who = _read_holder(fd)
                if pid:
                    break
                time.sleep(0.01)
            os.close(fd)
            raise PortBusy("%s is in use by %s%s: stop it first (%s)"
                           % (self.port, who or "another program",
                              " (pid %d)" % pid if pid else "", self.rule)) from None
        if writable:
            try:
                os.ftruncate(fd, 0)
                os.lseek(fd, 0, os.SEEK_SET)
                os.write(fd, ("%d %s\n" % (os.getpid(), self.who)).encode())
            except OSError:
                pass
        self.fd = fd
        return self

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # no stale name left behind for a reader
        except OSError:
            pass
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> PortLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(port: str, folder: str | None = None) -> tuple[int, str] | None:
    """(pid, who) of the process holding the port's lock, or None when it is
    free (a file left by a process that has ended does not count)."""
    path = lock_path(port, folder)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            pid, who = _read_holder(fd)
            return (pid or 0, who or "another program")
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def check_free(port: str, folder: str | None = None) -> None:
    """PortBusy if another process holds the port."""
    h = holder(port, folder)
    if h is not None:
        pid, who = h
        raise PortBusy("%s is in use by %s%s: stop it first (one program at a time on a "
                       "serial port)" % (port, who, " (pid %d)" % pid if pid else ""))
