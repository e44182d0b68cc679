"""The simulated table (host_tools/simtable.py) through its two sockets: a fake
interpreter speaking the wire protocol, the control channel through
TableClient and raw lines, and one run of the real unix port with
sim/machine.py connected over the wire."""

import json
import os
import socket
import subprocess
import time

import pytest

from host_tools.simclient import TableClient, TableError
from host_tools.simtable import BoardError, TableServer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICROPYTHON = os.path.join(REPO, ".venv", "bin", "micropython")


def board(**changes):
    with open(os.path.join(REPO, "board_config", "boards", "virtual.json")) as f:
        b = json.load(f)
    b.update(changes)
    return b


class FakeBoard:
    """The interpreter's end of the wire, as sim/machine.py speaks it."""

    def __init__(self, path, hello=b"sicbo-sim 1"):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(60)
        self.s.connect(path)
        self.buf = b""
        self.send(b"H", hello)

    def send(self, kind, payload):
        self.s.sendall(kind + len(payload).to_bytes(2, "big") + payload)

    def pin(self, pin, level, ticks):
        self.send(b"P", bytes((pin, level)) + ticks.to_bytes(4, "big"))

    def frame(self):
        while True:
            if len(self.buf) >= 3:
                n = (self.buf[1] << 8) | self.buf[2]
                if len(self.buf) >= 3 + n:
                    kind, pl = self.buf[0:1], self.buf[3:3 + n]
                    self.buf = self.buf[3 + n:]
                    return kind, pl
            data = self.s.recv(4096)
            if not data:
                return None
            self.buf += data

    def sync(self):
        """Read the initial state up to 'Y': (cause, {pin: level})."""
        cause, levels = None, {}
        while True:
            kind, pl = self.frame()
            if kind == b"C":
                cause = pl[0]
            elif kind == b"I":
                levels[pl[0]] = pl[1]
            elif kind == b"Y":
                return cause, levels

    def close(self):
        self.s.close()


@pytest.fixture
def table(tmp_path):
    srv = TableServer(str(tmp_path), board())
    srv.start()
    client = TableClient(srv.control_path)
    yield srv, client
    client.close()
    srv.stop()


def connected(srv):
    fb = FakeBoard(srv.wire_path)
    cause, levels = fb.sync()
    return fb, cause, levels


def test_initial_state_drives_pins_as_the_board_wires_them(table):
    srv, c = table
    c.cover_on()
    fb, cause, levels = connected(srv)
    assert cause == 1  # power-on
    assert levels[34] == 1            # cover on: the sensor board drives high
    assert levels[35] == 0            # clasp open
    assert levels[33] == 2            # bell key released: floating, the pull-up reads 1
    assert len(levels) == 15
    c.wait_for(lambda t: t.state()["connected"], 2)
    fb.close()


def test_set_press_and_release_reach_the_wire(table):
    srv, c = table
    fb, _, _ = connected(srv)
    c.set("clasp_left", 1)
    assert fb.frame() == (b"I", bytes((35, 1)))
    # A press for the board's attention: pin 13 pulled to GND, back to
    # floating once the board has read it so for 150 ms (sim/_sim_wire.py)
    assert c.request("press", key="key_confirm", ms=150)["queued"] is False
    assert fb.frame() == (b"Q", bytes((13, 0, 2, 0, 150)))
    assert c.state()["inputs"]["key_confirm"] == 1 and c.state()["held"] == ["key_confirm"]
    assert c.request("press", key="key_confirm", ms=300)["queued"] is True  # waits for it
    fb.send(b"E", bytes((13,)))  # the board saw the press and the release
    assert fb.frame() == (b"Q", bytes((13, 0, 2, 1, 44)))  # then the next press
    fb.send(b"E", bytes((13,)))
    c.wait_for(lambda t: t.state()["inputs"]["key_confirm"] == 0)
    evs = [(e["level"], e["how"]) for e in c.events(kinds=["input"])["events"]
           if e["signal"] == "key_confirm"]
    assert evs == [(1, "press"), (0, "release"), (1, "press"), (0, "release")]
    # released by the table before the board did: an I frame ends the hold
    c.press("key_void", ms=10000)
    assert fb.frame() == (b"Q", bytes((14, 0, 2, 0x27, 0x10)))
    c.release("key_void")
    assert fb.frame() == (b"I", bytes((14, 2)))
    assert c.state()["held"] == []
    c.set("cover", 1)
    c.set("cover", 1)  # no change, no frame
    c.set("cover", 0)
    assert fb.frame() == (b"I", bytes((34, 1)))
    assert fb.frame() == (b"I", bytes((34, 0)))
    # a level set for the board's attention: kept, and E once it has taken it
    assert c.request("set", signal="cover", level=1, ms=40)["held"] is True
    assert fb.frame() == (b"Q", bytes((34, 1, 1, 0, 40)))
    assert c.state()["inputs"]["cover"] == 1 and c.state()["held"] == ["cover"]
    fb.send(b"E", bytes((34,)))
    c.wait_for(lambda t: t.state()["held"] == [])
    assert c.state()["inputs"]["cover"] == 1
    # the board gone while it holds a key: the key is released (a key held
    # through the next power-on would change that boot)
    c.press("key_confirm", ms=100)
    assert fb.frame()[0] == b"Q"
    fb.close()
    c.wait_for(lambda t: not t.state()["connected"])
    assert c.state()["inputs"]["key_confirm"] == 0 and c.state()["held"] == []


def test_a_press_with_no_board_is_released_after_its_time(table):
    srv, c = table
    since = c.state()["next_event"]
    c.press("key_confirm", ms=150)
    assert c.state()["inputs"]["key_confirm"] == 1
    c.wait_for(lambda t: t.state()["inputs"]["key_confirm"] == 0)
    evs = c.events(since, ["input"])["events"]
    assert [(e["level"], e["how"]) for e in evs] == [(1, "press"), (0, "release")]
    assert evs[1]["t_ms"] - evs[0]["t_ms"] >= 150  # the table's clock
    fb, _, levels = connected(srv)
    assert levels[13] == 2  # a board that connects later finds it released
    fb.close()

def test_solenoid_on_times_come_from_board_ticks(table):
    srv, c = table
    fb, _, _ = connected(srv)
    since = c.state()["next_event"]
    fb.pin(25, 1, 1000)
    fb.pin(25, 0, 1060)
    fb.pin(25, 1, 0xFFFFFFF0)  # the 32-bit tick field wraps
    fb.pin(25, 0, 0x00000010)
    fb.pin(27, 1, 2000)
    out = c.wait_for(lambda t: (o := t.outputs())["bell"]["level"] == 1 and o)
    assert out["solenoid"]["on_ms"] == [60, 32]
    assert out["solenoid"]["on_count"] == 2 and out["solenoid"]["level"] == 0
    evs = c.events(since, ["output"])["events"]
    assert [(e["signal"], e["level"]) for e in evs] == [
        ("solenoid", 1), ("solenoid", 0), ("solenoid", 1), ("solenoid", 0), ("bell", 1)]
    assert evs[1]["on_ms"] == 60
    fb.send(b"M", bytes((25,)) + (20000).to_bytes(4, "big") + (19660).to_bytes(2, "big"))
    out = c.wait_for(lambda t: (o := t.outputs())["solenoid"]["pwm"] and o)
    assert out["solenoid"]["pwm"] == {"freq": 20000, "duty_u16": 19660}
    fb.close()
    # The interpreter died: the table sees every output drop.
    out = c.wait_for(lambda t: (o := t.outputs())["bell"]["level"] == 0 and o)
    assert out["bell"]["on_count"] == 1


def test_lamp_frames_are_taken_at_the_latch_edge(table):
    srv, c = table
    fb, _, _ = connected(srv)
    fb.send(b"S", bytes((23, 18)) + b"\x80")
    fb.send(b"S", bytes((23, 18)) + b"\x01\x06")
    fb.send(b"S", bytes((13, 14)) + b"\xff")  # another bus: not the lamps
    assert c.lamps()["frame"] is None
    fb.pin(19, 1, 5)
    fb.pin(19, 0, 6)
    lamps = c.wait_for(lambda t: (x := t.lamps())["frames"] == 1 and x)
    assert lamps["frame"] == "800106"
    # channel c is bit c%8 of byte n-1-c//8
    assert lamps["lit"] == [1, 2, 8, 23]
    fb.pin(19, 1, 7)  # re-latch without shifting: the chain still holds the frame
    fb.send(b"S", bytes((23, 18)) + b"\x00\x00\x01")
    fb.pin(19, 0, 8)
    fb.pin(19, 1, 9)
    lamps = c.wait_for(lambda t: (x := t.lamps(last=5))["frames"] == 3 and x)
    assert lamps["history"] == ["800106", "800106", "000001"]
    assert lamps["lit"] == [0]
    assert lamps["enabled"] is True
    fb.pin(4, 1, 10)  # /OE high: the chain's outputs are off
    c.wait_for(lambda t: not t.lamps()["enabled"])
    fb.close()


def test_lamp_names_and_neopixel(tmp_path):
    b = board(lamps={"bus": "neopixel", "pin": 4, "count": 3})
    with TableServer(str(tmp_path), b, lamp_names=["PLACE_BETS", None, "BIG"]) as srv:
        with TableClient(srv.control_path) as c:
            fb, _, _ = connected(srv)
            fb.send(b"N", bytes((4,)) + bytes([0, 0, 0, 1, 0, 0, 0, 9, 0]))
            lamps = c.wait_for(lambda t: (x := t.lamps())["frames"] and x)
            assert lamps["bus"] == "neopixel"
            assert lamps["lit"] == [1, "BIG"]
            fb.close()


def test_reader_lines_and_reader_tx(table):
    srv, c = table
    with pytest.raises(TableError, match="no interpreter"):
        c.reader_line("D 1 2 3")
    fb, _, _ = connected(srv)
    assert c.reader_line("D 1 2 3*5A") == 11
    assert fb.frame() == (b"U", bytes((16,)) + b"D 1 2 3*5A\n")
    c.reader_line("partial", raw=True)
    assert fb.frame() == (b"U", bytes((16,)) + b"partial")
    fb.send(b"U", bytes((17,)) + b"ACK 7\n")
    st = c.wait_for(lambda t: (s := t.state())["reader_tx"] and s)
    assert st["reader_tx"] == "ACK 7\n"
    fb.close()


def test_reset_cause_survives_the_interpreter_restart(table):
    srv, c = table
    fb, cause, _ = connected(srv)
    assert cause == 1
    fb.send(b"R", bytes((3,)))  # watchdog
    fb.close()
    c.wait_for(lambda t: not t.state()["connected"])
    fb, cause, _ = connected(srv)
    assert cause == 3
    st = c.state()
    assert st["resets"] == ["watchdog"] and st["boots"] == 2
    fb.close()
    c.wait_for(lambda t: not t.state()["connected"])
    fb, cause, _ = connected(srv)  # killed without a reset frame: a power cut
    assert cause == 1
    fb.close()


def test_next_reset_cause_set_by_the_relay(table):
    srv, c = table
    srv.set_next_reset_cause("soft")
    fb, cause, _ = connected(srv)
    assert cause == 5
    fb.close()
    c.wait_for(lambda t: not t.state()["connected"])
    assert c.request("next_reset_cause", cause="hard")["cause"] == "hard"
    fb, cause, _ = connected(srv)
    assert cause == 2
    fb.close()
    with pytest.raises(TableError, match="cause must be one of"):
        c.request("next_reset_cause", cause="brownout")


def test_new_wire_connection_replaces_the_old(table):
    srv, c = table
    old, _, _ = connected(srv)
    new, _, _ = connected(srv)
    assert old.frame() is None  # the table closed the old one
    c.set("shake", 1)
    assert new.frame() == (b"I", bytes((39, 1)))
    evs = c.events(0, ["disconnect"])["events"]
    assert evs and "replaced" in evs[0]["why"]
    new.close()


def test_wrong_protocol_hello_is_dropped(table):
    srv, c = table
    fb = FakeBoard(srv.wire_path, hello=b"sicbo-sim 99")
    assert fb.frame() is None
    ev = c.wait_event("error")
    assert "sicbo-sim 99" in ev["message"]
    assert not c.state()["connected"]
    fb.close()


def test_bad_requests_get_clear_errors(table):
    srv, c = table
    cases = [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "JSON object"),
        (b'{"op": "fly"}', "unknown op 'fly'"),
        (b'{"nop": 1}', "unknown op None"),
        (b'{"op": "set", "signal": "lid", "level": 1}', "unknown input signal 'lid'"),
        (b'{"op": "set", "signal": "cover", "level": 2}', "level must be 0 or 1"),
        (b'{"op": "set", "signal": "cover", "level": 0.5}', "level must be 0 or 1"),
        (b'{"op": "set", "signal": "cover"}', "level must be 0 or 1"),
        (b'{"op": "press", "key": "key_bell", "ms": 0}', "ms must be"),
        (b'{"op": "press", "key": "key_bell", "ms": "long"}', "ms must be"),
        (b'{"op": "press", "key": "bell"}', "unknown input key 'bell'"),
        (b'{"op": "reader", "line": 5}', "line must be a string"),
        (b'{"op": "events", "since": -1}', "since must be"),
        (b'{"op": "events", "kinds": "lamps"}', "kinds must be"),
        (b'{"op": "lamps", "last": 100000}', "last must be"),
    ]
    for line, msg in cases:
        reply = c.raw(line)
        assert reply["ok"] is False, line
        assert msg in reply["error"], (line, reply)
    assert "ping" in c.raw(b'{"op": "fly"}')["error"]  # lists the valid ops
    # The channel survives bad requests and echoes ids.
    assert c.raw(b'{"op": "ping", "id": "abc"}') == {"ok": True, "protocol": "sicbo-sim 1",
                                                      "id": "abc"}
    with pytest.raises(TableError, match="unknown input"):
        c.set("lid", 1)
    assert c.state()["inputs"]["cover"] == 0  # nothing changed


def test_events_since_and_signals(table):
    srv, c = table
    c.cover_on()
    c.fasten_clasps()
    c.open_clasps()
    c.supervisor(True)
    got = c.events(0)
    assert [(e["signal"], e["level"]) for e in got["events"]] == [
        ("cover", 1), ("clasp_left", 1), ("clasp_right", 1), ("clasp_left", 0),
        ("clasp_right", 0), ("supervisor", 1)]
    assert got["next"] == 6 and got["dropped"] == 0
    assert [e["n"] for e in c.events(4)["events"]] == [4, 5]
    assert c.events(6)["events"] == []
    sig = c.signals()
    assert sig["inputs"]["cover"] == 34 and sig["outputs"]["solenoid"] == 25
    assert sig["lamps"]["latch"] == 19 and sig["reader"] == {"rx": 16, "tx": 17}


def test_board_errors(tmp_path):
    with pytest.raises(BoardError, match="inputs.cover"):
        TableServer(str(tmp_path), board(inputs={"cover": {"pin": 40}}))
    with pytest.raises(BoardError, match="outputs.bell"):
        TableServer(str(tmp_path), board(outputs={"bell": "x"}))
    with pytest.raises(BoardError, match="latch"):
        TableServer(str(tmp_path), board(lamps={"bus": "hc595", "mosi": 23}))
    # A plain signal -> pin map is accepted.
    srv = TableServer(str(tmp_path), {"inputs": {"cover": 34}, "outputs": {"bell": 27},
                                      "lamps": {"bus": "hc595", "mosi": 23, "latch": 19}})
    assert srv.handle({"op": "signals"})["inputs"] == {"cover": 34}


def test_too_long_a_run_folder_is_refused(tmp_path):
    srv = TableServer(str(tmp_path / ("x" * 120)), board())
    with pytest.raises(ValueError, match="107 bytes"):
        srv.start()


def test_stop_removes_the_sockets(tmp_path):
    srv = TableServer(str(tmp_path), board())
    srv.start()
    assert os.path.exists(srv.wire_path) and os.path.exists(srv.control_path)
    srv.stop()
    assert not os.path.exists(srv.wire_path) and not os.path.exists(srv.control_path)
    assert not srv._thread.is_alive()
    with pytest.raises(TableError, match="cannot reach"):
        TableClient(srv.control_path)


BOARD_SCRIPT = r"""
import sys
sys.path.insert(0, %(sim)r)
import machine, time
from machine import Pin, SPI, UART
print("cause", machine.reset_cause(), machine.sim_wire_connected())
cover = Pin(34, Pin.IN)
key = Pin(33, Pin.IN, Pin.PULL_UP)
print("levels", cover.value(), key.value())
sol = Pin(25, Pin.OUT, value=0)
latch = Pin(19, Pin.OUT, value=0)
spi = SPI(2, baudrate=1000000, sck=Pin(18), mosi=Pin(23), miso=Pin(4))
u = UART(2, baudrate=9600, tx=Pin(17), rx=Pin(16))
falls = []
key.irq(lambda p: falls.append(1), Pin.IRQ_FALLING)
tim = machine.Timer(0)
tim.init(mode=machine.Timer.ONE_SHOT, period=80, callback=lambda t: sol.off())
sol.on()
spi.write(b"\x00\x05")
latch.on()
latch.off()
u.write(b"HELLO\n")
t0 = time.ticks_ms()
line = None
while time.ticks_diff(time.ticks_ms(), t0) < 60000 and not (line and falls):
    machine.idle()
    if u.any():
        line = u.readline()
print("got", line, len(falls), cover.value(), sol.value())
w = machine.WDT(timeout=50)
while True:
    machine.idle()
"""


@pytest.mark.skipif(not os.path.exists(MICROPYTHON), reason="no unix-port micropython")
def test_real_interpreter_over_the_wire(table, tmp_path):
    srv, c = table
    c.cover_on()
    script = tmp_path / "board.py"
    script.write_text(BOARD_SCRIPT % {"sim": os.path.join(REPO, "sim")})
    env = dict(os.environ, SICBO_SIM_WIRE=srv.wire_path)
    p = subprocess.Popen([MICROPYTHON, "-X", "heapsize=110k", str(script)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        c.wait_for(lambda t: t.outputs()["solenoid"]["on_count"] == 1)
        c.cover_off()  # the wire keeps the order: the cover is off before the line arrives
        c.press("key_bell", ms=50)
        c.reader_line("D 6 6 6")
        out, _ = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = out.decode()
    assert "cause 1 True" in text
    assert "levels 1 1" in text
    # the solenoid off: the one-shot timer did it (the script never does)
    assert "got b'D 6 6 6\\n' 1 0 0" in text
    assert p.returncode != 0 and "WDT reset" in text  # the watchdog reset ends the process
    on = c.outputs()["solenoid"]["on_ms"]
    assert len(on) == 1 and on[0] >= 78  # after its 80 ms (later on a loaded host)
    lamps = c.lamps()
    assert lamps["frame"] == "0005" and lamps["lit"] == [0, 2]
    st = c.state()
    assert st["reader_tx"] == "HELLO\n" and st["resets"] == ["watchdog"]
    assert not st["connected"]


@pytest.mark.skipif(not os.path.exists(MICROPYTHON), reason="no unix-port micropython")
def test_resets_exit_with_the_virtual_boards_status(table, tmp_path):
    srv, c = table
    script = tmp_path / "reset.py"
    script.write_text("import sys\nsys.path.insert(0, %r)\nimport machine\n"
                      "machine.Pin(25, machine.Pin.OUT, value=1)\n"
                      "machine.%s()\nprint('not reached')\n"
                      % (os.path.join(REPO, "sim"), "reset"))
    env = dict(os.environ, SICBO_SIM_WIRE=srv.wire_path, SICBO_VBOARD_RESET_EXIT="233")
    r = subprocess.run([MICROPYTHON, str(script)], env=env, capture_output=True, timeout=120)
    assert r.returncode == 233 and b"not reached" not in r.stdout
    script.write_text(script.read_text().replace("machine.reset()", "machine.soft_reset()"))
    r = subprocess.run([MICROPYTHON, str(script)], env=env, capture_output=True, timeout=120)
    assert r.returncode == 0 and b"not reached" not in r.stdout
    c.wait_for(lambda t: len(t.state()["resets"]) == 2)
    st = c.state()
    assert st["resets"] == ["hard", "soft"] and st["boots"] == 2
    assert c.outputs()["solenoid"]["on_count"] == 2  # released by each reset


def test_the_watchdog_runs_on_wall_time(table):
    srv, c = table
    fb, _cause, _ = connected(srv)
    fed = []

    def fire():
        fed.append(time.monotonic())

    srv.on_watchdog = fire
    fb.send(b"W", (2000).to_bytes(4, "big"))  # armed: 2 s (room for a loaded host)
    for _ in range(4):  # fed in time: no reset
        time.sleep(0.1)
        fb.send(b"W", (2000).to_bytes(4, "big"))
    last_feed = time.monotonic()
    assert c.state()["watchdog_ms"] == 2000
    assert fed == []
    c.wait_for(lambda t: fed)  # then not fed: it runs out
    assert fed[0] - last_feed >= 2.0
    assert c.state()["resets"] == ["watchdog"] and c.state()["watchdog_ms"] is None
    ev = c.events(kinds=["reset", "watchdog"])["events"]
    assert [e["kind"] for e in ev] == ["watchdog", "reset"]
    assert ev[1]["cause"] == "watchdog" and ev[1]["by"] == "table"
    fb.close()
    c.wait_for(lambda t: not t.state()["connected"])
    fb, cause, _ = connected(srv)
    assert cause == 3  # the next boot reads WDT_RESET
    fb.close()


def test_the_watchdog_stops_with_the_interpreter_and_at_a_reset(table):
    srv, c = table
    fired = []
    srv.on_watchdog = lambda: fired.append(1)
    fb, _cause, _ = connected(srv)
    fb.send(b"W", (200).to_bytes(4, "big"))
    fb.send(b"R", bytes((2,)))  # machine.reset(): the watchdog stops
    c.wait_for(lambda t: t.state()["resets"] == ["hard"])
    fb.close()
    fb, _cause, _ = connected(srv)
    fb.send(b"W", (200).to_bytes(4, "big"))
    fb.close()  # the interpreter ended (soft reset, a kill)
    c.wait_for(lambda t: not t.state()["connected"])
    time.sleep(0.4)
    assert fired == [] and c.state()["resets"] == ["hard"]


def test_power_ops_need_a_board(table):
    _srv, c = table
    for op in ("power_cut", "power_on"):
        with pytest.raises(TableError, match="no board power"):
            c.request(op)
    assert c.state()["powered"] is None


STARVED_SCRIPT = r"""
import sys
sys.path.insert(0, %(sim)r)
import machine, time
from machine import Pin
key = Pin(13, Pin.IN, Pin.PULL_UP)
print("ready", key.value())
reads = []
t0 = time.ticks_ms()
while time.ticks_diff(time.ticks_ms(), t0) < 60000 and reads[-3:] != [1, 1, 1]:
    v = key.value()
    if v == 0 or reads:
        reads.append(v)
    time.sleep_ms(300)  # a starved board: 300 ms between two reads
print("reads", reads)
reads = []
while time.ticks_diff(time.ticks_ms(), t0) < 120000 and reads[-3:] != [0, 0, 0]:
    reads.append(key.value())
    time.sleep_ms(300)
print("then", reads)
while machine.sim_wire_connected():  # until the host is done
    time.sleep_ms(20)
    key.value()
"""


@pytest.mark.skipif(not os.path.exists(MICROPYTHON), reason="no unix-port micropython")
def test_a_starved_board_sees_a_short_press_and_its_release(table, tmp_path):
    # 50 ms pressed, while the board reads the key every 300 ms: a press on
    # wall time would come and go between two reads. For the board's
    # attention it is read pressed, twice at least 50 ms after the first
    # read, then released as long, before the table has it released.
    srv, c = table
    script = tmp_path / "starved.py"
    script.write_text(STARVED_SCRIPT % {"sim": os.path.join(REPO, "sim")})
    env = dict(os.environ, SICBO_SIM_WIRE=srv.wire_path)
    p = subprocess.Popen([MICROPYTHON, "-X", "heapsize=110k", str(script)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert p.stdout.readline().decode().split() == ["ready", "1"]
        c.press("key_confirm", ms=50, wait=True)
        line = p.stdout.readline().decode()
        # a level set for its attention: set() returns once it has read it so
        c.set("key_confirm", 1, wait_ms=50)
        assert c.state()["inputs"]["key_confirm"] == 1 and c.state()["held"] == []
        then = p.stdout.readline().decode()
    finally:
        p.kill()
        p.wait()
    assert line.split(None, 1) == ["reads", "[0, 0, 0, 1, 1, 1]\n"], line
    assert then.startswith("then [") and then.rstrip().endswith("0, 0, 0]"), then
