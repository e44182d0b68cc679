"""The floor view for the tests and the bench: headless Chromium driven by
selenium with the system's chromedriver (Debian `chromium`,
`chromium-driver`; nothing downloaded at run time), a store fed without a
broker for the quick tests, and the tables that feed a floor through a
real mosquitto.

Without Chromium a test fails when the run requires the real parts (CI:
SICBO_REQUIRE_PARTS=1, as brokerkit does for mosquitto) and is skipped
with the one line that says why otherwise.

The tables: `SimTableSource` (host_tools/floor/simtables.py: the
firmware's round machine, its records published as docs/floor.md says).
A source is what the browser tests need of a table, so that virtual boards
can take its place: `start()`, `ids`, `play(tid, n)` (n rounds journaled),
`tamper(tid)` (a tamper alarm raised on the table: on a virtual board, the
cover lifted while betting is open, through its control socket),
`journal(tid)` (the table's own journal: the records as bytes, in order),
`delivered()` (every record acknowledged by the floor), `stop()`."""

import json
import os
import shutil
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = ("/usr/bin/chromedriver",)
# As root Chromium needs --no-sandbox; the rest keeps it from reaching out.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-default-apps",
                  "--disable-extensions", "--disable-dev-shm-usage")


def _first(paths):
    for p in paths:
        if os.access(p, os.X_OK):
            return p
    return None


def require_chromium():
    """None when Chromium, its driver and selenium are there, else the one
    line that says what is missing."""
    if _first(CHROMIUM) is None or _first(CHROMEDRIVER) is None:
        return ("Chromium or chromedriver is not installed (Debian: apt-get install chromium "
                "chromium-driver); .ci/run installs them")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (make setup installs requirements.lock)"
    return None


def need_chromium():
    why = require_chromium()
    if why is None:
        return
    if os.environ.get("SICBO_REQUIRE_PARTS") == "1" or os.environ.get("CI"):
        pytest.fail(why + " (the real parts are required here)", pytrace=False)
    pytest.skip(why)


class Browser:
    """A headless Chromium of its own (a new profile in a temporary folder)."""

    def __init__(self, width=1400, height=1000):
        # Selenium Manager (which would download a driver) is never asked: the
        # driver and the browser are given by path.
        os.environ["SE_AVOID_STATS"] = "true"
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="sicbo-chromium-")
        o = webdriver.ChromeOptions()
        o.binary_location = _first(CHROMIUM)
        for a in CHROMIUM_FLAGS:
            o.add_argument(a)
        o.add_argument("--user-data-dir=" + self.profile)
        o.add_argument("--window-size=%d,%d" % (width, height))
        self.driver = webdriver.Chrome(service=Service(executable_path=_first(CHROMEDRIVER)),
                                       options=o)
        self.driver.set_page_load_timeout(120)

    def get(self, url):
        self.driver.get(url)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def css(self, selector):
        from selenium.webdriver.common.by import By

        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def one(self, selector):
        found = self.css(selector)
        assert found, "nothing matches %s on %s" % (selector, self.driver.current_url)
        return found[0]

    def wait(self, cond, what, timeout=60.0):
        """Poll cond() (given the browser) until it is true; fail naming what."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                got = cond()
            except Exception as e:  # noqa: BLE001 (the page changing under the query)
                got, last = None, e
            if got:
                return got
            time.sleep(0.02)
        raise AssertionError("%s: not within %.0f s (%s)" % (what, timeout, last))

    def attr(self, selector, name):
        return self.js("var e = document.querySelector(arguments[0]);"
                       " return e ? e.getAttribute(arguments[1]) : null;", selector, name)

    def cookies(self):
        return {c["name"]: c["value"] for c in self.driver.get_cookies()}

    def screenshot(self, path, full_height=False):
        if full_height:
            h = self.js("return document.documentElement.scrollHeight")
            w = self.js("return window.innerWidth")
            self.driver.set_window_size(w, min(int(h) + 20, 4000))
        self.driver.save_screenshot(path)

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)


# ---- a store fed without a broker ----------------------------------------------------------


def streaming(browser):
    """Until the page's live event stream is open."""
    browser.wait(lambda: browser.js("return !!window.floorStream &&"
                                    " window.floorStream.readyState === 1"),
                 "the page's event stream open")


def feed(db, journals, code="ab" * 32, online=True):
    """Feed the floor's ingest (the service's own, host_tools/floor/ingest.py)
    each table's journal and status, as one commit: {tid: TableJournal}."""
    from host_tools.floor import ingest, store
    from host_tools.rules import load_table

    _cfg, table = load_table(None)
    conn = store.open_rw(db)
    fl = ingest.Floor("site1", table,
                      lookup=lambda t, s: _lookup(conn, t, s))
    fl.reload(conn, time.time())
    out = ingest.Batch()
    now = time.time()
    for tid, j in journals.items():
        fl.message("sicbo/site1/%s/status" % tid, json.dumps({
            "online": online, "code": code, "config": j.config_id.hex(), "round": j.m.round,
            "state": j.state_name(), "seq": j.seq, "oldest": 1}).encode(), now, out)
        f = fl.feeds.get(tid)
        start = f.last_seq if f is not None else 0
        if j.seq > start:
            fl.message("sicbo/site1/%s/journal" % tid, b"".join(j.records[start:]), now, out)
    fl.finish(out)
    store.write(conn, out, fl.feeds)
    conn.close()
    return out


def _lookup(conn, tid, seq):
    row = conn.execute("SELECT raw FROM records WHERE table_id=? AND seq=?",
                       (tid, seq)).fetchone()
    return bytes(row[0]) if row else None


# ---- HTTP without a browser ----------------------------------------------------------------


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kw):
        return None


def post(url, fields, cookie=None, origin=None, referer=None):
    """(status, body) of a form POST, redirects not followed."""
    data = urllib.parse.urlencode(fields).encode()
    req = urllib.request.Request(url, data=data, method="POST")
    req.add_header("Content-Type", "application/x-www-form-urlencoded")
    if cookie:
        req.add_header("Cookie", cookie)
    if origin:
        req.add_header("Origin", origin)
    if referer:
        req.add_header("Referer", referer)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        r = opener.open(req, timeout=60)
        return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def get(url, cookie=None):
    req = urllib.request.Request(url)
    if cookie:
        req.add_header("Cookie", cookie)
    r = urllib.request.urlopen(req, timeout=60)
    return r.status, r.read().decode("utf-8", "replace"), r.headers


def start_view(db, table_path=None):
    """The floor view of store db in this process, on a free loopback port,
    its winning areas from table_path (None: the default table file)."""
    from host_tools.floor import web
    from host_tools.rules import load_table

    cfg, table = load_table(table_path)
    return web.FloorView(db, cfg, table).start("127.0.0.1", 0)


def first_event(url, name):
    """The data (parsed JSON) of the first `name` event of the event stream
    at url (the floor view's /events?...)."""
    r = urllib.request.urlopen(url, timeout=60)
    event = None
    for raw in r:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event == name:
            r.close()
            return json.loads(line[6:])
    raise AssertionError("the event stream ended without a %s event" % name)


class NextEvent:
    """The first `name` event of a page's event stream, read in a thread
    from the page's version now: what changes after this is sent, whether
    the stream opens before the change or after it."""

    def __init__(self, view, page, name):
        self.name = name
        self.got = []
        self.done = threading.Event()
        url = view.url + "events?page=%s&since=%d" % (page, view.hub.version)
        threading.Thread(target=self._read, args=(url,), daemon=True).start()

    def _read(self, url):
        try:
            self.got.append(first_event(url, self.name))
        except BaseException as e:  # noqa: B036 (said by wait(), in the test's thread)
            self.got.append(e)
        self.done.set()

    def wait(self, timeout=60):
        """The event's data (parsed JSON)."""
        assert self.done.wait(timeout), "no %s event within %d s" % (self.name, timeout)
        if isinstance(self.got[0], BaseException):
            raise self.got[0]
        return self.got[0]


# ---- tables that feed a floor through a broker -----------------------------------------


class SimTableSource:
    """Simulated tables (see the module doc)."""

    def __init__(self, port, passwords, ids, **kw):
        from floorkit import sim_tables

        self.ids = list(ids)
        self.sim = sim_tables(port, passwords, self.ids, **kw)

    def start(self):
        self.sim.start()
        return self

    def play(self, tid, n=1):
        self.sim.play(n, tables=[tid])

    def tamper(self, tid):
        """A round in which the cover is lifted while betting is open: the
        table raises the tamper alarm and voids the round."""
        with self.sim.lock:
            t = self.sim[tid]
            t.journal.play_round(tamper=True)
            t.status_due = True

    def forge_meters(self, tid, **deltas):
        """A meters checkpoint in the table's journal whose counts are off by
        deltas (e.g. rounds=+3) from what its records count (the machine
        takes it, so its next records follow on from it)."""
        from sicbo import meters

        with self.sim.lock:
            t = self.sim[tid]
            j = t.journal
            for name, d in deltas.items():
                j.m.meters.counts[meters.NAMES.index(name)] += d
            j.now += 10
            j.records.append(bytes(meters.checkpoint(j.m, j.now, j._wall())))
            j.appends += 1
            t.status_due = True

    def journal(self, tid):
        with self.sim.lock:
            return list(self.sim[tid].journal.records)

    def round_of_seq(self, tid, seq):
        from sicbo import journal

        return journal.Record(self.journal(tid)[seq - 1], 0).round

    def delivered(self):
        return self.sim.all_acked()

    def stop(self):
        self.sim.stop()


def table_source(port, passwords, ids, **kw):
    """The tables that feed the browser tests' floor (see the module doc):
    simulated tables, many at once and fast; the same checks against a
    virtual board running the firmware: test_floor_web_vboard.py."""
    return SimTableSource(port, passwords, ids, **kw)


def reading(records):
    """The firmware's reading of a table's journal (`sicbo journal`'s)."""
    from host_tools.commands import journal as jcmd
    from host_tools.rules import load_table

    _cfg, table = load_table(None)
    return jcmd.Reading([("journal", b"".join(records))], table)
