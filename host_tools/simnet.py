"""The virtual board's network: a TCP relay on loopback, in the virtual
board's host process, between the interpreter and the broker.

`sicbo vboard --broker HOST:PORT` starts one; the simulated `network` module
(sim/network.py) routes the board's connections to it while the link is up,
and the control socket's `network_down` / `network_up` drop and restore it
(docs/simulated-table.md):

    relay = NetRelay("127.0.0.1", 1883, state_file).start()
    relay.down("silent")   # connections held open, nothing passes either way
    relay.down("reset")    # connections closed
    relay.up()

The state file (one line, "up|down 127.0.0.1 PORT") is what the board reads
(through $SICBO_SIM_NET). While the link is down the relay refuses new
connections (a board that got past sim/network.py's check); in `silent` mode
the bytes of open connections are held, as a Wi-Fi that went away leaves a
TCP connection hanging until a keepalive notices, and go through once the
link is up again (if neither end gave up meanwhile).

`tap(number, direction, data, held)`, when given, sees every chunk read
from a connection (numbered from 1 in the order accepted; direction "up":
board -> broker, "down": broker -> board; held: read while the link is down)
before it is held or forwarded: tests parse it.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import time
from typing import Callable

MODES = ("silent", "reset")


class NetRelay:
    def __init__(self, host: str, port: int, state_file: str | None = None,
                 tap: Callable[[int, str, bytes, bool], None] | None = None) -> None:
        self.target = (host, port)
        self.state_file = state_file
        self.tap = tap
        self.port = 0
        self.is_up = True
        self.mode = ""
        self.accepted = 0
        self.refused = 0
        self._held = threading.Event()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._ls: socket.socket | None = None
        self._stop = False

    def start(self) -> NetRelay:
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(("127.0.0.1", 0))
        ls.listen(16)
        self._ls = ls
        self.port = ls.getsockname()[1]
        self._write_state()
        threading.Thread(target=self._accept, name="net-relay", daemon=True).start()
        return self

    @property
    def address(self) -> str:
        return "127.0.0.1:%d" % self.port

    def _write_state(self) -> None:
        if not self.state_file:
            return
        tmp = self.state_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%s 127.0.0.1 %d\n" % ("up" if self.is_up else "down", self.port))
        os.replace(tmp, self.state_file)

    def connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def down(self, mode: str = "silent") -> dict:
        if mode not in MODES:
            raise ValueError("mode must be one of %s, got %r" % (", ".join(MODES), mode))
        self.is_up = False
        self.mode = mode
        self._held.set()
        self._write_state()
        n = self.connections()
        if mode == "reset":
            self._cut()
        return {"ok": True, "network": "down", "mode": mode, "connections": n}

    def up(self) -> dict:
        self.is_up = True
        self.mode = ""
        self._write_state()
        self._held.clear()
        return {"ok": True, "network": "up", "connections": self.connections()}

    def stop(self) -> None:
        self._stop = True
        self._held.clear()
        if self._ls is not None:
            try:
                self._ls.close()
            except OSError:
                pass
        self._cut()

    # ---- internals ----------------------------------------------------------

    def _accept(self) -> None:
        ls = self._ls
        assert ls is not None
        while not self._stop:
            try:
                a, _ = ls.accept()
            except OSError:
                return
            if not self.is_up:
                self.refused += 1
                _reset(a)
                continue
            try:
                b = socket.create_connection(self.target, timeout=10)
                b.settimeout(None)
            except OSError:
                self.refused += 1
                _reset(a)
                continue
            self.accepted += 1
            with self._lock:
                self._pairs.append((a, b))
            for src, dst, way in ((a, b, "up"), (b, a, "down")):
                threading.Thread(target=self._pump, args=(src, dst, way, self.accepted),
                                 daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, way: str, number: int) -> None:
        # Reads on while the link is down (the sender's bytes are taken, as
        # its own stack would take them) and holds them until it is up.
        held = bytearray()
        try:
            while not self._stop:
                if held and not self._held.is_set():
                    dst.sendall(held)
                    held.clear()
                if not select.select([src], [], [], 0.05)[0]:
                    continue
                data = src.recv(65536)
                if not data:
                    while held and self._held.is_set() and not self._stop:
                        time.sleep(0.01)
                    if held and not self._stop:
                        dst.sendall(held)
                    break
                if self.tap is not None:
                    self.tap(number, way, data, self._held.is_set())
                if self._held.is_set():
                    held += data
                else:
                    dst.sendall(data)
        except (OSError, ValueError):
            # ValueError: select() on a socket the other pump or _cut closed
            # (its fd is -1): the pair is gone, this pump ends with it.
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with self._lock:
            self._pairs = [p for p in self._pairs if src not in p]
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass

    def _cut(self) -> None:
        with self._lock:
            pairs = list(self._pairs)
            self._pairs.clear()
        for a, b in pairs:
            _reset(a)
            _reset(b)


def _reset(s: socket.socket) -> None:
    """Close with a reset (SO_LINGER 0), as a connection refused or lost."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
