# The floor view in a real browser (headless Chromium, selenium with the
# system's chromedriver) against the floor service (its own process, with
# --http) fed through a real mosquitto by tables that play rounds on the
# firmware's round machine (floorwebkit.table_source): what pit staff and
# a compliance officer would try.
import csv
import io
import json
import subprocess
import sys
import time

import pytest

from floorkit import FloorProc, broker_for, q, wait_for
from floorwebkit import (
    Browser,
    get,
    need_chromium,
    post,
    reading,
    streaming,
    table_source,
)
from host_tools import REPO
from host_tools.broker import free_port
from host_tools.commands import journal as jcmd
from host_tools.rules import load_table

IDS = ["T1", "T2", "T3", "T4", "T5", "T6"]
USERS = {"alice": "alice-password-1", "bob": "bob-password-22"}
NOTE = "cover checked with the dealer; round voided as the rules say"


def sicbo(*args, check=True):
    r = subprocess.run([sys.executable, "-m", "host_tools", *args], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    if check:
        assert r.returncode == 0, r.stderr
    return r


class Floor:
    pass


@pytest.fixture(scope="module")
def floor(tmp_path_factory):
    need_chromium()
    tmp = tmp_path_factory.mktemp("floorweb")
    b, pw = broker_for(tmp, IDS)
    f = Floor()
    f.broker = b
    port = free_port()
    f.proc = FloorProc(tmp, b.port, extra=["--http", "127.0.0.1:%d" % port])
    f.db = f.proc.db
    f.url = "http://127.0.0.1:%d/" % port
    f.src = None
    try:
        f.proc.start()
        assert "floor view at %s" % f.url in f.proc.log()
        for name, password in USERS.items():
            pwfile = tmp / ("%s.pw" % name)
            pwfile.write_text(password + "\n")
            sicbo("floor", "users", "add", name, "--db", f.db, "--password-file", str(pwfile))
        f.src = table_source(b.port, pw, IDS).start()
        for tid in IDS:
            f.src.play(tid, 1)
        wait_for(f.src.delivered, "every table's first round stored", alive=f.proc.dead)
        yield f
    finally:
        if f.src is not None:
            f.src.stop()
        f.proc.stop()
        b.stop()


@pytest.fixture(scope="module")
def browser(floor):
    b = Browser()
    yield b
    b.quit()


def last_round(src, tid):
    rounds = [r for r in reading(src.journal(tid)).recall.last(jcmd.ALL_ROUNDS)
              if r.status != "open"]
    return rounds[0]


def open_alarm(db, tid, kind):
    rows = q(db, "SELECT id FROM alarms WHERE table_id=? AND kind=? AND id NOT IN"
             " (SELECT alarm_id FROM acks) ORDER BY id DESC", tid, kind)
    return rows[0][0] if rows else None


def test_the_grid_shows_a_tables_new_result_live_without_reloading(floor, browser):
    browser.driver.delete_all_cookies()
    browser.get(floor.url)
    assert len(browser.css(".tile")) == len(IDS)
    streaming(browser)
    browser.js("window.notReloaded = 42")
    before = browser.attr("#tile-T1", "data-result-round")
    t0 = time.monotonic()
    floor.src.play("T1", 1)
    want = last_round(floor.src, "T1")
    assert str(want.round) != before
    browser.wait(lambda: browser.attr("#tile-T1", "data-result-round") == str(want.round),
                 "T1's new result on the grid")
    took = time.monotonic() - t0
    print("\nfigure: result journaled on T1 -> on the grid: %.3f s" % took)
    assert browser.js("return window.notReloaded") == 42  # updated in place
    assert browser.attr("#tile-T1", "data-result") == "-".join(map(str, want.dice))
    faces = [int(e.get_attribute("data-face")) for e in browser.css("#tile-T1 .last svg.die")]
    assert faces == list(want.dice)
    assert browser.attr("#tile-T1", "data-round") == str(want.round)
    assert browser.one("#tile-T1 .link").text.startswith("online")


def test_an_alarm_is_held_until_a_named_user_signed_in_acknowledges_it(floor, browser):
    browser.driver.delete_all_cookies()
    browser.get(floor.url)
    streaming(browser)
    floor.src.tamper("T2")
    sel = '#alarms .alarm[data-table="T2"][data-kind="alarm"]'
    browser.wait(lambda: browser.css(sel), "T2's tamper alarm in the open alarms, live")
    aid = int(browser.attr(sel, "data-alarm"))
    assert "cover" in browser.one(sel + " .text").text
    browser.wait(lambda: int(browser.attr("#tile-T2", "data-open-alarms")) >= 1,
                 "T2's tile counting it")
    # Viewing is open; acknowledging without signing in is refused.
    assert browser.css("#signin-link")
    browser.one("#alarm-%d input[name=note]" % aid).send_keys("trying without an account")
    browser.one("#alarm-%d button" % aid).click()
    browser.wait(lambda: browser.css("#message"), "the refusal")
    assert "sign in to acknowledge" in browser.one("#message").text
    assert q(floor.db, "SELECT COUNT(*) FROM acks WHERE alarm_id=?", aid) == [(0,)]
    browser.get(floor.url)
    assert browser.css("#alarm-%d" % aid), "the alarm stays open"
    # A wrong password is refused, and kept in the trail.
    browser.one("#signin-link").click()
    browser.one("input[name=name]").send_keys("alice")
    browser.one("input[name=password]").send_keys("not-her-password")
    browser.one("#signin button").click()
    browser.wait(lambda: browser.css("#signin-error"), "the sign-in refused")
    assert browser.one("#signin-error").text == "wrong name or password"
    # Signed in as alice: acknowledged with a note.
    browser.one("input[name=name]").send_keys("alice")
    browser.one("input[name=password]").send_keys(USERS["alice"])
    browser.one("#signin button").click()
    browser.wait(lambda: browser.css("#user"), "signed in")
    assert browser.one("#user").text == "alice"
    streaming(browser)
    browser.one("#alarm-%d input[name=note]" % aid).send_keys(NOTE)
    browser.one("#alarm-%d button" % aid).click()
    browser.wait(lambda: browser.css("#grid") and not browser.css("#alarm-%d" % aid),
                 "the alarm no longer open")
    assert q(floor.db, "SELECT user, note FROM acks WHERE alarm_id=?", aid) == [
        ("alice", NOTE)]
    # The audit trail shows it, and the failed and the good sign-in; it has
    # nothing to edit it with.
    browser.get(floor.url + "audit")
    rows = browser.js("return [...document.querySelectorAll('#audit tr')].map(r =>"
                      " [r.dataset.action, r.dataset.user, r.dataset.alarm, r.innerText])")
    acks = [r for r in rows if r[0] == "acknowledge"]
    assert [(a[1], a[2]) for a in acks] == [("alice", str(aid))]
    assert NOTE in acks[0][3]
    assert ["sign-in-failed", "alice"] in [r[:2] for r in rows]
    assert ["sign-in", "alice"] in [r[:2] for r in rows]
    # Its one form reads (the filters): nothing on it posts.
    forms = browser.js("return [...document.querySelectorAll('main form')].map(f =>"
                       " [f.method, f.getAttribute('action')])")
    assert forms == [["get", "/audit"]]
    assert browser.css("main [formmethod]") == [] and browser.css("main textarea") == []
    # The acknowledged alarm is listed as such.
    browser.get(floor.url + "alarms")
    assert browser.css('#acknowledged tr[data-alarm="%d"]' % aid)
    assert not browser.css("#alarms #alarm-%d" % aid)


EVIL = """<!doctype html><html><body>
<form id="f" method="post" action="%s"><input name="note" value="forged">
<input name="csrf" value="guessed"><input name="next" value="/"></form>
<script>document.getElementById("f").submit();</script></body></html>"""


def test_a_forged_request_from_another_origin_changes_nothing(floor, tmp_path):
    import http.server
    import threading

    floor.src.tamper("T3")
    wait_for(lambda: open_alarm(floor.db, "T3", "alarm"), "T3's tamper alarm stored",
             alive=floor.proc.dead)
    aid = open_alarm(floor.db, "T3", "alarm")
    target = floor.url + "alarms/%d/ack" % aid
    (tmp_path / "evil.html").write_text(EVIL % target)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(tmp_path), **kw)

        def log_message(self, *a):
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    port = evil.server_address[1]
    b = Browser()
    try:
        b.get(floor.url + "signin")
        b.one("input[name=name]").send_keys("bob")
        b.one("input[name=password]").send_keys(USERS["bob"])
        b.one("#signin button").click()
        b.wait(lambda: b.css("#user"), "bob signed in")
        # Another origin of the same site (another port): the cookie goes
        # with it, the Origin check refuses it.
        for origin in ("http://127.0.0.1:%d" % port, "http://localhost:%d" % port):
            b.get(origin + "/evil.html")
            b.wait(lambda: b.driver.current_url.startswith(target), "the forged form sent")
            b.wait(lambda: b.css("#message"), "the floor's answer")
            assert b.one("#message").text.startswith("refused"), origin
        assert q(floor.db, "SELECT COUNT(*) FROM acks WHERE alarm_id=?", aid) == [(0,)]
        # Each protection alone, with bob's own session cookie: a foreign
        # Origin, none at all, or the wrong token are each refused; all
        # three right is accepted (the control).
        b.get(floor.url)
        token = b.attr('meta[name="csrf"]', "content")
        cookie = "sicbo_floor=" + b.cookies()["sicbo_floor"]
        fields = {"note": "by bob", "csrf": token, "next": "/"}
        own = floor.url.rstrip("/")
        assert post(target, fields, cookie, origin="http://evil.example")[0] == 403
        assert post(target, fields, cookie, origin="http://127.0.0.1:%d" % port)[0] == 403
        assert post(target, fields, cookie)[0] == 403  # no Origin, no Referer
        assert post(target, dict(fields, csrf="x" * 43), cookie, origin=own)[0] == 403
        assert post(target, fields, None, origin=own)[0] == 403  # no session
        assert q(floor.db, "SELECT COUNT(*) FROM acks WHERE alarm_id=?", aid) == [(0,)]
        st, body = post(target, fields, cookie, origin=own)
        assert st == 303, body
        assert q(floor.db, "SELECT user, note FROM acks WHERE alarm_id=?", aid) == [
            ("bob", "by bob")]
        refused = q(floor.db, "SELECT COUNT(*) FROM audit WHERE action='request-refused'")
        assert refused[0][0] >= 6
        # The session cookie is HttpOnly and SameSite=Strict.
        c = [x for x in b.driver.get_cookies() if x["name"] == "sicbo_floor"][0]
        assert c["httpOnly"] and c["sameSite"] == "Strict"
    finally:
        b.quit()
        evil.shutdown()


def test_the_results_display_matches_the_tables_journal(floor, browser):
    src = floor.src
    src.play("T4", 24)  # with the void every 13th round
    src.tamper("T4")
    src.play("T4", 1)
    wait_for(src.delivered, "T4's rounds stored", alive=floor.proc.dead)
    browser.get(floor.url + "table/T4/display")
    rd = reading(src.journal("T4"))
    finished = [r for r in rd.recall.last(jcmd.ALL_ROUNDS) if r.status != "open"]
    want = [(str(r.round), "" if r.status == "void" else "-".join(map(str, r.dice)),
             jcmd.void_name(r.void_reason) if r.status == "void" else "",
             "" if r.status == "void" else str(sum(r.dice)),
             "" if r.status == "void" else
             "T" if len(set(r.dice)) == 1 else "B" if sum(r.dice) >= 11 else "S")
            for r in finished[:20]]
    got = browser.js("return [...document.querySelectorAll('#results li')].map(li =>"
                     " [li.dataset.round, li.dataset.dice, li.dataset.void, li.dataset.total,"
                     " li.dataset.outcome])")
    assert [tuple(g) for g in got] == want
    assert {w[2] for w in want} >= {"tamper"} and any(w[2] and w[2] != "tamper" for w in want)
    shown_voids = browser.js("return [...document.querySelectorAll('#results li.void')]"
                             ".map(li => li.innerText)")
    assert shown_voids and all("VOID" in t for t in shown_voids)
    # Hot and cold over the last 100 results (26 here).
    counts = browser.js("return Object.fromEntries([...document.querySelectorAll("
                        "'#hotcold .totals .cnt')].map(e => [e.dataset.total, +e.dataset.count]))")
    dice = [r.dice for r in finished if r.status != "void"]
    assert counts == {str(t): sum(1 for d in dice if sum(d) == t) for t in range(3, 19)}
    # The road has a bead per Big or Small result.
    beads = browser.css("#road .bead")
    assert len(beads) == sum(1 for d in dice if len(set(d)) > 1)
    # The newest round on the layout: the firmware's winning areas lit.
    _cfg, table = load_table(None)
    newest = finished[0]
    assert browser.attr("#layout", "data-round") == str(newest.round)
    lit = browser.js("return [...document.querySelectorAll('#layout g.area[data-lit=\"1\"]')]"
                     ".map(g => g.dataset.area)")
    assert sorted(lit) == sorted(a for a, _o in newest.winning_areas(table)) and lit
    # Live: the next round appears without a reload.
    browser.js("window.notReloaded = 7")
    src.play("T4", 1)
    nxt = last_round(src, "T4")
    browser.wait(lambda: browser.attr("#results li", "data-round") == str(nxt.round),
                 "the next result on the display")
    assert browser.attr("#results li", "data-dice") == "-".join(map(str, nxt.dice))
    assert browser.js("return window.notReloaded") == 7
    assert len(browser.css("#results li")) == 20


def test_any_stored_round_on_demand_and_the_days_report(floor, browser):
    src = floor.src
    src.play("T5", 13)  # round 13 of the table's journal is void
    wait_for(src.delivered, "T5's rounds stored", alive=floor.proc.dead)
    _cfg, table = load_table(None)
    rd = reading(src.journal("T5"))
    by_round = {r.round: r for r in rd.recall.last(jcmd.ALL_ROUNDS)}
    recs = [journal_rec for journal_rec in src.journal("T5")]
    from sicbo import journal

    void = [r for r in by_round.values() if r.status == "void"][0]
    paid = [r for r in by_round.values() if r.status == "paid"][-1]
    for r in (void, paid):
        browser.get(floor.url + "table/T5/round/%d" % r.round)
        assert browser.one("#status").text == r.status
        seqs = [int(x) for x in browser.js(
            "return [...document.querySelectorAll('#records tr[data-seq]')]"
            ".map(t => t.dataset.seq)")]
        assert seqs == [journal.Record(x, 0).seq for x in recs
                        if journal.Record(x, 0).round == r.round]
        lit = browser.js("return [...document.querySelectorAll("
                         "'#layout g.area[data-lit=\"1\"]')].map(g => g.dataset.area)")
        if r is void:
            assert browser.one("#void").text == "VOID: " + jcmd.void_name(r.void_reason)
            assert lit == [] and browser.css("#void-banner")
        else:
            assert sorted(lit) == sorted(a for a, _o in r.winning_areas(table))
        assert [t.text.split(":")[0] for t in browser.css("#times li")][:1] == ["started"]
    # The JSON of a round: its records as `sicbo floor records --json` lists them.
    _s, body, _h = get(floor.url + "table/T5/round/%d.json" % paid.round)
    d = json.loads(body)
    assert [bytes.fromhex(x["raw"]) for x in d["records"]] == [
        x for x in recs if journal.Record(x, 0).round == paid.round]
    # The day's report, as a page and as CSV, against the journal.
    browser.get(floor.url + "table/T5")
    day = browser.one("#days a").text
    browser.get(floor.url + "table/T5/report/" + day)
    fin = list(by_round.values())
    assert browser.one('[data-k="rounds"]').text == str(len(fin))
    assert browser.one('[data-k="voids"]').text == str(sum(r.status == "void" for r in fin))
    wins = {}
    for r in fin:
        if r.status == "paid":
            for a, _o in r.winning_areas(table):
                wins[a] = wins.get(a, 0) + 1
    shown = browser.js("return Object.fromEntries([...document.querySelectorAll("
                       "'#wins tr')].map(t => [t.dataset.area, +t.dataset.n]))")
    assert {a: n for a, n in shown.items() if n} == wins
    _s, text, headers = get(floor.url + "table/T5/report/%s.csv" % day)
    assert headers["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["section", "key", "value", "detail"]
    assert ["rounds", "rounds", str(len(fin)), ""] in rows
    assert {r[1]: int(r[2]) for r in rows if r[0] == "wins" and r[2] != "0"} == wins
    assert [r[1:3] for r in rows if r[0] == "void_reason"] == [
        [jcmd.void_name(void.void_reason), "1"]]


def test_a_meters_checkpoint_that_differs_from_the_records_is_an_alarm(floor, browser):
    src = floor.src
    src.play("T6", 2)
    src.forge_meters("T6", rounds=+3)
    src.play("T6", 1)
    wait_for(src.delivered, "T6's records stored", alive=floor.proc.dead)
    browser.get(floor.url)
    sel = '#alarms .alarm[data-table="T6"][data-kind="meters"]'
    browser.wait(lambda: browser.css(sel), "the meters alarm on the floor")
    browser.get(floor.url + "table/T6")
    row = browser.one('#meters tr[data-differs="1"]')
    assert "rounds table 6, floor 3" in row.text
    assert browser.css('#alarms .alarm[data-kind="meters"]')


def test_code_and_configuration_not_approved_are_marked(floor, browser):
    browser.get(floor.url)
    assert browser.attr("#tile-T1", "data-code-ok") == "0"
    code = q(floor.db, "SELECT code FROM tables WHERE table_id='T1'")[0][0]
    config = q(floor.db, "SELECT config FROM tables WHERE table_id='T1'")[0][0]
    sicbo("floor", "approve", "--db", floor.db, "--code", code, "--note", "release 1")
    sicbo("floor", "approve", "--db", floor.db, "--config", config)
    browser.get(floor.url)
    assert browser.attr("#tile-T1", "data-code-ok") == "1"
    assert browser.attr("#tile-T1", "data-config-ok") == "1"
    assert browser.attr("#tile-T2", "data-config-ok") == "0"  # another table's configuration
    assert "not approved" in browser.one("#tile-T2 .config").text
    assert "not approved" not in browser.one("#tile-T1 .config").text
    sicbo("floor", "approve", "--db", floor.db, "--config", config, "--revoke")
    browser.get(floor.url)
    assert browser.attr("#tile-T1", "data-config-ok") == "0"
    r = sicbo("floor", "approvals", "--db", floor.db, "--json")
    d = json.loads(r.stdout)
    assert d["approved"] == {"code": [code], "config": []}
    assert [h["action"] for h in d["history"]] == ["approve", "approve", "revoke"]
