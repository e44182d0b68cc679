# The validated configuration as the controller keeps it after boot: a
# TableConfig (parsed by sicbo.config) and a Board (parsed by sicbo.board).
# The parsers are boot-only and dropped from memory once the table runs; the
# objects they return stay, so their classes live here, in a module of their
# own (a live method keeps its whole module alive).

from micropython import const

# A lamp channel's code in TableConfig.lamps: a catalogue index (sicbo.areas),
# a status lamp (_STATUS + its index in sicbo.signals.STATUS_LAMPS, spelt
# here: importing that module would intern its every name on the running
# table), or a spare channel.
_STATUS = const(250)
_SPARE = const(255)
_STATUS_LAMPS = const(("PLACE_BETS", "ALARM", "VOID", "PAYING"))


def lamp_name(code):
    """A channel's name from its code: an area code, a status lamp, None."""
    if code == _SPARE:
        return None
    if code >= _STATUS:
        return _STATUS_LAMPS[code - _STATUS]
    from sicbo.areas import code as area_code

    return area_code(code)


class TableConfig:
    """A validated table configuration. Areas are catalogue indices."""

    def __init__(self):
        self.name = ""
        self.edition = 0
        self.shaker = ""
        self.offered = ()  # area indices, catalogue order
        self.odds = b""  # odds per catalogue index (SINGLE: per die), 0 if not offered
        self.triple_kills = ()  # area indices
        # One code a lamp channel (lamp_name names it): the running table keeps these
        # bytes, not a string a channel (121 of them in a full 2004 layout:
        # 4 KiB of the board's heap for the table's life).
        self.lamps = b""
        self.void_policy = ""
        self.resume_policy = ""
        self.approval = {}
        # The floor link's backlog (docs/floor.md): journal records kept for
        # the floor until it has acknowledged them, up to this many rounds'
        # worth of flash; past it, what the table does (WHEN_FULL).
        self.backlog_rounds = 1000
        self.when_full = "keep_playing"

    def is_offered(self, area):
        return self.odds[area] != 0

    def channel_name(self, channel):
        """One lamp channel's name (lamp_order's, without making them all)."""
        return lamp_name(self.lamps[channel])

    @property
    def lamp_order(self):
        """The channels' names in order (area codes, status lamps, None for
        a spare), made when asked: for people, files and the host."""
        return tuple(lamp_name(c) for c in self.lamps)

    @lamp_order.setter
    def lamp_order(self, names):
        # The codes of names (sicbo.config checks a file's first); a name
        # that is neither an area nor a status lamp is refused.
        from sicbo.areas import index_of

        codes = bytearray(len(names))
        for k, name in enumerate(names):
            if name is None:
                codes[k] = _SPARE
            elif name in _STATUS_LAMPS:
                codes[k] = _STATUS + _STATUS_LAMPS.index(name)
            else:
                i = index_of(name)
                if i < 0:
                    raise ValueError("no lamp named %r" % (name,))
                codes[k] = i
        self.lamps = bytes(codes)


class Board:
    """A validated board file. Pins are GPIO numbers."""

    def __init__(self):
        self.name = ""
        self.description = ""
        # One (signal, pin, pull, invert) per INPUT_SIGNALS entry, same order;
        # pin and pull are None for a key read through the chain (keys).
        self.inputs = ()
        # None, or the 74HC165 chain of the keys: bus "hc165", load (GPIO),
        # nbits, invert, bits {signal: bit}, high and low (sentinel bits)
        self.keys = None
        self.outputs = {}  # signal -> pin, for the outputs present
        # bus "hc595": spi, sck, mosi, miso (None), latch, oe (None), baudrate
        # bus "neopixel": pin, count, colour (tuple)
        self.lamps = {}
        self.reader = None  # or {"uart", "tx", "rx", "baudrate"}
        self.timers = {}  # user -> hardware timer id
        self.timings = {}  # every TIMINGS name -> int
        # None, or the floor link: site, table, broker, port, tls,
        # server_name, keepalive_s, wifi (sicbo/board.py)
        self.floor = None
        self.pins = {}  # pin -> the field that uses it ("inputs.cover")
        self.warnings = []  # strings, each naming the field and the pin

    def input_index(self, signal):
        from sicbo.signals import INPUT_SIGNALS

        return INPUT_SIGNALS.index(signal)
