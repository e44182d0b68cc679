"""Client of the simulated table's control channel (docs/simulated-table.md).

    with TableClient(run_folder + "/control.sock") as table:
        table.cover_on(); table.fasten_clasps()
        table.press("key_bell", ms=120, wait=True)
        table.wait_for(lambda t: t.outputs()["bell"]["on_count"] >= 1)

Waits end as soon as their condition holds; their timeouts (WAIT_S by
default) are for a board that never gets there, long enough for a busy host.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any, Callable

WAIT_S = 60.0


class TableError(Exception):
    """The table refused a request (its error message), or the channel broke."""


class TableClient:
    def __init__(self, control_path: str, timeout: float = WAIT_S):
        self.path = control_path
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        try:
            self._sock.connect(control_path)
        except OSError as e:
            self._sock.close()
            raise TableError("cannot reach the simulated table at %s: %s"
                             % (control_path, e)) from e
        self._buf = b""
        self._next_id = 0

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> TableClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        """Send one request; return the reply, or raise TableError on {"ok": false}."""
        self._next_id += 1
        req = {"op": op, "id": self._next_id}
        req.update(fields)
        reply = self.raw(json.dumps(req).encode())
        if reply.get("id") != self._next_id:
            raise TableError("reply out of order: %r" % (reply,))
        if not reply.get("ok"):
            raise TableError(reply.get("error", "refused"))
        return reply

    def raw(self, line: bytes) -> dict[str, Any]:
        """Send one raw line (no checks) and return the decoded reply."""
        try:
            self._sock.sendall(line.rstrip(b"\n") + b"\n")
            while b"\n" not in self._buf:
                data = self._sock.recv(65536)
                if not data:
                    raise TableError("the simulated table closed the control channel")
                self._buf += data
        except OSError as e:
            raise TableError("control channel: %s" % e) from e
        line, self._buf = self._buf.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        return reply

    # ---- inputs -------------------------------------------------------------

    def set(self, signal: str, level: int, wait_ms: int | None = None) -> None:
        """Set an input. With wait_ms (a board connected): return once the
        board has read the level for wait_ms (twice, at least wait_ms after
        its first read of it): it has taken it, and what comes next comes
        after it. wait_ms should be at least the board's debounce_ms."""
        r = self.request("set", signal=signal, level=level, **(
            {"ms": wait_ms} if wait_ms is not None else {}))
        if r.get("held"):
            self.wait_for(lambda t: signal not in t.state()["held"],
                          timeout=(wait_ms or 0) / 1000 + WAIT_S)

    def press(self, key: str, ms: int = 120, wait: bool = False) -> None:
        """Press a key (or any input) for ms. With a board connected, for ms
        of its attention: held until it has read the key pressed for ms,
        then released until it has read that for ms (a press of a key still
        held waits for that). With wait, return once the board has seen the
        release (the next press of the key is a new press to it)."""
        self.request("press", key=key, ms=ms)
        if wait:
            self.wait_for(lambda t: not t.state()["inputs"][key], timeout=ms / 1000 + WAIT_S)

    def release(self, key: str) -> None:
        self.request("release", key=key)

    def cover_on(self, wait_ms: int | None = None) -> None:
        self.set("cover", 1, wait_ms)

    def cover_off(self, wait_ms: int | None = None) -> None:
        self.set("cover", 0, wait_ms)

    def fasten_clasps(self, wait_ms: int | None = None) -> None:
        self.set_all({"clasp_left": 1, "clasp_right": 1}, wait_ms)

    def open_clasps(self, wait_ms: int | None = None) -> None:
        self.set_all({"clasp_left": 0, "clasp_right": 0}, wait_ms)

    def set_all(self, levels: dict[str, int], wait_ms: int | None = None) -> None:
        """Several inputs at once; with wait_ms, until the board has taken
        every one (as set())."""
        held = []
        for signal, level in levels.items():
            r = self.request("set", signal=signal, level=level, **(
                {"ms": wait_ms} if wait_ms is not None else {}))
            if r.get("held"):
                held.append(signal)
        if held:
            self.wait_for(lambda t: not set(held) & set(t.state()["held"]),
                          timeout=(wait_ms or 0) / 1000 + WAIT_S)

    def supervisor(self, on: bool) -> None:
        self.set("supervisor", 1 if on else 0)

    def reader_line(self, line: str, raw: bool = False) -> int:
        return int(self.request("reader", line=line, raw=raw)["bytes"])

    # ---- power ------------------------------------------------------------

    def power_cut(self) -> None:
        """Pull the plug: the interpreter is killed, the RTC lost, the serial
        port gone (a table without a virtual board refuses)."""
        self.request("power_cut")

    def power_on(self, wait: bool = True, timeout: float = WAIT_S) -> int:
        """Power back; with `wait`, until the board's boot connects to the
        table (when the firmware imports `machine`). Returns the boot number
        of the table's next `connect` (its count so far + 1)."""
        since = self.request("state")["next_event"]
        boots = int(self.request("power_on")["boots"])
        if wait:
            self.wait_event("connect", since, timeout, lambda ev: ev["boot"] > boots)
        return boots + 1

    # ---- outputs ------------------------------------------------------------

    def ping(self) -> dict[str, Any]:
        return self.request("ping")

    def signals(self) -> dict[str, Any]:
        return self.request("signals")

    def state(self) -> dict[str, Any]:
        return self.request("state")

    def lamps(self, last: int = 0) -> dict[str, Any]:
        return self.request("lamps", last=last)

    def outputs(self) -> dict[str, Any]:
        out: dict[str, Any] = self.request("outputs")["outputs"]
        return out

    def events(self, since: int = 0, kinds: list[str] | None = None) -> dict[str, Any]:
        if kinds is None:
            return self.request("events", since=since)
        return self.request("events", since=since, kinds=kinds)

    def wait_for(self, predicate: Callable[[TableClient], Any], timeout: float = WAIT_S,
                 interval: float = 0.02) -> Any:
        """Poll predicate(self) until it returns something true; return that, or
        raise TimeoutError after timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:
            got = predicate(self)
            if got:
                return got
            if time.monotonic() >= deadline:
                raise TimeoutError("the simulated table did not reach the condition in %.1f s"
                                   % timeout)
            time.sleep(interval)

    def wait_event(self, kind: str, since: int = 0, timeout: float = WAIT_S,
                   match: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
        """Wait for the first event of `kind` numbered >= since (and matching)."""
        def find(t: TableClient) -> dict[str, Any] | None:
            for ev in t.events(since, [kind])["events"]:
                if match is None or match(ev):
                    return ev
            return None
        ev: dict[str, Any] = self.wait_for(find, timeout)
        return ev
