# The floor link's outbox (device/link/outbox.py) at more of its edges: the
# cursor file read back as write_cursor leaves it (its line's end taken
# off); the task calling the alive() it was made with at every pass, and
# sleeping each pass's milliseconds as seconds where asyncio has no sleep_ms
# (CPython); a Wi-Fi given the default 10 s to associate, timed from when it
# was first found down even at tick 0, and looked at every second while
# connected (a second to the millisecond); a batch in flight that the journal
# rotated away during an outage dropped from the window, not sent again,
# the pass going on; and a floor's ack of 0 taken as a number, not as
# garbage. Portable.
import asyncio

import linkkit
from folderkit import rmdir, tmpdir
from link import client as C
from link import outbox
from link.outbox import Link, read_cursor, write_cursor

T0 = 300000  # a clock that is not near 0
ACK = b"sicbo/S1/T01/ack"


class Rig(linkkit.made_rig(Link)):
    """A Link whose packets go to a list, its outages to `downs`."""

    def __init__(self, source, name, saved=None, **kw):
        self.sent = []
        self.downs = []
        self.folder = tmpdir("cursor_wifi_" + name)
        if saved is not None:  # the cursor a previous run saved
            write_cursor(self.folder + "/cursor", saved)
        kw.setdefault("ticks_ms", lambda: T0)
        Link.__init__(self, source, "S1", "T01", "127.0.0.1", 1, self.folder + "/cursor",
                      down=lambda code, detail: self.downs.append((code, detail)), **kw)

    def journal(self):
        """(pid, sequence numbers, DUP) of each journal publish sent."""
        out = []
        for pkt in self.sent:
            if pkt[0] >> 4 == 3:
                pid, topic, payload = linkkit.publish_parts(pkt)
                if topic.endswith(b"journal"):
                    out.append((pid, linkkit.seqs_of(payload), bool(pkt[0] & 8)))
        return out


def _source(n):
    s = linkkit.MemorySource()
    s.add(1, n)
    return s


class Stop(Exception):
    """Ends the link's task from inside it (the test has seen enough)."""


# ---- the cursor file ----------------------------------------------------------


def test_a_cursor_saved_with_its_line_end_is_read_back_whole():
    d = tmpdir("cursor_wifi_cursor")
    path = d + "/cursor"
    with open(path, "w") as f:  # a number and nothing after it
        f.write("9")
    assert read_cursor(path) == 9
    write_cursor(path, 5)  # "5\n"
    assert read_cursor(path) == 5
    for text in ("77\r\n", "1234 "):  # edited by hand, or by another tool
        with open(path, "w") as f:
            f.write(text)
        assert read_cursor(path) == int(text.strip()), text
    rmdir(d)


def test_a_link_made_after_a_restart_goes_on_from_the_saved_cursor():
    link = Rig(_source(9), "restart", saved=6)
    assert link.cursor == link.top == 6
    link.connack(T0)
    assert link.journal()[0][1] == [7, 8, 9]  # the floor has 1..6 already
    rmdir(link.folder)


# ---- the task: alive() at every pass, the sleeps --------------------------------


def test_the_task_calls_the_alive_it_was_made_with_at_every_pass():
    beats = []

    def alive():
        beats.append(link.state)
        if len(beats) == 3:
            raise Stop()

    link = Rig(_source(3), "alive", alive=alive, tick_ms=0)
    try:
        asyncio.run(link.run())
        raise AssertionError("the task ended by itself")
    except Stop:
        pass
    # The first pass opened the connection; the next ones wait for the CONNACK.
    assert beats == [C.CONNECTING, C.CONNECTING, C.CONNECTING], beats
    assert link.state == C.DOWN  # closed as the task ended
    rmdir(link.folder)


class NoSleepMs:
    """An asyncio with sleep(seconds) and no sleep_ms (CPython's): records
    what each pass sleeps."""

    def __init__(self):
        self.slept = []

    async def sleep(self, s):
        self.slept.append(s)
        if len(self.slept) == 3:
            raise Stop()


def test_without_sleep_ms_each_pass_sleeps_its_milliseconds_as_seconds():
    link = Rig(_source(3), "seconds")  # tick_ms: 20 by default
    fake = NoSleepMs()
    saved = outbox.asyncio
    outbox.asyncio = fake
    try:
        asyncio.run(link.run())
        raise AssertionError("the task ended by itself")
    except Stop:
        pass
    finally:
        outbox.asyncio = saved
    assert len(fake.slept) == 3
    for s in fake.slept:
        assert abs(s - 0.02) < 1e-6, fake.slept  # 20 ms, not 20/999 s
    rmdir(link.folder)


# ---- the Wi-Fi: connect_ms -------------------------------------------------------


class NoAccessPoint:
    """A Wi-Fi station that never associates."""

    def up(self, now):
        return False

    def connected(self):
        return False

    def status(self):
        return 201  # STAT_NO_AP_FOUND, say


def _first_outage(link, start, until, every):
    """Passes from start, every `every` ms: the tick at which the outage
    was told (None if not by `until`)."""
    now = start
    while now <= until:
        link.step(now)
        if link.downs:
            return now
        now += every
    return None


def test_the_wifi_gets_ten_seconds_to_associate_by_default():
    link = Rig(_source(3), "wifi_default", wifi=NoAccessPoint())
    link.step(T0)  # found down: the wait for the association begins
    assert link.downs == [] and link.state == C.DOWN
    link.step(T0 + 9999)  # 1 ms short of 10 s: still associating
    assert link.downs == [] and link.state == C.DOWN
    link.step(T0 + 10099)  # the next look, past 10 s: an outage
    assert link.downs == [(C.L_NETWORK, 201)]
    assert link.sent == []
    rmdir(link.folder)


def test_a_wifi_first_found_down_at_tick_0_is_timed_from_tick_0():
    # ticks_ms wraps, and 0 is one of its values like any other: the wait
    # starts at the first pass that finds the Wi-Fi down, not at the next.
    link = Rig(_source(3), "wifi_tick0", wifi=NoAccessPoint(), ticks_ms=lambda: 0)
    told = _first_outage(link, 0, 20000, 20)
    assert told == 10000, told
    assert link.downs == [(C.L_NETWORK, 201)]
    rmdir(link.folder)



class Dropping:
    """A Wi-Fi station that is up until its access point goes (`on` made
    False); `looks` counts the link's looks at it while connected."""

    def __init__(self):
        self.on = True
        self.looks = 0

    def up(self, now):
        return self.on

    def connected(self):
        self.looks += 1
        return self.on

    def status(self):
        return 1010 if self.on else 201  # STAT_GOT_IP, STAT_NO_AP_FOUND


def test_while_connected_the_wifi_is_looked_at_every_second_to_the_millisecond():
    wifi = Dropping()
    link = Rig(_source(3), "wifi_second", wifi=wifi)  # made at T0
    link.connack(T0)
    assert link.is_up and wifi.looks == 0
    link.step(T0 + 999)
    assert wifi.looks == 0  # not every pass
    link.step(T0 + 1000)  # a second after the link was made
    assert wifi.looks == 1 and link.is_up
    link.step(T0 + 1999)
    assert wifi.looks == 1
    wifi.on = False  # the access point goes
    link.step(T0 + 2000)  # a second after the last look: the outage is found
    assert wifi.looks == 2
    assert link.downs == [(C.L_NETWORK, 201)] and link.state == C.DOWN
    rmdir(link.folder)

# ---- a reconnection after the journal rotated ------------------------------------


class Bounded(linkkit.MemorySource):
    """A journal that fails the test when one pass reads it more than
    `limit` times (a pass is short: it never goes round for ever)."""

    def __init__(self):
        linkkit.MemorySource.__init__(self)
        self.limit = 1 << 30

    def read_after(self, seq, buf, limit):
        if self.reads >= self.limit:
            raise AssertionError("the pass reads the journal without end")
        return linkkit.MemorySource.read_after(self, seq, buf, limit)


def test_a_batch_in_flight_rotated_away_in_an_outage_is_dropped_not_sent_again():
    src = Bounded()
    src.add(1, 10)
    link = Rig(src, "rotated", window=4, batch=72)  # two records a batch
    link.connack(T0)
    pids = [x[0] for x in link.journal()]
    assert len(pids) == 4 and linkkit.stats(link)["in_flight"] == 4  # 1-2 .. 7-8
    link._fail(C.L_CLOSED, 0)  # the broker goes, no PUBACK came
    link.step(T0)
    assert link.state == C.DOWN and link.downs == [(C.L_CLOSED, 0)]
    src.drop_through(4)  # meanwhile the journal rotated the first two batches away
    now = T0 + 2000  # past the backoff and its jitter
    src.limit = src.reads + 40
    link.connack(now)
    # Only the batches the journal still holds went again, with their ids.
    again = [x[:2] for x in link.journal() if x[2]]
    assert again == [(pids[2], [5, 6]), (pids[3], [7, 8])], again
    s = linkkit.stats(link)
    assert s["resent"] == 2 and link.is_up and s["in_flight"] <= 4, s
    rmdir(link.folder)


# ---- the floor's ack -------------------------------------------------------------


def _ack(text):
    """The floor's ack (QoS 0) as the broker delivers it."""
    body = len(ACK).to_bytes(2, "big") + ACK + text
    return bytes([0x30, len(body)]) + body


def test_an_ack_of_0_is_a_number_and_not_garbage():
    # A floor that has stored nothing of this table yet says 0.
    link = Rig(_source(3), "ack0")
    link.connack(T0)
    link.deliver(_ack(b"0"), T0 + 1)
    s = linkkit.stats(link)
    assert s["garbage"] == 0 and s["acks"] == 0 and s["cursor"] == 0, s
    link.deliver(_ack(b"x"), T0 + 2)  # not a number: that one is garbage
    assert linkkit.stats(link)["garbage"] == 1
    link.deliver(_ack(b"3"), T0 + 3)
    s = linkkit.stats(link)
    assert s["cursor"] == 3 and s["acks"] == 1 and s["garbage"] == 1, s
    rmdir(link.folder)
