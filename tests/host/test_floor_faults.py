# The floor service through crashes in the middle of a stream: its own
# kill -9 and restart, the broker's kill -9 and restart. After each, the
# store holds every record of every table exactly once, in order, and every
# table's cursor reaches its last record.
from floorkit import (
    FloorProc,
    Player,
    assert_every_record_once,
    broker_for,
    sim_tables,
    stored_count,
    wait_for,
)

IDS = ["T%02d" % i for i in range(1, 9)]


def test_the_service_killed_and_restarted_mid_stream_loses_nothing(tmp_path):
    b, pw = broker_for(tmp_path, IDS)
    floor = FloorProc(tmp_path, b.port).start()
    # No resend by the tables: what reaches the store after the crash is what
    # the broker kept for the floor's session (queued while it was down, and
    # delivered again when its PUBACK never came).
    sim = sim_tables(b.port, pw, IDS, batch=3, resend_s=10**6).start()
    try:
        with Player(sim, every=0.02):
            wait_for(lambda: stored_count(floor.db) >= 300, "records stored before the kill",
                     alive=floor.dead)
            floor.kill()
            at_kill = stored_count(floor.db)
            made = sim.total_records()
            wait_for(lambda: sim.total_records() > made + 200, "the tables playing on")
            floor.start()
            wait_for(lambda: stored_count(floor.db) > at_kill + 200,
                     "records stored after the restart", alive=floor.dead)
        wait_for(sim.all_acked, "every record acknowledged", alive=floor.dead)
        assert_every_record_once(floor.db, sim)
        second = floor.log().split("floor: store ")[2]
        assert "%d records" % at_kill in second.splitlines()[0]  # the store it found
        assert "session present: True" in second
    finally:
        sim.stop()
        floor.stop()
        b.stop()


def test_the_broker_killed_and_restarted_mid_stream_loses_nothing(tmp_path):
    b, pw = broker_for(tmp_path, IDS)
    floor = FloorProc(tmp_path, b.port).start()
    # kill -9 loses what the broker had not saved (up to a second): the
    # tables send again from their cursor when the acknowledgement stalls.
    sim = sim_tables(b.port, pw, IDS, batch=3, resend_s=2.0).start()
    try:
        with Player(sim, every=0.02):
            wait_for(lambda: stored_count(floor.db) >= 300, "records stored before the kill",
                     alive=floor.dead)
            b.kill()
            wait_for(lambda: not any(t.connected for t in sim.tables),
                     "the tables seeing the broker gone")
            made = sim.total_records()
            wait_for(lambda: sim.total_records() > made + 200, "the tables playing on")
            at_restart = stored_count(floor.db)
            b.restart()
            wait_for(lambda: floor.log().count("connected to") >= 2,
                     "the service connected again", alive=floor.dead)
            wait_for(lambda: stored_count(floor.db) > at_restart + 200,
                     "records stored after the restart", alive=floor.dead)
        wait_for(sim.all_acked, "every record acknowledged", alive=floor.dead)
        assert_every_record_once(floor.db, sim)
        assert floor.dead() is None and floor.starts == 1  # it kept running
        assert "disconnected from the broker" in floor.log()
    finally:
        sim.stop()
        floor.stop()
        b.stop()
