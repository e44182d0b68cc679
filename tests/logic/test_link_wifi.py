# The table's Wi-Fi (device/link/wifi.py) over the simulated network
# (sim/network.py), whose link the test drops and restores. Portable.
import network
from link.wifi import Station


def _fresh():
    network.sim_link(True)
    w = network.WLAN(network.STA_IF)
    w.active(False)
    return w


def test_wlan_behaves_as_the_esp32_port():
    w = _fresh()
    try:
        w.connect("floor", "key")
    except OSError as e:
        assert "Not Started" in str(e)
    else:
        raise AssertionError("connect before active(True)")
    assert w.status() == network.STAT_IDLE and not w.isconnected()
    w.active(True)
    w.connect("floor", "key")
    assert w.isconnected() and w.status() == network.STAT_GOT_IP
    assert w.ifconfig()[0] != "0.0.0.0"
    network.sim_link(False)  # the access point is gone
    assert not w.isconnected() and w.status() == network.STAT_NO_AP_FOUND
    assert w.ifconfig()[0] == "0.0.0.0"
    network.sim_link(True)  # back: it associates again by itself
    assert w.isconnected()
    w.disconnect()
    assert not w.isconnected() and w.status() == network.STAT_IDLE
    network.sim_link(None)


def test_station_connects_and_reconnects_with_backoff():
    w = _fresh()
    st = Station("floor", "key", backoff_ms=100, backoff_max_ms=400, wlan=w)
    assert not st.up(0)  # connect() asked
    assert st.up(1) and st.connected() and st.attempts == 1
    network.sim_link(False)
    assert not st.connected() and st.status() == network.STAT_NO_AP_FOUND
    tries = []
    for now in range(10, 3000, 10):
        n = st.attempts
        st.up(now)
        if st.attempts != n:
            tries.append(now)
    gaps = [tries[i + 1] - tries[i] for i in range(len(tries) - 1)]
    assert gaps[:3] == [100, 200, 400] and all(g == 400 for g in gaps[3:])
    network.sim_link(True)
    assert st.up(3000)
    network.sim_link(None)


def test_a_station_made_without_a_wlan_drives_the_boards_own():
    w = _fresh()
    st = Station("floor", "key")  # as the board makes it: network.WLAN(STA_IF)
    assert not st.up(0)
    assert st.up(1) and w.isconnected() and w.active()
    network.sim_link(None)
