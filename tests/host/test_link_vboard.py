# The floor link on the virtual board: the simulated network (sim/network.py)
# leads to the broker through the board's relay (host_tools/simnet.py), and
# the table's control socket drops and restores it (network_down,
# network_up) while the link runs on the board's interpreter.
import os
import shutil
import subprocess
import sys
import threading

from linkrig import Floor, wait_for

from brokerkit import start_broker
from host_tools.mprun import BUILD, compile_trees
from host_tools.vboard import VirtualBoard

MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")

BOARD_SCRIPT = """
import asyncio, json, time, network
import linkkit
from link.outbox import Link
from link.wifi import Station

src = linkkit.MemorySource()
downs = []
wifi = Station("floor-net", "secret")
link = Link(src, "S1", "T01", "broker.floor", 1883, "/cursor", wifi=wifi,
            keepalive_s=2, backoff_ms=200, backoff_max_ms=1000, ack_wait_ms=3000,
            down=lambda code, detail: downs.append(code) or print("DOWN", code))

async def main():
    t = asyncio.create_task(link.run())
    seq = 0
    while seq < 30:
        seq += 1
        src.append(linkkit.record(seq))
    link.journaled()
    while link.cursor < 30:
        await asyncio.sleep_ms(20)
    print("P1", wifi.wlan.ifconfig()[0])
    while seq < 90:
        seq += 1
        src.append(linkkit.record(seq))
        link.journaled()
        await asyncio.sleep_ms(50)
    while link.cursor < 90:
        await asyncio.sleep_ms(20)
    t.cancel()
    print("END", json.dumps({"downs": downs, "cursor": link.cursor}))

asyncio.run(main())
"""


def _install(fs):
    compile_trees()
    lib = os.path.join(fs, "lib")
    for sub in ("link", "sicbo"):
        os.makedirs(os.path.join(lib, sub), exist_ok=True)
    for name in ("__init__", "mqtt", "client", "outbox", "wifi"):
        shutil.copy(os.path.join(BUILD, "device", "link", name + ".mpy"),
                    os.path.join(lib, "link"))
    for name in ("__init__", "journal"):
        shutil.copy(os.path.join(BUILD, "device", "sicbo", name + ".mpy"),
                    os.path.join(lib, "sicbo"))
    shutil.copy(os.path.join(BUILD, "tests", "logic", "linkkit.mpy"), lib)


def test_the_link_over_the_boards_network_dropped_and_restored(tmp_path):
    b = start_broker(tmp_path / "mq")
    floor = Floor(b.port)
    vb = VirtualBoard(str(tmp_path / "vb"), broker=("127.0.0.1", b.port))
    try:
        vb.start()
        _install(vb.fs)
        script = tmp_path / "board_link.py"
        script.write_text(BOARD_SCRIPT)
        out = []
        p = subprocess.Popen([MPREMOTE, "connect", vb.port, "run", str(script)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=lambda: out.extend(p.stdout), daemon=True).start()
        wait_for(lambda: any(line.startswith("P1") for line in out), 60, "30 records stored")
        assert floor.seqs("T01")[:30] == list(range(1, 31))
        assert "P1 10.0.0.2" in "".join(out)  # the simulated station's address
        r = vb.table.handle({"op": "network_down"})
        assert r["ok"] and r["network"] == "down" and r["connections"] == 1
        # the link sees its Wi-Fi gone (its connection's bytes are held)
        wait_for(lambda: any(line.startswith("DOWN") for line in out), 30, "the link to notice")
        assert vb.table.handle({"op": "network_up"})["network"] == "up"
        assert vb.table.handle_line(b'{"op": "network_down", "mode": "fly"}')["ok"] is False
        p.wait(120)
        text = "".join(out)
        assert "END" in text, text[-2000:]
        assert floor.seqs("T01") == list(range(1, 91))
        assert '"downs": [1]' in text  # one outage: the Wi-Fi (L_NETWORK), told once
    finally:
        vb.stop()
        floor.stop()
        b.stop()


def test_network_ops_are_refused_without_a_broker(tmp_path):
    vb = VirtualBoard(str(tmp_path / "vb"))
    try:
        vb.start()
        r = vb.table.handle_line(b'{"op": "network_down"}')
        assert r["ok"] is False and "--broker" in r["error"]
    finally:
        vb.stop()
