# The simulated `network` module of the virtual board: the ESP32's
# network.WLAN in station mode, as the ESP32 port (v1.28) behaves, over a
# link the virtual board's host can drop and restore (docs/simulated-table.md,
# ops network_down / network_up).
#
# The link's state is a line in the file named by $SICBO_SIM_NET (the
# virtual board writes it in its state folder, /.vboard/network):
#     up 127.0.0.1 PORT      or      down 127.0.0.1 PORT
# where 127.0.0.1:PORT is the host's relay to the broker. Importing this
# module (on MicroPython, with $SICBO_SIM_NET set) routes
# asyncio.open_connection there: every address goes to the relay while the
# link is up (a TLS connection keeps the name it asked for as its
# server_hostname), and the connection fails (OSError -202, lwIP's lookup
# without a network) while it is down. Without $SICBO_SIM_NET the link is up
# and nothing is rerouted; sim_link(up) sets it in-process (tests).
#
# As on the ESP32: connect() needs active(True) first ("Wifi Not Started"),
# returns at once, and the station associates (and, once asked, keeps
# associating again after every drop) whenever the link is up; status() is
# STAT_GOT_IP when connected, STAT_NO_AP_FOUND while the link is down after
# a drop or a connect, STAT_IDLE after disconnect() or before any connect.
import os

STA_IF = 0
AP_IF = 1
STAT_IDLE = 1000
STAT_CONNECTING = 1001
STAT_GOT_IP = 1010
STAT_BEACON_TIMEOUT = 200
STAT_NO_AP_FOUND = 201
STAT_WRONG_PASSWORD = 202
STAT_ASSOC_FAIL = 203
STAT_HANDSHAKE_TIMEOUT = 204

_FILE = os.getenv("SICBO_SIM_NET") if hasattr(os, "getenv") else None
_forced = None  # sim_link(): True/False in-process; None: the file decides


def sim_link(up):
    """Set the simulated link up or down in-process (None: back to the file)."""
    global _forced
    _forced = up


def sim_route():
    """(up, host, port): the link's state and where the broker's traffic
    goes; host is None when nothing is rerouted."""
    if _forced is not None:
        return _forced, None, 0
    if not _FILE:
        return True, None, 0
    try:
        with open(_FILE) as f:
            words = f.read().split()
        return words[0] == "up", words[1], int(words[2])
    except (OSError, IndexError, ValueError):
        return False, None, 0  # no network described yet: down


def _route_asyncio():
    import asyncio

    direct = asyncio.open_connection

    async def open_connection(host, port, ssl=None, server_hostname=None):
        up, relay, relay_port = sim_route()
        if not up:
            raise OSError(-202)
        if relay is not None:
            if ssl and not server_hostname:
                server_hostname = host
            host, port = relay, relay_port
        if ssl:
            return await direct(host, port, ssl=ssl, server_hostname=server_hostname)
        return await direct(host, port)

    asyncio.open_connection = open_connection


if _FILE:
    import sys

    if sys.implementation.name == "micropython":
        _route_asyncio()


class WLAN:
    _active = False
    _requested = False
    _reason = 0  # the last disconnect's reason (0: none)

    def __init__(self, interface=STA_IF):
        if interface not in (STA_IF, AP_IF):
            raise ValueError("invalid WLAN interface identifier")
        self.interface = interface

    def active(self, is_active=None):
        if is_active is None:
            return WLAN._active
        WLAN._active = bool(is_active)
        if not is_active:
            WLAN._requested = False
        return WLAN._active

    def connect(self, ssid=None, key=None, bssid=None):
        if self.interface != STA_IF:
            raise OSError("STA required")
        if not WLAN._active:
            raise OSError("Wifi Not Started")
        WLAN._requested = True
        WLAN._reason = 0

    def disconnect(self):
        if not WLAN._active:
            raise OSError("Wifi Not Started")
        WLAN._requested = False
        WLAN._reason = 8  # WIFI_REASON_ASSOC_LEAVE

    def isconnected(self):
        if self.interface != STA_IF or not (WLAN._active and WLAN._requested):
            return False
        if sim_route()[0]:
            WLAN._reason = 0
            return True
        WLAN._reason = STAT_NO_AP_FOUND
        return False

    def status(self, param=None):
        if param is not None:
            if param == "rssi":
                return -50 if self.isconnected() else 0
            raise ValueError("unknown status param")
        if self.interface != STA_IF:
            return None
        if self.isconnected():
            return STAT_GOT_IP
        if WLAN._reason == STAT_NO_AP_FOUND:
            return STAT_NO_AP_FOUND
        if WLAN._reason == 8:
            return STAT_IDLE
        if WLAN._requested:
            return STAT_CONNECTING
        return STAT_IDLE

    def ifconfig(self):
        if self.isconnected():
            return ("10.0.0.2", "255.255.255.0", "10.0.0.1", "10.0.0.1")
        return ("0.0.0.0", "0.0.0.0", "0.0.0.0", "0.0.0.0")
