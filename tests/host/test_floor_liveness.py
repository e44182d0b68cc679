# Whether the floor is live (host_tools/floor/liveness.py): the service keeps
# FILE.service beside its store, and every page of the floor view says when
# the service has lost the broker, was stopped, or has gone silent (killed),
# instead of showing tables as "online" whose news no longer arrives. The
# system tests run the service as its own process against a real mosquitto
# that they kill and restart, and watch a page in headless Chromium.
import json
import os
import signal
import subprocess
import sys

import pytest

from floorkit import FloorProc, broker_for, wait_for
from floorwebkit import Browser, get, need_chromium, streaming
from host_tools import REPO
from host_tools.broker import free_port
from host_tools.floor import liveness


class Clock:
    def __init__(self, t=1_800_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


# ---- the file and what it means ---------------------------------------------------------


def test_the_service_s_file_says_its_state_since_when_and_its_last_beat(tmp_path):
    db = tmp_path / "floor.db"
    clock = Clock()
    beat = liveness.Beat(db, clock=clock)
    beat.set("connecting")
    clock.t += 2
    beat.set("connected")
    d = liveness.read(db)
    assert (d["state"], d["since"], d["beat"], d["pid"]) == (
        "connected", clock.t, clock.t, os.getpid())
    since = clock.t
    clock.t += liveness.BEAT_S - 0.5
    beat.tick()  # not yet due: the file is not rewritten
    assert liveness.read(db)["beat"] == since
    clock.t += 0.5
    beat.tick()
    assert liveness.read(db) == dict(d, beat=clock.t)
    beat.set("connected")  # no change of state: the same since
    assert liveness.read(db)["since"] == since
    with pytest.raises(ValueError, match="unknown service state"):
        beat.set("sleeping")
    assert not os.path.exists(str(db) + ".service.tmp")


def test_what_the_view_says_for_each_state_and_for_a_silent_service(tmp_path):
    db = tmp_path / "floor.db"
    h = liveness.health(db)
    assert not h.live and "No floor service reports on this store" in h.text
    clock = Clock()
    beat = liveness.Beat(db, clock=clock)
    beat.set("connecting")
    h = liveness.health(db, clock.t)
    assert (h.live, h.level) == (False, "warning") and "connecting to the broker" in h.text
    beat.set("connected")
    assert liveness.health(db, clock.t).live
    # Its last beat just within the limit: live; past it: silent, whatever
    # the file's state says (a kill -9 leaves "connected" behind).
    assert liveness.health(db, clock.t + liveness.STALE_S).live
    h = liveness.health(db, clock.t + liveness.STALE_S + 0.1)
    assert (h.live, h.level) == (False, "alarm")
    assert "has been silent since 2027-01-15 08:00:00 UTC" in h.text
    assert "what shows is what it stored until then" in h.text
    clock.t += 60
    beat.set("no-broker")
    h = liveness.health(db, clock.t + 1)
    assert not h.live and "not been connected to the broker since 2027-01-15 08:01:00" in h.text
    beat.set("stopped")
    h = liveness.health(db, clock.t + 3600)  # stopped: said as such, however long ago
    assert not h.live and h.text.startswith("The floor service was stopped at 2027-01-15 08:01:00")


@pytest.mark.parametrize("content", ["", "not json", "[]", '{"state": "connected"}',
                                     '{"state": "dancing", "since": 1, "beat": 1}',
                                     '{"state": "connected", "since": "x", "beat": 1}'])
def test_a_file_that_is_not_the_service_s_is_no_service(tmp_path, content):
    db = tmp_path / "floor.db"
    (tmp_path / "floor.db.service").write_text(content)
    assert liveness.read(db) is None
    h = liveness.health(db)
    assert not h.live and "No floor service reports" in h.text


def test_a_file_that_cannot_be_written_is_said_once_and_never_raises(tmp_path):
    lines = []
    beat = liveness.Beat(tmp_path / "no-such-folder" / "floor.db", log=lines.append)
    beat.set("connecting")
    beat.set("connected")
    assert len(lines) == 1 and "cannot write the service's state file" in lines[0]
    assert not liveness.health(tmp_path / "no-such-folder" / "floor.db").live


# ---- the service and its view, for real ---------------------------------------------------


@pytest.fixture()
def floor(tmp_path):
    b, _pw = broker_for(tmp_path, ["T1"])
    port = free_port()
    proc = FloorProc(tmp_path, b.port, extra=["--http", "127.0.0.1:%d" % port])
    proc.url = "http://127.0.0.1:%d/" % port
    proc.broker = b
    try:
        proc.start()
        yield proc
    finally:
        proc.stop()
        b.stop()


def _sicbo(*args):
    r = subprocess.run([sys.executable, "-m", "host_tools", *args], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _state(db):
    d = liveness.read(db)
    return d["state"] if d else None


def _banner(html):
    start = html.index('id="health"')
    return html[start:html.index("</div>", start)]


def test_the_service_says_when_it_loses_the_broker_and_when_it_is_stopped(floor):
    db = floor.db
    wait_for(lambda: _state(db) == "connected", "the service's file says connected",
             alive=floor.dead)
    assert " hidden>" in _banner(get(floor.url)[1])  # live: nothing to say
    floor.broker.kill()
    wait_for(lambda: _state(db) == "no-broker", "the service's file says no broker",
             alive=floor.dead)
    page = get(floor.url)[1]
    assert "health-alarm" in _banner(page)
    assert "has not been connected to the broker since" in _banner(page)
    # `sicbo floor tables` says it too, last, and in its JSON.
    out = _sicbo("floor", "tables", "--db", db)
    assert out.splitlines()[-1].startswith("floor: NOT live: The floor service has not been "
                                           "connected to the broker since")
    d = json.loads(_sicbo("floor", "tables", "--db", db, "--json"))["floor"]
    assert (d["live"], d["state"]) == (False, "no-broker")
    d = json.loads(get(floor.url + "api/tables")[1])["floor"]
    assert (d["live"], d["state"]) == (False, "no-broker") and "broker" in d["text"]
    floor.broker.restart()
    wait_for(lambda: _state(db) == "connected", "connected again", alive=floor.dead)
    assert " hidden>" in _banner(get(floor.url)[1])
    assert _sicbo("floor", "tables", "--db", db).splitlines()[-1] == (
        "floor: live (the service is connected to the broker)")
    # A crash leaves "connected" behind: its beat stops, and past STALE_S the
    # view says the service is silent.
    floor.kill()
    d = liveness.read(db)
    assert d["state"] == "connected"
    h = liveness.health(db, d["beat"] + liveness.STALE_S + 1)
    assert not h.live and "has been silent since" in h.text
    floor.start()
    wait_for(lambda: _state(db) == "connected" and liveness.read(db)["pid"] == floor.proc.pid,
             "the restarted service's file", alive=floor.dead)
    floor.proc.send_signal(signal.SIGTERM)  # a clean stop
    floor.proc.wait(60)
    assert _state(db) == "stopped"
    assert liveness.health(db).text.startswith("The floor service was stopped at")


def test_an_open_page_says_it_live_when_the_broker_goes_and_comes_back(floor):
    need_chromium()
    wait_for(lambda: _state(floor.db) == "connected", "connected", alive=floor.dead)
    browser = Browser()
    try:
        browser.get(floor.url)
        streaming(browser)
        assert not browser.one("#health").is_displayed()
        floor.broker.kill()
        browser.wait(lambda: browser.one("#health").is_displayed()
                     and "not been connected to the broker" in browser.one("#health").text,
                     "the page says the broker is lost")
        floor.broker.restart()
        browser.wait(lambda: not browser.one("#health").is_displayed(),
                     "the page says nothing once the broker is back")
        # The view's own server gone (it runs in the service's process): the
        # page says its stream is lost.
        floor.kill()
        browser.wait(lambda: browser.one("#stream-lost").is_displayed(),
                     "the page says it lost the view's server")
    finally:
        browser.quit()


def test_the_stream_says_the_floor_s_liveness_first_thing(floor):
    # An event stream opened on a live floor sends the (hidden) banner at
    # once: a page drawn a moment before a change is put right.
    import http.client

    wait_for(lambda: _state(floor.db) == "connected", "connected", alive=floor.dead)
    port = int(floor.url.rsplit(":", 1)[1].strip("/"))
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", "/events?page=grid&since=0")
    r = c.getresponse()
    assert r.status == 200
    event = None
    while True:
        line = r.readline().decode()
        assert line, "the stream ended before its first event"
        if line.startswith("event: "):
            event = line[7:].strip()
        elif line.startswith("data: ") and event == "health":
            html = json.loads(line[6:])["html"]
            break
    c.close()
    assert 'id="health"' in html and " hidden>" in html
