# The floor service at its edges, with a real mosquitto (each found in a
# review, each seen failing before its fix):
# - a table's status with a number past SQLite's integers stopped the service
#   (a store write that fails stops it) for every table, at every restart;
# - after a reconnection the service told the tables records were stored
#   that its open batch had taken but not yet committed;
# - a table that sent again only what the floor already stored (its saved
#   cursor behind) was never told where the floor stands.
import asyncio
import sqlite3
import subprocess
import threading
import time

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from brokerkit import start_broker
from floorkit import SITE, FloorProc, broker_for, q, sim_tables, wait_for
from host_tools.floor import service
from host_tools.floor.simtables import TableJournal


def test_a_status_number_past_any_table_is_not_taken_and_the_service_plays_on(tmp_path):
    b, pw = broker_for(tmp_path, ["T1", "T2"])
    floor = FloorProc(tmp_path, b.port).start()
    sim = sim_tables(b.port, pw, ["T2"]).start()
    try:
        sim.play(2)
        wait_for(sim.all_acked, "T2 acknowledged", alive=floor.dead)
        # T1 publishes, under its own id as the ACL allows, a retained status.
        subprocess.run(["mosquitto_pub", "-p", str(b.port), "-u", "T1", "-P", pw["T1"], "-q",
                        "1", "-r", "-t", "sicbo/%s/T1/status" % SITE, "-m",
                        '{"online": true, "seq": 18446744073709551616, "round": 4294967296,'
                        ' "missing": [[1, 18446744073709551616]]}'], check=True, timeout=60)
        wait_for(lambda: q(floor.db, "SELECT COUNT(*) FROM status_log WHERE table_id='T1'")
                 == [(1,)], "T1's status stored", alive=floor.dead)
        assert q(floor.db, "SELECT online, status_seq, round, missing FROM tables"
                 " WHERE table_id='T1'") == [(1, 0, None, "[]")]
        sim.play(1)
        wait_for(sim.all_acked, "T2's new round acknowledged", alive=floor.dead)
        floor.stop()
        floor.start()  # the retained status again, to a new session: taken the same way
        sim.play(1)
        wait_for(sim.all_acked, "T2 acknowledged after the restart", alive=floor.dead)
    finally:
        sim.stop()
        floor.stop()
        b.stop()


def _committed(db, tid):
    ro = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return ro.execute("SELECT COUNT(*) FROM records WHERE table_id=?", (tid,)).fetchone()[0]
    finally:
        ro.close()


def test_after_a_reconnection_only_what_is_committed_is_acknowledged(tmp_path):
    b = start_broker(tmp_path / "broker")
    db = str(tmp_path / "floor.db")
    tj = TableJournal(1)
    for _ in range(3):
        tj.play_round()
    recs = tj.records
    said = []
    svc = service.Service(service.Options("127.0.0.1", b.port, "S1", db, table=tj.table,
                                          log=said.append))
    svc.start()
    told = []  # (ack published, records committed at that moment)
    publish = svc.client.publish

    def watching(topic, payload=None, *a, **kw):
        if topic.endswith("/ack"):
            told.append((int(payload), _committed(db, "T1")))
        return publish(topic, payload, *a, **kw)

    svc.client.publish = watching

    def run():
        svc.stopping = False
        t = threading.Thread(target=svc.run, daemon=True)
        t.start()
        return t

    table = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="T1", protocol=mqtt.MQTTv311)
    table.connect("127.0.0.1", b.port)
    table.loop_start()
    try:
        th = run()
        # Subscribed, not only connected: a record published before the
        # broker took the subscription has no subscriber yet and is not
        # queued for the service's new session (a table's link sends it
        # again; this test's table does not).
        wait_for(lambda: any(x.startswith("subscribed to ") for x in said),
                 "the service subscribed")
        for r in recs[:10]:
            table.publish("sicbo/S1/T1/journal", r, qos=1).wait_for_publish(60)
        wait_for(lambda: "T1" in svc.floor.feeds and svc.floor.feeds["T1"].acked == 10,
                 "the first 10 acknowledged")
        # The service's connection drops; its session stays at the broker.
        svc.stopping = True
        th.join(60)
        svc.client.disconnect()
        svc.client.loop(0.2)
        # Meanwhile: publishes of its own not yet acknowledged by the broker
        # (paho holds them), and the table's next records queued for it.
        for _ in range(3):
            publish("sicbo/S1/T9/ack", b"0", qos=1)
        for r in recs[10:]:
            table.publish("sicbo/S1/T1/journal", r, qos=1).wait_for_publish(60)
        th = run()
        wait_for(lambda: svc.floor.feeds["T1"].acked == len(recs), "all acknowledged")
        svc.stopping = True
        th.join(60)
        assert told and [(a, c) for a, c in told if a > c] == []
    finally:
        table.loop_stop()
        svc.stop()
        b.stop()


def test_a_table_that_sends_again_only_what_is_stored_is_set_forward(tmp_path):
    import linkkit
    from link.outbox import Link, write_cursor
    from linkio import open_socket

    from host_tools.rules import load_table

    b = start_broker(tmp_path / "broker")
    _cfg, table = load_table(None)
    svc = service.Service(service.Options("127.0.0.1", b.port, "S1", str(tmp_path / "f.db"),
                                          table=table, log=lambda line: None))
    svc.start()
    th = threading.Thread(target=svc.run, daemon=True)
    th.start()
    src = linkkit.MemorySource()
    src.add(1, 200)
    cursor = str(tmp_path / "cursor")

    async def until(link, cond, seconds=120):
        task = asyncio.create_task(link.run())
        try:
            deadline = time.monotonic() + seconds
            while not cond() and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
        return cond()

    try:
        link = Link(src, "S1", "T1", "127.0.0.1", b.port, cursor, opener=open_socket)
        assert asyncio.run(until(link, lambda: link.cursor == 200))
        # A power cut before the cursor was saved: its file says 100, and the
        # journal holds nothing new. Without the floor's word on duplicates
        # the link would send 101..200 again at every go-back, for ever.
        write_cursor(cursor, 100)
        again = Link(src, "S1", "T1", "127.0.0.1", b.port, cursor, opener=open_socket,
                     ack_wait_ms=600000)  # no go-back: the floor's answer alone moves it
        assert asyncio.run(until(again, lambda: again.cursor == 200)), linkkit.stats(again)
        assert svc.floor.feeds["T1"].duplicates >= 1
    finally:
        svc.stopping = True
        th.join(60)
        svc.stop()
        b.stop()
