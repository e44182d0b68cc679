# The floor view in a real browser (headless Chromium) against the floor
# service fed by a virtual table: the real firmware on a virtual board,
# deployed with sicbo deploy --secrets, reporting over TLS with its own
# certificate through a real mosquitto (tests/host/floorsys.py), its rounds
# played by the demo's dealer through the simulated table. What pit staff
# and compliance see of a real table: its new result on the grid, a tamper
# (the cover lifted while betting is open, through the table's control
# socket) held until a named user acknowledges it, and the results display
# against the journal read back from the board.
import os
import subprocess
import sys

import pytest
from floorsys import Site, Table, wait_delivered

from floorkit import FloorProc, q, wait_for
from floorwebkit import Browser, need_chromium, reading, streaming
from host_tools import REPO
from host_tools.broker import free_port
from host_tools.commands import journal as jcmd

TID = "T01"
USER, PASSWORD = "carol", "carol-password-3"
NOTE = "cover lifted early: dealer retrained, round void as the rules say"


class EarlyCover:
    """The dealer's dice of fate for one round: an incident, and that
    incident the cover lifted before the bell (demo.INCIDENTS)."""

    def __init__(self, rng):
        self.rng = rng
        self.armed = True

    def random(self):
        return 0.0 if self.armed else self.rng.random()

    def choice(self, seq):
        if self.armed:
            self.armed = False
            return "early cover"
        return self.rng.choice(seq)

    def __getattr__(self, name):
        return getattr(self.rng, name)


class Floor:
    pass


@pytest.fixture(scope="module")
def floor(tmp_path_factory):
    need_chromium()
    tmp = tmp_path_factory.mktemp("floorweb-vb")
    site = Site(tmp, [TID])
    f = Floor()
    f.site = site
    f.table = None
    port = free_port()
    ids = site.ids["floor"]
    site.floor = FloorProc(tmp, site.broker.tls_port, db=site.db,
                           tls=(ids.ca_pem, ids.cert_pem, ids.key_pem),
                           extra=["--http", "127.0.0.1:%d" % port])
    f.url = "http://127.0.0.1:%d/" % port
    try:
        site.floor.start()
        assert "floor view at %s" % f.url in site.floor.log()
        pwfile = tmp / "carol.pw"
        pwfile.write_text(PASSWORD + "\n")
        r = subprocess.run([sys.executable, "-m", "host_tools", "floor", "users", "add", USER,
                            "--db", site.db, "--password-file", str(pwfile)],
                           capture_output=True, text=True, cwd=REPO, timeout=120)
        assert r.returncode == 0, r.stderr
        f.table = Table(site, TID, os.path.join(str(tmp), TID), seed=5).start()
        f.table.play(1)
        wait_delivered(site, f.table)
        yield f
    finally:
        if f.table is not None:
            f.table.stop()
        site.stop()


@pytest.fixture(scope="module")
def browser(floor):
    b = Browser()
    yield b
    b.quit()


def finished_rounds(table):
    """The board's journal as read back from its filesystem, its finished
    rounds newest first (sicbo journal's recall)."""
    table.reading()  # every record on the board into table.seen
    records = [table.seen[s] for s in sorted(table.seen)]
    return [r for r in reading(records).recall.last(jcmd.ALL_ROUNDS) if r.status != "open"]


def test_the_grid_shows_the_virtual_tables_new_result_live(floor, browser):
    browser.driver.delete_all_cookies()
    browser.get(floor.url)
    streaming(browser)
    browser.js("window.notReloaded = 42")
    floor.table.play(1)
    want = finished_rounds(floor.table)[0]
    browser.wait(lambda: browser.attr("#tile-%s" % TID, "data-result-round") == str(want.round),
                 "the virtual table's new result on the grid")
    assert browser.js("return window.notReloaded") == 42  # updated in place
    assert browser.attr("#tile-%s" % TID, "data-result") == "-".join(map(str, want.dice))
    assert browser.one("#tile-%s .link" % TID).text.startswith("online")


def test_a_tamper_on_the_virtual_table_is_held_until_a_named_user_acknowledges_it(floor,
                                                                                  browser):
    browser.driver.delete_all_cookies()
    browser.get(floor.url)
    streaming(browser)
    d = floor.table.dealer
    rng, incidents = d.rng, d.incidents
    d.rng, d.incidents = EarlyCover(rng), 1.0
    try:
        floor.table.play(1)
    finally:
        d.rng, d.incidents = rng, incidents
    assert finished_rounds(floor.table)[0].void_reason is not None
    sel = '#alarms .alarm[data-table="%s"][data-kind="alarm"]' % TID
    browser.wait(lambda: browser.css(sel), "the virtual table's tamper alarm, live")
    aid = int(browser.attr(sel, "data-alarm"))
    # The dealer lets go of the clasps and lifts the cover at once: whichever
    # the board's debounce passes first is the alarm (both void the round).
    text = browser.one(sel + " .text").text
    assert ("cover" in text or "clasp" in text) and "bell" in text and "void" in text, text
    # Not without signing in.
    browser.one("#alarm-%d input[name=note]" % aid).send_keys("no account")
    browser.one("#alarm-%d button" % aid).click()
    browser.wait(lambda: browser.css("#message"), "the refusal")
    assert "sign in to acknowledge" in browser.one("#message").text
    assert q(floor.site.db, "SELECT COUNT(*) FROM acks WHERE alarm_id=?", aid) == [(0,)]
    browser.get(floor.url)
    browser.one("#signin-link").click()
    browser.one("input[name=name]").send_keys(USER)
    browser.one("input[name=password]").send_keys(PASSWORD)
    browser.one("#signin button").click()
    browser.wait(lambda: browser.css("#user"), "signed in")
    streaming(browser)
    browser.one("#alarm-%d input[name=note]" % aid).send_keys(NOTE)
    browser.one("#alarm-%d button" % aid).click()
    browser.wait(lambda: browser.css("#grid") and not browser.css("#alarm-%d" % aid),
                 "the alarm no longer open")
    assert q(floor.site.db, "SELECT user, note FROM acks WHERE alarm_id=?", aid) == [
        (USER, NOTE)]
    browser.get(floor.url + "audit")
    rows = browser.js("return [...document.querySelectorAll('#audit tr')].map(r =>"
                      " [r.dataset.action, r.dataset.user, r.dataset.alarm, r.innerText])")
    acks = [r for r in rows if r[0] == "acknowledge"]
    assert [(a[1], a[2]) for a in acks] == [(USER, str(aid))]
    assert NOTE in acks[0][3]


def test_the_results_display_matches_the_virtual_tables_journal(floor, browser):
    t = floor.table
    rounds = len(finished_rounds(t))
    if rounds < 22:
        t.play(22 - rounds)
    wait_delivered(floor.site, t)
    finished = finished_rounds(t)
    want = [(str(r.round), "" if r.status == "void" else "-".join(map(str, r.dice)),
             jcmd.void_name(r.void_reason) if r.status == "void" else "",
             "" if r.status == "void" else str(sum(r.dice)))
            for r in finished[:20]]
    assert len(want) == 20 and any(w[2] == "tamper" for w in want), want

    def shown():
        return [tuple(g) for g in browser.js(
            "return [...document.querySelectorAll('#results li')].map(li =>"
            " [li.dataset.round, li.dataset.dice, li.dataset.void, li.dataset.total])")]

    browser.get(floor.url + "table/%s/display" % TID)
    wait_for(lambda: shown() == want, "the display showing the journal's last 20 rounds "
             "(shown %s)" % (shown()[:3],), timeout=60)
