# The validated configuration as the controller keeps it after boot: a
# TableConfig (parsed by sicbo.config) and a Board (parsed by sicbo.board).
# The parsers are boot-only and dropped from memory once the table runs; the
# objects they return stay, so their classes live here, in a module of their
# own (a live method keeps its whole module alive).


class TableConfig:
    """A validated table configuration. Areas are catalogue indices."""

    def __init__(self):
        self.name = ""
        self.edition = 0
        self.shaker = ""
        self.offered = ()  # area indices, catalogue order
        self.odds = b""  # odds per catalogue index (SINGLE: per die), 0 if not offered
        self.triple_kills = ()  # area indices
        self.lamp_order = ()  # channel names; None is a spare channel
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
