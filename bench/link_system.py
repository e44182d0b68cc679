"""The whole table's floor figures, for bench/bench_link.py (printed, not
asserted):

1. journaled -> stored: the real firmware on the 64-bit virtual board over
   TLS with the table's own certificate, a real mosquitto (the site's ACL,
   TCP_NODELAY as a site's broker has it), the real floor service; rounds
   played by the demo's dealer. For each record, from the moment the board
   journaled it (its own `ticks`: the unix port's ticks_ms is the host's
   CLOCK_MONOTONIC in ms, the clock this bench reads too) to the moment a
   subscriber of the bench's own receives the floor's acknowledgement that
   covers it (the floor publishes it only after its store committed). p50,
   p99, max.
2. a full backlog: the table file's budget (1,000 rounds' worth of journal)
   journaled by the firmware itself with nothing acknowledged (bench/
   heap_worker.py's fill, on the simulated machine, with the board's floor
   section: the journal keeps every record until the budget, then the oldest
   go), installed on the virtual board, which boots with its network down;
   the network restored, then until the floor acknowledges the last record:
   records/s and seconds.
3. the boot on that backlog on the 32-bit VM at the board's heap (the
   firmware as .mpy, then frozen; bench/heap_worker.py, one power-on): the
   process's time to the running table and the heap in use after the boot,
   beside a boot on an empty journal.

    .venv/bin/python bench/link_system.py [--rounds 40]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
for p in (REPO, os.path.join(REPO, "tests", "host"), BENCH):
    if p not in sys.path:
        sys.path.insert(0, p)

from host_tools import heaps  # noqa: E402


def _pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


class AckClock:
    """When each acknowledgement of a table reaches a subscriber (monotonic)."""

    def __init__(self, port, site, tid):
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.acks = []  # (time, N)
        self.lock = threading.Lock()
        topic = "sicbo/%s/%s/ack" % (site, tid)
        self.c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-ack-clock")
        # The site's read-only account (tests/host/floorsys.py gives it a password).
        from floorsys import READER_PASSWORD

        from host_tools.floor.site import READER_ID

        self.c.username_pw_set(READER_ID, READER_PASSWORD)
        self.c.on_connect = lambda c, u, f, rc, p=None: c.subscribe(topic, qos=1)
        self.c.on_message = self._on_message
        self.c.connect("127.0.0.1", port, keepalive=10)
        self.c.loop_start()

    def _on_message(self, c, u, msg):
        t = time.monotonic()
        try:
            n = int(msg.payload)
        except ValueError:
            return
        with self.lock:
            self.acks.append((t, n))

    def covered(self, seq):
        """The time the first acknowledgement that covers seq came, or None."""
        with self.lock:
            for t, n in self.acks:
                if n >= seq:
                    return t
        return None

    def stop(self):
        self.c.loop_stop()
        self.c.disconnect()


def latency(folder, rounds):
    from floorsys import SITE, Site, Table, wait_delivered

    from sicbo import journal

    site = Site(folder, ["T01"])
    table = Table(site, "T01", os.path.join(folder, "T01"), seed=2)
    clock = None
    try:
        site.start_floor()
        clock = AckClock(site.broker.port, SITE, "T01")
        table.start()
        table.play(2)  # warm: the link up, its session, the floor's feed
        wait_delivered(site, table)
        first = table.last_seq()
        t0 = time.monotonic()
        table.play(rounds)
        wait_delivered(site, table)
        seconds = time.monotonic() - t0
        lat = []
        for seq, raw, _checked in site.stored("T01"):
            if seq <= first:
                continue
            got = clock.covered(seq)
            if got is not None:
                # the board's ticks_ms: CLOCK_MONOTONIC in ms, modulo 2**30
                ms = (int(got * 1000) - journal.Record(raw, 0).ticks) % (1 << 30)
                lat.append(float(ms))
        print("journaled -> stored by the floor service (64-bit virtual board, real firmware, "
              "TLS with the table's certificate, loopback): %d records of %d rounds in %.1f s, "
              "p50 %.0f ms, p99 %.0f ms, max %.0f ms (goal p99 < 250 ms; 1 ms resolution)"
              % (len(lat), rounds, seconds, _pct(lat, 50), _pct(lat, 99),
                 max(lat) if lat else float("nan")))
    finally:
        if clock is not None:
            clock.stop()
        table.stop()
        site.stop()


# ---- a full backlog ------------------------------------------------------------------------

def floor_board(folder, tls, port=None):
    """A copy of bench/virtual-fast.json with a floor section (the tests'
    site), written into folder; port: the broker's (the simulated machine
    without the virtual board's relay connects there)."""
    from floorsys import BROKER_NAME, FAST_BOARD, SITE, WIFI

    with open(FAST_BOARD, encoding="utf-8") as f:
        board = json.load(f)
    board["floor"] = {"site": SITE, "table": "T01", "broker": "127.0.0.1",
                      "port": port or (8883 if tls else 1883), "tls": tls,
                      "server_name": BROKER_NAME, "wifi": WIFI}
    path = os.path.join(folder, "board-%s.json" % ("tls" if tls else "plain"))
    with open(path, "w", encoding="utf-8") as f:
        json.dump(board, f)
    return path


def lone_broker(folder):
    """A mosquitto with the site's ACL and the table's password, and no floor
    service: the table's link connects and publishes, the broker takes every
    publish and nobody acknowledges one (the floor service down)."""
    from floorsys import SITE, password_of

    from host_tools.broker import Broker
    from host_tools.floor import site

    return Broker(os.path.join(folder, "mq"), acl=site.acl_text(SITE), plain_acl=True,
                  passwords={"T01": password_of("T01")}).start()


def fill_backlog(folder, broker):
    """A journal that holds a full backlog (nothing acknowledged), made by
    the firmware on the simulated machine (heap_worker's fill, its link
    connected to `broker`, where no floor service acknowledges); returns
    (its folder, rounds, records, bytes)."""
    import board_heap
    from floorsys import TABLE, password_of

    from sicbo import journal as J
    from sicbo import records as R

    board = floor_board(folder, False, broker.port)
    board_heap.compile_all()
    exe = board_heap.VM32 if os.path.exists(board_heap.VM32) else board_heap.PORT64
    base = board_heap.new_folder("backlog", board=board, table=TABLE)
    os.makedirs(os.path.join(base, "secrets"))
    with open(os.path.join(base, "secrets", "password"), "w") as f:
        f.write(password_of("T01") + "\n")
    with open(os.path.join(base, "secrets", "wifi"), "w") as f:
        f.write("wifi\n")
    r = board_heap.power_on(board_heap.Interp(exe), base, board_heap.FILL_HEAP, "fill", 8, 0, 1, 0)
    if r.failure():
        raise RuntimeError("the backlog could not be made: %s" % r.failure())
    recs = []
    size = 0
    for name in board_heap.segments(base):
        with open(os.path.join(base, name), "rb") as f:
            data = f.read()
        size += len(data)
        recs += J.records(data)
    rounds = len({x.round for x in recs if x.type in (R.J_PAYOUT, R.J_VOID)})
    return base, rounds, len(recs), size, exe


def drain(folder, backlog):
    """The backlog installed on the 64-bit virtual board (TLS), booted with
    its network down, then the network restored: until the floor has it all."""
    import board_heap
    from floorsys import DEADLINE_S, TABLE, Site, Table

    from host_tools import boardstate
    from host_tools.deploy import deploy

    site = Site(folder, ["T01"])
    table = Table(site, "T01", os.path.join(folder, "T01"), seed=3)
    try:
        site.start_floor()
        vb = table.vb
        vb.start(timeout=0)
        vb.wait_ready(60)
        deploy(vb.port, table.board_path, TABLE, reset=False, secrets=table.secrets)
        jdir = os.path.join(vb.fs, "journal")
        shutil.rmtree(jdir, ignore_errors=True)
        os.makedirs(jdir)
        for name in board_heap.segments(backlog):
            shutil.copy(os.path.join(backlog, name), jdir)
        vb.table.handle({"op": "network_down", "mode": "reset"})
        from host_tools.commands import demo

        table.console = demo.BoardConsole(vb.port, table.out, None)
        table.console.open()
        mark = table.console.mark()
        t0 = time.monotonic()
        table.console.type(boardstate.INTERRUPT + boardstate.reset_code(boardstate.clock_tuple()))
        table.wait_running(mark)
        boot_s = time.monotonic() - t0
        last = table.last_seq()
        t0 = time.monotonic()
        vb.table.handle({"op": "network_up"})
        deadline = t0 + DEADLINE_S
        while site.acked("T01") < last:
            if time.monotonic() > deadline:
                raise RuntimeError("the backlog was not drained in %d s (acked %d of %d)"
                                   % (DEADLINE_S, site.acked("T01"), last))
            time.sleep(0.01)
        seconds = time.monotonic() - t0
        stored = len(site.stored("T01"))
        print("the 64-bit virtual board booted on the backlog in %.2f s (reset typed -> its "
              "running line, network down)" % boot_s)
        print("drain of the backlog (network restored -> the floor acknowledged record %d, "
              "TLS): %d records stored in %.2f s: %.0f records/s"
              % (last, stored, seconds, stored / seconds))
    finally:
        table.stop()
        site.stop()


def _firmware_links(folder, names):
    return [n for n in names if os.path.islink(os.path.join(folder, n))]


def vm32_boots(backlog):
    """The boot on the backlog, and on an empty journal (the same files,
    their cache, the secrets), on the 32-bit VMs at the board's heap."""
    import board_heap

    for name, exe in (("32-bit VM, firmware as .mpy", board_heap.VM32),
                      ("32-bit VM, firmware frozen", board_heap.VM32_FROZEN)):
        if not os.path.exists(exe):
            print("%s: not built (make vm32 vm32-frozen MICROPYTHON_SRC=...)" % name)
            continue
        interp = board_heap.Interp(exe)
        for what in ("full backlog", "empty journal"):
            folder = tempfile.mkdtemp(prefix="sicbo-bench-boot-")
            os.rmdir(folder)
            # Without the firmware the fill installed (links to its .mpy
            # files): copied, they would shadow a frozen image's modules.
            shutil.copytree(backlog, folder, ignore=_firmware_links)
            if what == "empty journal":
                for n in board_heap.segments(folder) + ["acked"]:
                    if os.path.exists(os.path.join(folder, n)):
                        os.remove(os.path.join(folder, n))
            heap = heaps.BOARD_HEAP
            t0 = time.monotonic()
            # one round: with no round to play the worker would wait for
            # the floor to acknowledge the journal, which nobody does here
            r = board_heap.power_on(interp, folder, str(heap), "play", 1, 0, 1, 1)
            seconds = time.monotonic() - t0
            why = r.failure()
            if not why:
                board_heap.check_frozen(interp, r)  # the firmware this VM is named for
            if why:
                print("%s, %s, heap %d: did not boot: %s" % (name, what, heap, why))
            else:
                print("%s, %s (%d bytes of journal), heap %d: %.2f s for the process (boot, "
                      "the link connected, one round; x86, not the ESP32's time), heap in "
                      "use after boot %d bytes (%.1f KiB), with the link up %s bytes"
                      % (name, what, board_heap.journal_bytes(folder), heap, seconds,
                         r.boot[2], r.boot[2] / 1024.0, r.link_up_heap))
            shutil.rmtree(folder, ignore_errors=True)


def main(rounds=40):
    folder = tempfile.mkdtemp(prefix="sicbo-bench-floor-link-")
    broker = None
    try:
        latency(os.path.join(folder, "latency"), rounds)
        os.makedirs(os.path.join(folder, "fill"))
        broker = lone_broker(os.path.join(folder, "fill"))
        backlog, n_rounds, n_recs, size, exe = fill_backlog(os.path.join(folder, "fill"), broker)
        print("a full backlog (the table file's budget, 1,000 rounds' worth; journaled by the "
              "firmware on %s with nothing acknowledged): %d rounds, %d records, %d bytes"
              % (os.path.relpath(exe, REPO), n_rounds, n_recs, size))
        drain(os.path.join(folder, "drain"), backlog)
        vm32_boots(backlog)
    finally:
        if broker is not None:
            broker.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=40)
    main(ap.parse_args().rounds)
