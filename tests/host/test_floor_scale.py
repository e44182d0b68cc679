# 200 simulated tables, each with its own identity under the site's ACL,
# publishing their journals at once: every record of every table stored
# exactly once, in order, and acknowledged. (The rate is bench/bench_floor.py's
# figure, not a test.)
from floorkit import FloorProc, assert_every_record_once, broker_for, q, sim_tables, wait_for

IDS = ["T%03d" % i for i in range(1, 201)]


def test_200_tables_publishing_at_once_are_all_stored_once(tmp_path):
    b, pw = broker_for(tmp_path, IDS)
    floor = FloorProc(tmp_path, b.port).start()
    sim = sim_tables(b.port, pw, IDS, backlog=3, batch=8)
    try:
        sim.start()
        wait_for(sim.connected, "200 tables connected")
        sim.play(2)
        wait_for(sim.all_acked, "every table's records acknowledged", timeout=300,
                 alive=floor.dead)
        assert_every_record_once(floor.db, sim)
        assert q(floor.db, "SELECT COUNT(*), SUM(open_gaps), SUM(damaged), SUM(online)"
                 " FROM tables") == [(200, 0, 0, 200)]
        assert q(floor.db, "SELECT COUNT(*) FROM rounds") == [(200 * 5,)]
    finally:
        sim.stop()
        floor.stop()
        b.stop()
