# The floor view with 200 tables (each its own identity under the site's
# ACL, publishing through a real mosquitto): the grid loads with every one
# of them and still updates live. (The load time is bench/bench_floor_web.py's
# figure, not a test.)
import time

from floorkit import FloorProc, broker_for, sim_tables, wait_for
from floorwebkit import Browser, need_chromium
from host_tools.broker import free_port

IDS = ["T%03d" % i for i in range(1, 201)]


def test_the_grid_loads_and_stays_live_with_200_tables(tmp_path):
    need_chromium()
    b, pw = broker_for(tmp_path, IDS)
    port = free_port()
    floor = FloorProc(tmp_path, b.port, extra=["--http", "127.0.0.1:%d" % port])
    sim = sim_tables(b.port, pw, IDS, backlog=2, batch=8)
    browser = None
    try:
        floor.start()
        sim.start()
        wait_for(sim.all_acked, "every table's records acknowledged", timeout=300,
                 alive=floor.dead)
        browser = Browser()
        t0 = time.monotonic()
        browser.get("http://127.0.0.1:%d/" % port)
        took = time.monotonic() - t0
        print("\nfigure: the grid of 200 tables loaded in %.3f s" % took)
        got = browser.js("return [...document.querySelectorAll('.tile')].map(t =>"
                         " [t.dataset.table, t.dataset.round, t.dataset.online])")
        with sim.lock:
            want = [[t.id, str(t.journal.m.round), "1"] for t in sim.tables]
        assert got == want
        assert browser.one("#n-tables").text == "200"
        assert browser.one("#n-online").text == "200"
        browser.wait(lambda: browser.js("return !!window.floorStream &&"
                                        " window.floorStream.readyState === 1"),
                     "the event stream open")
        sim.play(1, tables=["T137"])
        with sim.lock:
            r = str(sim["T137"].journal.m.round)
        browser.wait(lambda: browser.attr("#tile-T137", "data-result-round") == r,
                     "T137's new result on the grid of 200")
        assert len(browser.css(".tile")) == 200
    finally:
        if browser is not None:
            browser.quit()
        sim.stop()
        floor.stop()
        b.stop()
