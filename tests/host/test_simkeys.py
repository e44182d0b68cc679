"""The dealer's keys on the 74HC165 chain of a board file, through the
simulated table (host_tools/simtable.py, host_tools/simkeys.py): the wire
frames that attach and drive the chain, and the real unix port reading the
keys with the firmware's own hw.inputs while it writes lamp frames on the
same bus."""

import json
import os
import socket
import subprocess

import pytest

from host_tools.simtable import TableServer

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICROPYTHON = os.path.join(REPO, ".venv", "bin", "micropython")


def chain_board():
    with open(os.path.join(REPO, "board_config", "boards", "esp32-devkitc.json")) as f:
        return json.load(f)


def _frames(sock):
    buf = b""
    while True:
        while len(buf) >= 3 and len(buf) >= 3 + ((buf[1] << 8) | buf[2]):
            n = (buf[1] << 8) | buf[2]
            yield buf[0:1], buf[3:3 + n]
            buf = buf[3 + n:]
        data = sock.recv(4096)
        if not data:
            return
        buf += data


def test_wire_attaches_the_chain_and_drives_the_keys(tmp_path):
    b = chain_board()
    with TableServer(str(tmp_path), b) as srv:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(srv.wire_path)
        s.sendall(b"H\x00\x0bsicbo-sim 1")
        got = []
        frames = _frames(s)
        for kind, pl in frames:
            got.append((kind, bytes(pl)))
            if kind == b"Y":
                break
        kinds = [k for k, _ in got]
        assert kinds.index(b"A") < kinds.index(b"K")
        assert (b"A", bytes((21, 18, 22, 16, 0))) in got
        ks = {pl[1]: pl[2] for k, pl in got if k == b"K" and pl[0] == 21}
        assert ks[15] == 1 and all(ks[bit] == 0 for bit in (10, 11, 12, 13, 14))
        assert all(ks[bit] == 1 for bit in range(10))  # keys up: pulled high
        assert srv.handle({"op": "signals"})["inputs"]["key_confirm"] is None
        srv.handle({"op": "set", "signal": "key_confirm", "level": 1})
        for kind, pl in frames:
            if kind == b"K":
                assert bytes(pl) == bytes((21, 3, 0))  # pressed: to GND
                break
        else:
            raise AssertionError("no K frame after the press")
        s.close()


BOARD_SCRIPT = r"""
import json, sys, time
sys.path.insert(0, %(sim)r)
sys.path.insert(0, %(device)r)
import machine
from machine import Pin
from sicbo import board as B
with open(%(board)r) as f:
    b = B.parse_board(json.load(f))
from hw import inputs
from sicbo import signals as S
spi = inputs.spi_for(b)
sw = inputs.make_switches(b, time.ticks_ms, spi)
latch = Pin(19, Pin.OUT, value=0)
print("ready", sw.faults)
ev = [0, 0, 0, 0]
t0 = time.ticks_ms()
seen = []
while time.ticks_diff(time.ticks_ms(), t0) < 5000 and len(seen) < 2:
    sw.update(time.ticks_ms())
    spi.write(b"\x00\x05")
    latch.on()
    latch.off()
    while sw.pop(ev):
        if ev[2]:
            seen.append(S.INPUT_SIGNALS[ev[1]])
            print("pressed", S.INPUT_SIGNALS[ev[1]])
    time.sleep_ms(5)
print("held", inputs.confirm_held(b), "faults", sw.faults)
"""


@pytest.mark.skipif(not os.path.exists(MICROPYTHON), reason="no unix-port micropython")
def test_real_interpreter_reads_the_keys_through_the_chain(tmp_path):
    path = tmp_path / "board.json"
    path.write_text(json.dumps(chain_board()))
    script = tmp_path / "board.py"
    script.write_text(BOARD_SCRIPT % {"sim": os.path.join(REPO, "sim"),
                                      "device": os.path.join(REPO, "device"),
                                      "board": str(path)})
    with TableServer(str(tmp_path / "run"), chain_board()) as srv:
        env = dict(os.environ, SICBO_SIM_WIRE=srv.wire_path)
        p = subprocess.Popen([MICROPYTHON, "-X", "heapsize=400k", str(script)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            line = p.stdout.readline().decode()
            assert line.startswith("ready 0"), line
            srv.handle({"op": "press", "key": "key_face_4", "ms": 200})
            line = p.stdout.readline().decode()
            assert line.strip() == "pressed key_face_4", line
            srv.handle({"op": "set", "signal": "key_confirm", "level": 1})
            out, _ = p.communicate(timeout=10)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        text = out.decode()
        assert "pressed key_confirm" in text and "held True faults 0" in text, text
        lamps = srv.handle({"op": "lamps", "last": 5})
        # The key reads clocked the 595s too, but each frame is the lamp write.
        assert lamps["frame"] == "0005" and set(lamps["history"]) == {"0005"}
