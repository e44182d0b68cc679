# More of the floor link's outbox (device/link/outbox.py): the Wi-Fi while
# the connection to the broker is up. The station is asked about once a
# second, and a Wi-Fi that went away is an outage told at once, for what it
# is (the network, with the station's status), not a broker found silent a
# keepalive and a half later. Portable.
import linkkit
from folderkit import tmpdir
from link import client as C
from link.outbox import Link

T0 = 500000  # a clock that is not near 0


class Station:
    """A Wi-Fi station whose association the test decides; counts how often
    the link asks whether it is still connected."""

    def __init__(self):
        self.is_up = True
        self.asked = 0

    def up(self, now):
        return self.is_up

    def connected(self):
        self.asked += 1
        return self.is_up

    def status(self):
        return 201  # STAT_NO_AP_FOUND, say


class Rig(linkkit.made_rig(Link)):
    """A Link over a Wi-Fi station of the test's, its packets to a list."""

    def __init__(self, wifi, name):
        self.sent = []
        self.downs = []
        src = linkkit.MemorySource()
        src.add(1, 5)
        Link.__init__(self, src, "S1", "T01", "127.0.0.1", 1, tmpdir("lom_" + name) + "/cursor",
                      down=lambda code, detail: self.downs.append((code, detail)),
                      wifi=wifi, keepalive_s=30, ticks_ms=lambda: T0)


def test_a_wifi_that_goes_while_connected_is_an_outage_within_a_second():
    wifi = Station()
    link = Rig(wifi, "wifi_drop")
    link.connack(T0)
    sub = [pkt for pkt in link.sent if pkt[0] >> 4 == 8]
    link.deliver(b"\x90\x03" + sub[0][2:4] + b"\x01", T0)  # SUBACK: granted
    assert link.is_up and link.downs == []
    now = T0
    while now < T0 + 3000:  # up: the station asked once a second, not every pass
        now += 20
        link.step(now)
    assert link.is_up and link.downs == [] and 2 <= wifi.asked <= 4, wifi.asked
    wifi.is_up = False  # the access point is gone
    gone = now
    while link.is_up and now < gone + 60000:
        now += 20
        link.step(now)
    assert link.downs == [(C.L_NETWORK, 201)], link.downs
    assert now - gone <= 1000, now - gone
    assert link.state == C.DOWN and linkkit.stats(link)["failures"] == 1
