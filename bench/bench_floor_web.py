"""The floor view's figures (printed, not pass/fail), measured in headless
Chromium against the floor service (its own process, `--http`) fed through
a real mosquitto by simulated tables (host_tools/floor/simtables.py):

1. page load with N tables (default 200): the grid's HTML, DOMContentLoaded
   and load, by the browser's Navigation Timing, median of several loads;
2. result journaled and published by a table -> shown on the page: the
   tables play rounds in turn while the grid is open; for each round, from
   the first publish of its J_RESULT record (the table's clock) to the
   moment the page's script put the tile with that result in place
   (Date.now() in the page; the same machine's clock), p50 and p99; the
   same for one table's results display (a void round: from its J_VOID);
3. with --screens DIR: screenshots of the grid and of a results display,
   from the real page (docs/img/ holds the README's).

    .venv/bin/python bench/bench_floor_web.py [--tables 200] [--results 300]
        [--every 0.1] [--screens docs/img]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "host"))

from floorwebkit import Browser, require_chromium  # noqa: E402
from host_tools.broker import Broker, free_port, require_mosquitto  # noqa: E402
from host_tools.floor import site  # noqa: E402
from host_tools.floor.simtables import SimTables, password_auth  # noqa: E402
from sicbo import journal  # noqa: E402
from sicbo import records as R  # noqa: E402

SITE = "bench"


class BenchBroker(Broker):
    def _config(self):
        return Broker._config(self) + "set_tcp_nodelay true\n"  # as the site's configuration


def _pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def _wait(cond, what, timeout=300.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise RuntimeError("%s: not within %.0f s" % (what, timeout))


def _result_seq(t, start):
    """The sequence number and round of the newest J_RESULT (or J_VOID: a
    void is shown as one) among a table's records after index start."""
    recs = t.journal.records
    for i in range(len(recs) - 1, start - 1, -1):
        if recs[i][1] in (R.J_RESULT, R.J_VOID):
            return i + 1, journal.Record(recs[i], 0).round
    return None, None


def play_and_measure(sim, browser, order, every, what):
    """Rounds on the tables of `order` in turn, one each `every` s; the
    latencies (ms) from each result's first publish to its showing."""
    browser.js("window.floorShown = []")
    wanted = []
    for tid in order:
        t = sim[tid]
        with sim.lock:
            n = len(t.journal.records)
            t.journal.play_round()
            t.status_due = True
            seq, rid = _result_seq(t, n)
        wanted.append((tid, seq, rid))
        time.sleep(every)
    keys = {(tid, rid) for tid, _s, rid in wanted}

    def all_shown():
        got = browser.js("return window.floorShown")
        return {(g["table"], g["round"]) for g in got} >= keys

    _wait(all_shown, "every result shown on the %s" % what, timeout=120)
    shown = {}
    for g in browser.js("return window.floorShown"):
        shown.setdefault((g["table"], g["round"]), g["at"] / 1000.0)
    lat = []
    with sim.lock:
        for tid, seq, rid in wanted:
            lat.append((shown[(tid, rid)] - sim.sent_log[(tid, seq)]) * 1000.0)
    return lat


def page_load(browser, url, loads):
    nav = []
    for _ in range(loads):
        browser.get(url)
        browser.wait(lambda: browser.js("return performance.getEntriesByType('navigation')[0]"
                                        ".loadEventEnd > 0"), "the page loaded")
        nav.append(browser.js(
            "var n = performance.getEntriesByType('navigation')[0];"
            " return [n.responseEnd, n.domContentLoadedEventEnd, n.loadEventEnd,"
            " n.transferSize || n.encodedBodySize]"))
    return nav


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=200)
    p.add_argument("--results", type=int, default=300, help="results measured on the grid")
    p.add_argument("--every", type=float, default=0.1, help="s between two tables' results")
    p.add_argument("--display-results", type=int, default=40)
    p.add_argument("--loads", type=int, default=5)
    p.add_argument("--screens", metavar="DIR", help="write floor-grid.png and "
                                                    "floor-display.png here")
    args = p.parse_args()
    for why in (require_mosquitto(), require_chromium()):
        if why:
            print("bench_floor_web: " + why)
            return 2
    tmp = tempfile.mkdtemp(prefix="bench_floor_web_")
    ids = ["T%03d" % i for i in range(1, args.tables + 1)]
    passwords = {site.FLOOR_USER: "floor-pw"}
    passwords.update({t: "pw-" + t for t in ids})
    b = BenchBroker(os.path.join(tmp, "mq"), acl=site.acl_text(SITE), passwords=passwords,
                    plain_acl=True).start()
    db = os.path.join(tmp, "floor.db")
    pw = os.path.join(tmp, "floor.pw")
    with open(pw, "w") as f:
        f.write("floor-pw\n")
    port = free_port()
    url = "http://127.0.0.1:%d/" % port
    log_path = os.path.join(tmp, "floor.log")
    log = open(log_path, "ab")
    svc = subprocess.Popen(
        [sys.executable, "-m", "host_tools", "floor", "--broker", "127.0.0.1:%d" % b.port,
         "--db", db, "--site", SITE, "--username", "floor", "--password-file", pw,
         "--http", "127.0.0.1:%d" % port], cwd=ROOT, stdout=log, stderr=log)
    sim = browser = display = None
    try:
        _wait(lambda: b"subscribed" in open(log_path, "rb").read(), "the floor service")
        sim = SimTables("127.0.0.1", b.port, SITE, ids, auth=password_auth(passwords),
                        backlog=3, batch=8, resend_s=30.0, track=True,
                        journal_kw={"tamper_every": 17})
        sim.start()
        _wait(sim.all_acked, "every table's backlog stored")
        browser = Browser(1400, 900)
        nav = page_load(browser, url, args.loads)
        print("floor view: %d tables, the grid loaded %d times in headless Chromium "
              "(Navigation Timing, ms from the request):" % (args.tables, args.loads))
        print("  HTML received: median %.0f ms; DOMContentLoaded: median %.0f ms; load: "
              "median %.0f ms (max %.0f); %d bytes of HTML"
              % (_pct([n[0] for n in nav], 50), _pct([n[1] for n in nav], 50),
                 _pct([n[2] for n in nav], 50), max(n[2] for n in nav), nav[-1][3]))
        tiles = browser.js("return document.querySelectorAll('.tile').length")
        assert tiles == args.tables, tiles
        browser.wait(lambda: browser.js("return !!window.floorStream &&"
                                        " window.floorStream.readyState === 1"),
                     "the event stream open")
        order = [ids[i % len(ids)] for i in range(args.results)]
        lat = play_and_measure(sim, browser, order, args.every, "grid")
        print("result published by a table -> shown on the grid of %d tables (%d results, "
              "a table's round every %.2f s):" % (args.tables, len(lat), args.every))
        print("  p50 %.1f ms, p99 %.1f ms, max %.1f ms (goal: p99 under 1000 ms)"
              % (_pct(lat, 50), _pct(lat, 99), max(lat)))
        display = Browser(1920, 1080)
        display.get(url + "table/%s/display" % ids[0])
        display.wait(lambda: display.js("return !!window.floorStream &&"
                                        " window.floorStream.readyState === 1"),
                     "the display's event stream open")
        lat = play_and_measure(sim, display, [ids[0]] * args.display_results, 0.5,
                               "results display")
        print("result published by a table -> shown on its results display (%d results, "
              "one each 0.5 s; the page holds the layout's SVG):" % len(lat))
        print("  p50 %.1f ms, p99 %.1f ms, max %.1f ms"
              % (_pct(lat, 50), _pct(lat, 99), max(lat)))
        if args.screens:
            screens(args.screens, sim, ids, db, browser, display, url)
    finally:
        for x in (browser, display):
            if x is not None:
                x.quit()
        if sim is not None:
            sim.stop()
        svc.terminate()
        svc.wait(60)
        b.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def screens(folder, sim, ids, db, browser, display, url):
    """The README's pictures, from the real pages: the code approved, every
    table's configuration but two; a tamper on two tables."""
    os.makedirs(folder, exist_ok=True)
    run = [sys.executable, "-m", "host_tools", "floor", "approve", "--db", db]
    subprocess.run(run + ["--code", sim.code, "--note", "release approved"], check=True,
                   cwd=ROOT, capture_output=True)
    with sim.lock:
        configs = {t.id: t.journal.config_id.hex() for t in sim.tables}
    for tid in ids:
        if tid not in ("T004", "T009"):
            subprocess.run(run + ["--config", configs[tid]], check=True, cwd=ROOT,
                           capture_output=True)
    for tid in ("T003", "T011"):
        with sim.lock:
            sim[tid].journal.play_round(tamper=True)
            sim[tid].status_due = True
    sim.play(1, tables=ids[:16])
    _wait(sim.all_acked, "the last rounds stored")
    browser.get(url)
    browser.wait(lambda: browser.js("return document.querySelectorAll('.tile').length")
                 == len(ids), "the grid")
    time.sleep(1.2)  # the "seen ... ago" texts filled in
    grid = os.path.join(folder, "floor-grid.png")
    browser.screenshot(grid)
    display.get(url + "table/%s/display" % ids[0])
    time.sleep(1.0)
    shot = os.path.join(folder, "floor-display.png")
    display.screenshot(shot)
    print("screenshots: %s, %s" % (grid, shot))


if __name__ == "__main__":
    raise SystemExit(main())
