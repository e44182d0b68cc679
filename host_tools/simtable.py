"""The simulated Sic Bo table owned by the `sicbo vboard` host process.

`TableServer(run_folder, board)` holds the table's physical state (cover,
clasps, keys, supervisor switch, shake handle) and listens on two UNIX sockets
in `run_folder`:

- `wire.sock`: the interpreter side. `sim/machine.py` connects to it when
  SICBO_SIM_WIRE names it; the frames are described at the top of
  sim/machine.py and in docs/simulated-table.md. A new connection replaces the
  old one (the interpreter restarted: the table survives, as a real table
  survives a board reset) and gets the whole input state again.
- `control.sock`: newline-delimited JSON requests and responses for tests, the
  demo and integrators (docs/simulated-table.md; host_tools/simclient.py).

The outputs are decoded into table terms: lamp frames (the bytes shifted into
the 74HC595 chain, taken at each rising edge of the latch; or the WS2812
bytes), solenoid/bell/shaker motor on-periods with their durations in board
ticks, PWM settings, bytes sent to the dice reader, resets.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import threading
import time
from typing import Any, Callable

from host_tools import simkeys

PROTOCOL = "sicbo-sim 1"
MAX_EVENTS = 10000
MAX_FRAMES = 1000
RESET_NAMES = {1: "power-on", 2: "hard", 3: "watchdog", 4: "deep-sleep", 5: "soft"}
WDT_GRACE_S = 0.5  # the table's watchdog runs out this long after the board's
PWRON_RESET = 1
FLOAT = 2
OPS = ("ping", "signals", "set", "press", "release", "reader", "state", "lamps", "outputs",
       "events", "next_reset_cause", "power_cut", "power_on", "network_down", "network_up")
# Ops that call into the virtual board (which may call back into the table):
# run without the table's lock.
UNLOCKED_OPS = ("power_cut", "power_on", "network_down", "network_up")
WATCHDOG_RESET = 3


class BoardError(ValueError):
    """The board description cannot drive a simulated table."""


class RequestError(Exception):
    """A control request that is refused; the message goes back to the client."""


def _pin(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 39:
        raise BoardError("%s: a GPIO number 0..39 is needed, got %r" % (where, value))
    return value


class _Input:
    """How a physical input (1 = active: cover on, clasp fastened, key pressed)
    appears on its pin: a key to GND with a pull-up is inverted and released
    (floating, the pull-up reads 1) when not pressed; a sensor board drives."""

    def __init__(self, name: str, spec: Any):
        self.name = name
        if isinstance(spec, dict):
            self.pin = _pin(spec.get("pin"), "inputs.%s.pin" % name)
            self.invert = bool(spec.get("invert", False))
            self.pull = spec.get("pull", "none")
        else:
            self.pin = _pin(spec, "inputs.%s" % name)
            self.invert = False
            self.pull = "none"

    def pad(self, active: int) -> int:
        if self.invert:
            return 0 if active else (FLOAT if self.pull == "up" else 1)
        return 1 if active else (FLOAT if self.pull == "down" else 0)


class _Output:
    def __init__(self, name: str, pin: int):
        self.name = name
        self.pin = pin
        self.level = 0
        self.rose_ticks: int | None = None
        self.rose_t: float | None = None
        self.on_ms: list[int] = []
        self.pwm: dict[str, int] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"pin": self.pin, "level": self.level, "on_count": len(self.on_ms),
                "on_ms": list(self.on_ms[-100:]), "pwm": self.pwm}


class TableServer:
    def __init__(self, run_folder: str, board: dict[str, Any],
                 lamp_names: list[str | None] | None = None):
        if not isinstance(board, dict):
            raise BoardError("board must be the decoded board file (a dict)")
        self.run_folder = run_folder
        self.wire_path = os.path.join(run_folder, "wire.sock")
        self.control_path = os.path.join(run_folder, "control.sock")
        self.lamp_names = lamp_names
        self._inputs: dict[str, _Input] = {}
        for name, spec in (board.get("inputs") or {}).items():
            self._inputs[name] = _Input(name, spec)
        self._chain = simkeys.chain_of(board)  # the keys' 74HC165 chain, if any
        if self._chain is not None:
            self._inputs.update(self._chain.keys)  # type: ignore[arg-type]
        self._outputs: dict[str, _Output] = {}
        for name, spec in (board.get("outputs") or {}).items():
            pin = spec.get("pin") if isinstance(spec, dict) else spec
            self._outputs[name] = _Output(name, _pin(pin, "outputs.%s" % name))
        self._by_pin_out = {o.pin: o for o in self._outputs.values()}
        lamps = board.get("lamps") or {}
        self.lamp_bus = lamps.get("bus", "hc595" if "latch" in lamps else
                                  ("neopixel" if "pin" in lamps else None))
        self.latch = _pin(lamps["latch"], "lamps.latch") if "latch" in lamps else None
        self.mosi = _pin(lamps["mosi"], "lamps.mosi") if "mosi" in lamps else None
        self.oe = _pin(lamps["oe"], "lamps.oe") if lamps.get("oe") is not None else None
        self.neo_pin = _pin(lamps["pin"], "lamps.pin") if "pin" in lamps else None
        if self.lamp_bus == "hc595" and (self.latch is None or self.mosi is None):
            raise BoardError("lamps: a 74HC595 chain needs mosi and latch pins")
        reader = board.get("reader") or None
        self.reader_rx = _pin(reader["rx"], "reader.rx") if reader else None
        self.reader_tx = _pin(reader["tx"], "reader.tx") if reader else None

        self._lock = threading.RLock()
        self._physical = {name: 0 for name in self._inputs}
        self._releases: dict[str, float] = {}
        # Inputs pressed or set for the board's attention (it says when it has
        # taken them, 'E'): the level each is left at then; and the presses
        # of them waiting for that (their ms).
        self._held: dict[str, int] = {}
        self._queued: dict[str, list[int]] = {}
        self._events: list[dict[str, Any]] = []
        self._next_event = 0
        self._t0 = time.monotonic()
        self._shift = bytearray()
        self._frames: list[bytes] = []
        self._frame_count = 0
        self._pin_levels: dict[int, int] = {}
        self._reader_tx = bytearray()
        self._resets: list[int] = []
        self._next_cause = PWRON_RESET
        self._boots = 0
        self._wire: socket.socket | None = None
        self._wire_buf = b""
        self._hello = False
        self._sel: selectors.DefaultSelector | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._listeners: list[socket.socket] = []
        self._clients: dict[socket.socket, bytes] = {}
        self._wake_r, self._wake_w = os.pipe()
        # The board's power (the virtual board sets it): an object with
        # power_cut() and power_on(timeout=0); None for a table alone.
        self.power: Any = None
        # The board's network (host_tools/simnet.NetRelay), when it has one.
        self.network: Any = None
        # Called (from the table's thread; must not wait) when the watchdog
        # the board armed runs out on wall time: the virtual board resets it.
        self.on_watchdog: Callable[[], None] | None = None
        self._wdt_ms = 0                       # the armed watchdog's timeout
        self._wdt_due: float | None = None     # time.monotonic() it runs out

    # ---- life ---------------------------------------------------------------

    def start(self) -> None:
        for path in (self.wire_path, self.control_path):
            if len(os.fsencode(path)) > 107:
                raise ValueError("%s: a UNIX socket path is limited to 107 bytes; use a "
                                 "shorter run folder" % path)
        os.makedirs(self.run_folder, exist_ok=True)
        self._sel = selectors.DefaultSelector()
        for path, kind in ((self.wire_path, "wire-listen"), (self.control_path, "ctl-listen")):
            if os.path.exists(path):
                os.remove(path)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(8)
            s.setblocking(False)
            self._listeners.append(s)
            self._sel.register(s, selectors.EVENT_READ, kind)
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._thread = threading.Thread(target=self._run, name="simtable", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        os.write(self._wake_w, b"x")
        if self._thread is not None:
            self._thread.join(5)
        for path in (self.wire_path, self.control_path):
            if os.path.exists(path):
                os.remove(path)
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> TableServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        assert self._sel is not None
        try:
            while not self._stopping:
                timeout = self._due_releases()
                wdt = self._due_watchdog()
                if wdt is not None:
                    timeout = wdt if timeout is None else min(timeout, wdt)
                for key, _mask in self._sel.select(timeout):
                    kind = key.data
                    sock = key.fileobj
                    if kind == "wake":
                        os.read(self._wake_r, 64)
                    elif kind == "wire-listen":
                        self._accept_wire(sock)  # type: ignore[arg-type]
                    elif kind == "ctl-listen":
                        conn, _ = sock.accept()  # type: ignore[union-attr]
                        conn.setblocking(False)
                        self._clients[conn] = b""
                        self._sel.register(conn, selectors.EVENT_READ, "ctl")
                    elif kind == "wire":
                        self._read_wire(sock)  # type: ignore[arg-type]
                    elif kind == "ctl":
                        self._read_control(sock)  # type: ignore[arg-type]
        finally:
            for s in list(self._clients) + self._listeners + ([self._wire] if self._wire else []):
                try:
                    self._sel.unregister(s)
                except (KeyError, ValueError):
                    pass
                s.close()
            self._clients.clear()
            self._wire = None
            self._sel.close()

    def _due_releases(self) -> float | None:
        with self._lock:
            now = time.monotonic()
            for name, at in list(self._releases.items()):
                if at <= now:
                    del self._releases[name]
                    self._set_input(name, 0, "release")
            if not self._releases:
                return None
            return max(0.0, min(self._releases.values()) - now)

    def _due_watchdog(self) -> float | None:
        """The watchdog on wall time, as a board's runs whatever its program
        does: seconds until it runs out, or None when not armed. When it has
        run out: the reset is recorded (the next boot reads WDT_RESET) and
        on_watchdog resets the board."""
        with self._lock:
            if self._wdt_due is None:
                return None
            left = self._wdt_due - time.monotonic()
            if left > 0:
                return left
            self._wdt_due = None
            self._resets.append(WATCHDOG_RESET)
            self._next_cause = WATCHDOG_RESET
            self._event("reset", cause="watchdog", timeout_ms=self._wdt_ms, by="table")
        if self.on_watchdog is not None:
            self.on_watchdog()
        return None

    # ---- events -------------------------------------------------------------

    def _ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000)

    def _event(self, kind: str, **fields: Any) -> None:
        ev = {"n": self._next_event, "t_ms": self._ms(), "kind": kind}
        ev.update(fields)
        self._next_event += 1
        self._events.append(ev)
        if len(self._events) > MAX_EVENTS:
            del self._events[: len(self._events) - MAX_EVENTS]

    # ---- the wire -----------------------------------------------------------

    def _accept_wire(self, listener: socket.socket) -> None:
        assert self._sel is not None
        conn, _ = listener.accept()
        if self._wire is not None:
            self._drop_wire("replaced by a new connection")
        self._wire = conn
        self._wire_buf = b""
        self._hello = False
        self._sel.register(conn, selectors.EVENT_READ, "wire")

    def _drop_wire(self, why: str) -> None:
        assert self._sel is not None
        if self._wire is None:
            return
        try:
            self._sel.unregister(self._wire)
        except (KeyError, ValueError):
            pass
        self._wire.close()
        self._wire = None
        with self._lock:
            self._wdt_due = None  # the interpreter ended: its watchdog with it
            # Nobody is there to see the keys held for the board: the finger
            # lifts (a key held through a power-on would change the boot).
            for name, after in list(self._held.items()):
                self._unhold(name)
                self._set_input(name, after, "release")
            for out in self._outputs.values():
                self._output_level(out, 0, None)
            self._event("disconnect", why=why)

    def _send(self, kind: bytes, payload: bytes) -> None:
        if self._wire is None or not self._hello:
            return
        try:
            self._wire.sendall(kind + len(payload).to_bytes(2, "big") + payload)
        except OSError as e:
            self._drop_wire("send failed: %s" % e)

    def _read_wire(self, sock: socket.socket) -> None:
        try:
            data = sock.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._drop_wire("interpreter closed the wire")
            return
        buf = self._wire_buf + data
        while len(buf) >= 3:
            n = (buf[1] << 8) | buf[2]
            if len(buf) < 3 + n:
                break
            kind, payload = buf[0:1], buf[3:3 + n]
            buf = buf[3 + n:]
            with self._lock:
                self._frame(kind, payload)
            if self._wire is None:
                return
        self._wire_buf = buf

    def _frame(self, kind: bytes, pl: bytes) -> None:
        if kind == b"H":
            if pl.decode("ascii", "replace") != PROTOCOL:
                self._event("error", message="wire hello %r, expected %r" % (pl, PROTOCOL))
                self._drop_wire("protocol mismatch")
                return
            self._hello = True
            self._boots += 1
            self._wdt_due = None  # a new boot: no watchdog until the board arms one
            cause = self._next_cause
            self._next_cause = PWRON_RESET  # a kill without 'R' is a power cut
            self._pin_levels.clear()
            self._event("connect", boot=self._boots, reset_cause=RESET_NAMES.get(cause, cause))
            self._send(b"C", bytes((cause,)))
            for frame in self._chain.attach() if self._chain is not None else ():
                self._send(*frame)
            for name, inp in self._inputs.items():
                self._send(*self._input_frame(inp, self._physical[name]))
            self._send(b"Y", b"")
        elif kind == b"P" and len(pl) == 6:
            pin, level = pl[0], pl[1]
            ticks = int.from_bytes(pl[2:6], "big")
            self._pin(pin, level, ticks)
        elif kind == b"M" and len(pl) == 7:
            pin = pl[0]
            freq = int.from_bytes(pl[1:5], "big")
            duty = int.from_bytes(pl[5:7], "big")
            out = self._by_pin_out.get(pin)
            pwm = {"freq": freq, "duty_u16": duty} if freq else None
            if out is not None:
                out.pwm = pwm
            self._event("pwm", signal=out.name if out else None, pin=pin, pwm=pwm)
        elif kind == b"S" and len(pl) >= 2:
            if pl[0] == self.mosi and not (self._chain is not None
                                           and self._chain.is_key_read(pl[1])):
                self._shift.extend(pl[2:])
                if len(self._shift) > 4096:
                    del self._shift[:-4096]
        elif kind == b"N" and len(pl) >= 1:
            if pl[0] == self.neo_pin:
                self._new_frame(bytes(pl[1:]))
        elif kind == b"U" and len(pl) >= 1:
            data = bytes(pl[1:])
            if pl[0] == self.reader_tx:
                self._reader_tx.extend(data)
            self._event("uart_tx", pin=pl[0], data=data.decode("latin-1"))
        elif kind == b"W" and len(pl) == 4:
            ms = int.from_bytes(pl, "big")
            if ms and self._wdt_due is None:
                self._event("watchdog", timeout_ms=ms)
            self._wdt_ms = ms
            # A little after the board's own: a board that still runs its
            # simulation resets itself (and says so, 'R'); the table's catches
            # a board that no longer does (stuck at the REPL), and the two
            # never both count one expiry.
            self._wdt_due = time.monotonic() + ms / 1000 + WDT_GRACE_S if ms else None
        elif kind == b"E" and len(pl) in (1, 2):
            # the board has seen a held key pressed, then released
            held = self._held_name(pl)
            if held is not None:
                level = self._held.pop(held)
                if self._physical[held] != level:
                    self._physical[held] = level
                    self._event("input", signal=held, level=level, how="release")
                queued = self._queued.get(held)
                if queued:
                    self._hold(held, queued.pop(0))
        elif kind == b"R" and len(pl) == 1:
            self._wdt_due = None
            self._resets.append(pl[0])
            self._next_cause = pl[0]
            self._event("reset", cause=RESET_NAMES.get(pl[0], pl[0]))
        else:
            self._event("error", message="bad wire frame %r of %d bytes" % (kind, len(pl)))

    def _pin(self, pin: int, level: int, ticks: int) -> None:
        old = self._pin_levels.get(pin, 0)
        self._pin_levels[pin] = level
        if self._chain is not None:
            self._chain.pin(pin, level)
        out = self._by_pin_out.get(pin)
        if out is not None:
            self._output_level(out, level, ticks)
        elif pin == self.latch and level and not old:
            self._new_frame(bytes(self._shift) if self._shift else
                            (self._frames[-1] if self._frames else b""))
            self._shift.clear()
        elif pin == self.oe:
            self._event("lamps_enable", enabled=not level)

    def _output_level(self, out: _Output, level: int, ticks: int | None) -> None:
        if level == out.level:
            return
        out.level = level
        fields: dict[str, Any] = {"signal": out.name, "level": level, "ticks": ticks}
        if level:
            out.rose_ticks = ticks
            out.rose_t = time.monotonic()
        else:
            if out.rose_ticks is not None and ticks is not None:
                ms = (ticks - out.rose_ticks) & 0xFFFFFFFF
            elif out.rose_t is not None:
                ms = int((time.monotonic() - out.rose_t) * 1000)
            else:
                ms = 0
            out.on_ms.append(ms)
            del out.on_ms[:-1000]
            fields["on_ms"] = ms
            out.rose_ticks = None
            out.rose_t = None
        self._event("output", **fields)

    def _new_frame(self, frame: bytes) -> None:
        self._frames.append(frame)
        self._frame_count += 1
        del self._frames[:-MAX_FRAMES]
        self._event("lamps", frame=frame.hex(), lit=self._lit(frame))

    def _lit(self, frame: bytes) -> list[Any]:
        if self.lamp_bus == "neopixel":
            lit: list[Any] = [i for i in range(len(frame) // 3) if any(frame[3 * i:3 * i + 3])]
        else:
            n = len(frame)
            lit = [c for c in range(8 * n) if frame[n - 1 - c // 8] >> (c % 8) & 1]
        if self.lamp_names:
            return [self.lamp_names[c] if c < len(self.lamp_names) and self.lamp_names[c]
                    else c for c in lit]
        return lit

    # ---- physical inputs ----------------------------------------------------

    def _held_name(self, pl: bytes) -> str | None:
        for name in self._held:
            inp = self._inputs[name]
            if isinstance(inp, simkeys.ChainKey):
                if len(pl) == 2 and (inp.chain.load, inp.bit) == (pl[0], pl[1]):
                    return name
            elif len(pl) == 1 and inp.pin == pl[0]:
                return name
        return None

    def _hold(self, name: str, ms: int, level: int | None = None) -> None:
        """Press `name` until the board has read it pressed for ms, then
        released for ms (sim/_sim_wire.py): a starved interpreter still sees
        the press and the release, as a board sees a dealer's. With `level`:
        set it, until the board has read it so for ms."""
        inp = self._inputs[name]
        now, after = (1, 0) if level is None else (level, level)
        self._held[name] = after
        if self._physical[name] != now:
            self._physical[name] = now
            self._event("input", signal=name, level=now, how="press" if level is None
                        else "set")
        msb = bytes((ms >> 8, ms & 255))
        if isinstance(inp, simkeys.ChainKey):
            self._send(b"L", bytes((inp.chain.load, inp.bit, inp.pad(now), inp.pad(after))) + msb)
        else:
            self._send(b"Q", bytes((inp.pin, inp.pad(now), inp.pad(after))) + msb)

    def _unhold(self, name: str) -> None:
        self._held.pop(name, None)
        self._queued.pop(name, None)

    def _set_input(self, name: str, active: int, how: str) -> None:
        if self._physical[name] == active:
            return
        self._physical[name] = active
        inp = self._inputs[name]
        self._event("input", signal=name, level=active, how=how)
        self._send(*self._input_frame(inp, active))

    def _input_frame(self, inp: _Input, active: int) -> tuple[bytes, bytes]:
        if isinstance(inp, simkeys.ChainKey):  # a key on the 74HC165 chain
            return inp.frame(active)
        return b"I", bytes((inp.pin, inp.pad(active)))

    # ---- control channel ----------------------------------------------------

    def _read_control(self, conn: socket.socket) -> None:
        assert self._sel is not None
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        if not data:
            self._sel.unregister(conn)
            del self._clients[conn]
            conn.close()
            return
        buf = self._clients[conn] + data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            reply = self.handle_line(line)
            try:
                conn.sendall(json.dumps(reply).encode() + b"\n")
            except OSError:
                break
        if len(buf) > 1 << 20:
            buf = b""
        if conn in self._clients:
            self._clients[conn] = buf

    def handle_line(self, line: bytes) -> dict[str, Any]:
        try:
            req = json.loads(line)
        except ValueError as e:
            return {"ok": False, "error": "not JSON: %s" % e}
        if not isinstance(req, dict):
            return {"ok": False, "error": "a request is a JSON object with an 'op'"}
        try:
            reply = self.handle(req)
        except RequestError as e:
            reply = {"ok": False, "error": str(e)}
        if "id" in req:
            reply["id"] = req["id"]
        return reply

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        fn: Callable[[dict[str, Any]], dict[str, Any]] | None = getattr(
            self, "_op_%s" % op, None) if isinstance(op, str) and op in OPS else None
        if fn is None:
            raise RequestError("unknown op %r; ops are: %s" % (op, ", ".join(OPS)))
        if op in UNLOCKED_OPS:
            return fn(req)
        with self._lock:
            return fn(req)

    def _signal(self, req: dict[str, Any], field: str) -> str:
        name = req.get(field)
        if name not in self._inputs:
            raise RequestError("unknown input %s %r; inputs of this board: %s"
                               % (field, name, ", ".join(sorted(self._inputs))))
        return name  # type: ignore[return-value]

    def _op_ping(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "protocol": PROTOCOL}

    def _op_signals(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True,
                "inputs": {n: i.pin for n, i in self._inputs.items()},
                "outputs": {n: o.pin for n, o in self._outputs.items()},
                "lamps": {"bus": self.lamp_bus, "latch": self.latch, "mosi": self.mosi,
                          "oe": self.oe, "pin": self.neo_pin},
                "reader": {"rx": self.reader_rx, "tx": self.reader_tx}
                if self.reader_rx is not None else None}

    def _op_set(self, req: dict[str, Any]) -> dict[str, Any]:
        name = self._signal(req, "signal")
        level = req.get("level")
        if level not in (0, 1) or isinstance(level, float):
            raise RequestError("level must be 0 or 1, got %r" % (level,))
        ms = req.get("ms")
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, int)
                               or not 1 <= ms <= 0xFFFF):
            raise RequestError("ms must be an int 1..65535, got %r" % (ms,))
        self._releases.pop(name, None)
        if name in self._held:  # set by hand: the board no longer releases it
            self._unhold(name)
            self._physical[name] = 1 - int(level)
        if ms is not None and self._wire is not None and self._hello:
            # for the board's attention: until it has read the level for ms
            self._hold(name, ms, int(level))
            return {"ok": True, "signal": name, "level": int(level), "held": True}
        self._set_input(name, int(level), "set")
        return {"ok": True, "signal": name, "level": int(level), "held": False}

    def _op_press(self, req: dict[str, Any]) -> dict[str, Any]:
        name = self._signal(req, "key")
        ms = req.get("ms", 120)
        if isinstance(ms, bool) or not isinstance(ms, int) or not 1 <= ms <= 600000:
            raise RequestError("ms must be an int 1..600000, got %r" % (ms,))
        if self._wire is not None and self._hello and ms <= 0xFFFF:
            # for the board's attention: pressed for ms of its reads, then
            # released for as long; a press of a key still held waits
            self._releases.pop(name, None)
            if name in self._held:
                self._queued.setdefault(name, []).append(ms)
                return {"ok": True, "key": name, "ms": ms, "queued": True}
            self._hold(name, ms)
            return {"ok": True, "key": name, "ms": ms, "queued": False}
        self._set_input(name, 1, "press")
        self._releases[name] = time.monotonic() + ms / 1000
        os.write(self._wake_w, b"x")
        return {"ok": True, "key": name, "ms": ms, "queued": False}

    def _op_release(self, req: dict[str, Any]) -> dict[str, Any]:
        name = self._signal(req, "key")
        self._releases.pop(name, None)
        if name in self._held:
            self._unhold(name)
            self._physical[name] = 1  # the board has it pressed: the frame releases it
        self._set_input(name, 0, "release")
        return {"ok": True, "key": name}

    def _op_reader(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.reader_rx is None:
            raise RequestError("this board has no dice reader UART")
        line = req.get("line")
        if not isinstance(line, str):
            raise RequestError("line must be a string")
        data = line.encode("latin-1", "replace")
        if not req.get("raw") and not data.endswith(b"\n"):
            data += b"\n"
        if len(data) > 4000:
            raise RequestError("line too long (%d bytes, at most 4000)" % len(data))
        if self._wire is None or not self._hello:
            raise RequestError("no interpreter is connected: the line would be lost")
        self._send(b"U", bytes((self.reader_rx,)) + data)
        self._event("reader_rx", data=data.decode("latin-1"))
        return {"ok": True, "bytes": len(data)}

    def set_next_reset_cause(self, name: str) -> None:
        """What the next interpreter to connect reads from machine.reset_cause()
        (for the virtual board's relay: "soft" after a soft reset, "power-on"
        after a power cut); a reset the board reports itself overrides it."""
        self.handle({"op": "next_reset_cause", "cause": name})

    def _op_next_reset_cause(self, req: dict[str, Any]) -> dict[str, Any]:
        by_name = {v: k for k, v in RESET_NAMES.items()}
        cause = req.get("cause")
        if cause not in by_name:
            raise RequestError("cause must be one of %s, got %r"
                               % (", ".join(sorted(by_name)), cause))
        self._next_cause = by_name[cause]
        return {"ok": True, "cause": cause}

    def _power(self) -> Any:
        if self.power is None:
            raise RequestError("this table has no board power to switch (a table server "
                               "without a virtual board)")
        return self.power

    def _op_power_cut(self, req: dict[str, Any]) -> dict[str, Any]:
        """As pulling the plug: the interpreter is killed at once, the RTC is
        lost, the serial port disappears; the table (its inputs) stays."""
        self._power().power_cut()
        with self._lock:
            if self._wire is not None and self._sel is not None:
                self._drop_wire("power cut")
            self._next_cause = PWRON_RESET
            self._wdt_due = None
            return {"ok": True, "powered": False, "boots": self._boots}

    def _op_power_on(self, req: dict[str, Any]) -> dict[str, Any]:
        """Power back: the board boots as at power-on (returns at once; the
        boot's `connect` event has boot > the `boots` returned). Nothing if
        the board has power."""
        power = self._power()
        with self._lock:
            boots = self._boots
        was = bool(power.powered)
        power.power_on(timeout=0)
        return {"ok": True, "powered": True, "was_powered": was, "boots": boots}

    def _op_network_down(self, req: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._net().down(req.get("mode", "silent"))
        except ValueError as e:
            raise RequestError(str(e)) from None

    def _op_network_up(self, req: dict[str, Any]) -> dict[str, Any]:
        return self._net().up()

    def _net(self) -> Any:
        if self.network is None:
            raise RequestError("this board has no network (start the virtual board with "
                               "--broker HOST:PORT)")
        return self.network

    def _op_state(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True,
                "powered": bool(self.power.powered) if self.power is not None else None,
                "watchdog_ms": self._wdt_ms if self._wdt_due is not None else None,
                "connected": self._wire is not None and self._hello,
                "boots": self._boots,
                "inputs": dict(self._physical),
                "pressed_until_ms": {n: int((at - self._t0) * 1000)
                                     for n, at in self._releases.items()},
                "held": sorted(self._held),
                "outputs": {n: o.level for n, o in self._outputs.items()},
                "lamps": self._lamps_summary(0),
                "reader_tx": self._reader_tx.decode("latin-1"),
                "resets": [RESET_NAMES.get(c, c) for c in self._resets],
                "next_event": self._next_event}

    def _lamps_summary(self, last: int) -> dict[str, Any]:
        frame = self._frames[-1] if self._frames else None
        out: dict[str, Any] = {
            "bus": self.lamp_bus, "frames": self._frame_count,
            "frame": frame.hex() if frame is not None else None,
            "lit": self._lit(frame) if frame is not None else [],
            "enabled": self._pin_levels.get(self.oe, 0) == 0 if self.oe is not None else True}
        if last:
            out["history"] = [f.hex() for f in self._frames[-last:]]
        return out

    def _op_lamps(self, req: dict[str, Any]) -> dict[str, Any]:
        last = req.get("last", 0)
        if isinstance(last, bool) or not isinstance(last, int) or not 0 <= last <= MAX_FRAMES:
            raise RequestError("last must be an int 0..%d, got %r" % (MAX_FRAMES, last))
        out = self._lamps_summary(last)
        out["ok"] = True
        return out

    def _op_outputs(self, req: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "outputs": {n: o.as_dict() for n, o in self._outputs.items()}}

    def _op_events(self, req: dict[str, Any]) -> dict[str, Any]:
        since = req.get("since", 0)
        if isinstance(since, bool) or not isinstance(since, int) or since < 0:
            raise RequestError("since must be an int >= 0, got %r" % (since,))
        kinds = req.get("kinds")
        if kinds is not None and (not isinstance(kinds, list)
                                  or not all(isinstance(k, str) for k in kinds)):
            raise RequestError("kinds must be a list of event kinds")
        evs = [e for e in self._events if e["n"] >= since
               and (kinds is None or e["kind"] in kinds)]
        first = self._events[0]["n"] if self._events else self._next_event
        return {"ok": True, "events": evs, "next": self._next_event,
                "dropped": max(0, first - since)}
