# The board file's limits (sicbo.board): every timing at both ends of its
# range, the rules that tie timings together (the coil's hard limit and rest),
# the reader and lamp sections' ranges, and unknown keys refused in every
# section, so that a limit moved by one or a check dropped fails here.
from sicbo import board
from sicbo.errors import ConfigError


def _board(**changes):
    ins = {}
    pins = {"cover": 34, "clasp_left": 35, "clasp_right": 36, "shake": 39, "supervisor": 32,
            "key_bell": 33, "key_void": 14, "key_payout": 27, "key_confirm": 13,
            "key_face_1": 21, "key_face_2": 22, "key_face_3": 4, "key_face_4": 16,
            "key_face_5": 17, "key_face_6": 38}
    for name in pins:
        p = pins[name]
        ins[name] = {"pin": p, "pull": "none" if p >= 34 else "up"}
    b = {"name": "test board", "inputs": ins,
         "outputs": {"solenoid": 25, "shaker_motor": 26, "bell": 15},
         "lamps": {"bus": "hc595", "spi": 2, "sck": 18, "mosi": 23, "latch": 19}}
    for k in changes:
        b[k] = changes[k]
    return b


def _field(obj):
    """The field a refused board names, or None if it is accepted."""
    try:
        board.parse_board(obj)
    except ConfigError as e:
        return e.field
    return None


# Timings that every other timing's extreme values are consistent with.
def _timings(name, value):
    t = {name: value}
    if name == "chatter_window_ms":
        t["debounce_ms"] = 1
    elif name == "debounce_ms":
        t["chatter_window_ms"] = 60000
    elif name == "pulse_on_ms":
        t["max_on_ms"] = 1000
    elif name == "max_on_ms":
        t["pulse_on_ms"] = 1
    elif name == "rest_ms":
        t["pulse_off_ms"] = 10000
    elif name == "pulse_off_ms":
        t["rest_ms"] = 0
    elif name == "hold_percent" and value:
        t["pull_in_ms"] = 1
    elif name == "pull_in_ms" and value:
        t["hold_percent"] = 50
        t["pulse_on_ms"] = 980
        t["max_on_ms"] = 1000
    return t


def test_every_timing_accepted_at_its_ends_refused_past_them():
    for name in sorted(board.TIMINGS):
        default, low, high = board.TIMINGS[name]
        assert low <= default <= high, name
        for value in (low, high):
            if name == "pull_in_ms" and value == high:
                value = 979  # below pulse_on_ms, at most 980
            if name == "hold_percent" and value == low:
                value = 0
            t = _timings(name, value)
            got = _field(_board(timings=t))
            assert got is None, (name, value, got)
            assert board.parse_board(_board(timings=t)).timings[name] == value
        for value in (low - 1, high + 1):
            assert _field(_board(timings=_timings(name, value))) == "timings." + name, (
                name, value)
    # Defaults when absent.
    t = board.parse_board(_board()).timings
    for name in board.TIMINGS:
        assert t[name] == board.TIMINGS[name][0], name


def test_timing_ranges_are_the_documented_ones():
    # The coil's and the shaker's limits, as docs/board-files.md gives them.
    assert board.TIMINGS["max_on_ms"] == (200, 21, 1000)
    assert board.TIMINGS["rest_ms"] == (150, 0, 10000)
    assert board.TIMINGS["electric_run_ms"] == (3000, 100, 30000)
    assert board.TIMINGS["pulse_count"] == (3, 1, 20)
    assert board.TIMINGS["watchdog_ms"] == (8000, 1000, 60000)


def test_timings_tied_together():
    ok = _field
    assert ok(_board(timings={"debounce_ms": 50, "chatter_window_ms": 50})) == \
        "timings.chatter_window_ms"
    assert ok(_board(timings={"debounce_ms": 50, "chatter_window_ms": 51})) is None
    # A pulse ends PULSE_MARGIN_MS before the coil's hard limit at the latest:
    # as long as it, the hard-off timer cut every pulse, a fault each shake.
    assert ok(_board(timings={"pulse_on_ms": 200, "max_on_ms": 200})) == "timings.pulse_on_ms"
    assert ok(_board(timings={"pulse_on_ms": 181, "max_on_ms": 200})) == "timings.pulse_on_ms"
    assert ok(_board(timings={"pulse_on_ms": 180, "max_on_ms": 200})) is None
    assert ok(_board(timings={"pulse_off_ms": 149, "rest_ms": 150})) == "timings.pulse_off_ms"
    assert ok(_board(timings={"pulse_off_ms": 150, "rest_ms": 150})) is None
    assert ok(_board(timings={"hold_percent": 4, "pull_in_ms": 10})) == "timings.hold_percent"
    assert ok(_board(timings={"hold_percent": 5, "pull_in_ms": 10})) is None
    assert ok(_board(timings={"hold_percent": 50, "pull_in_ms": 0})) == "timings.pull_in_ms"
    assert ok(_board(timings={"hold_percent": 50, "pull_in_ms": 60,
                              "pulse_on_ms": 60})) == "timings.pull_in_ms"
    assert ok(_board(timings={"hold_percent": 50, "pull_in_ms": 59,
                              "pulse_on_ms": 60})) is None
    assert ok(_board(timings={"pull_in_ms": 10})) == "timings.pull_in_ms"
    assert ok(_board(timings={"pulse_count": True})) == "timings.pulse_count"
    assert ok(_board(timings={"rest_ms": 1.5})) == "timings.rest_ms"


def test_unknown_keys_refused_in_every_section():
    reader = {"uart": 2, "tx": 1, "rx": 3, "baudrate": 9600}
    assert _field(_board(reader=reader)) is None
    bad = dict(reader)
    bad["parity"] = 0
    assert _field(_board(reader=bad)) == "reader.parity"
    assert _field(_board(timings={"bell_ms": 1500, "bel_ms": 2})) == "timings.bel_ms"
    assert _field(_board(timers={"solenoid": 0, "horn": 3})) == "timers.horn"
    lamps = {"bus": "hc595", "spi": 2, "sck": 18, "mosi": 23, "latch": 19, "colour": [1, 2, 3]}
    assert _field(_board(lamps=lamps)) == "lamps.colour"
    b = _board()
    b["inputs"]["cover"] = {"pin": 34, "pull": "none", "inverted": True}
    assert _field(b) == "inputs.cover.inverted"
    assert _field(_board(extra=1)) == "extra"


def test_reader_ranges():
    def reader(**kw):
        r = {"uart": 2, "tx": 1, "rx": 3, "baudrate": 9600}
        for k in kw:
            r[k] = kw[k]
        return _board(reader=r)

    for good in (1200, 1000000):
        assert _field(reader(baudrate=good)) is None
        assert board.parse_board(reader(baudrate=good)).reader["baudrate"] == good
    for bad in (1199, 1000001):
        assert _field(reader(baudrate=bad)) == "reader.baudrate"
    assert _field(reader(uart=1)) is None
    assert _field(reader(uart=0)) == "reader.uart"
    assert _field(reader(uart=3)) == "reader.uart"
    assert _field(reader(uart=True)) == "reader.uart"
    r = {"uart": 2, "rx": 3}
    assert _field(_board(reader=r)) == "reader.tx"
    r = {"uart": 2, "tx": 1}
    assert _field(_board(reader=r)) == "reader.rx"
    got = board.parse_board(_board(reader={"tx": 1, "rx": 3})).reader
    assert got == {"uart": 2, "tx": 1, "rx": 3, "baudrate": 9600}
    assert _field(reader(rx=37)) is None  # rx is an input: an input-only pin will do
    assert _field(reader(tx=34)) == "reader.tx"


def test_lamp_ranges():
    def strip(**kw):
        lamps = {"bus": "neopixel", "pin": 5, "count": 30}
        for k in kw:
            lamps[k] = kw[k]
        return _board(lamps=lamps)

    for good in (1, 1024):
        assert _field(strip(count=good)) is None
    for bad in (0, 1025):
        assert _field(strip(count=bad)) == "lamps.count"
    assert _field(strip(colour=[0, 255, 0])) is None
    assert _field(strip(colour=[0, 0, 0, 255])) is None
    for bad in ([0, 256, 0], [-1, 0, 0], [0, 0], [0, 0, 0, 0, 0], "white"):
        assert _field(strip(colour=bad)) == "lamps.colour", bad
    assert board.parse_board(strip()).lamps["colour"] == (255, 255, 255)
    spi = {"bus": "hc595", "spi": 2, "sck": 18, "mosi": 23, "latch": 19}
    for good in (1000, 20000000):
        d = dict(spi)
        d["baudrate"] = good
        assert _field(_board(lamps=d)) is None
    for bad in (999, 20000001):
        d = dict(spi)
        d["baudrate"] = bad
        assert _field(_board(lamps=d)) == "lamps.baudrate"


def test_gpio_ranges():
    def cover(pin):
        b = _board()
        b["inputs"]["cover"] = {"pin": pin, "pull": "none" if pin >= 34 else "up"}
        return b

    assert _field(cover(37)) is None
    assert _field(cover(40)) == "inputs.cover"
    assert _field(cover(-1)) == "inputs.cover"
    for pin in (6, 11, 20, 24, 28, 31):
        assert _field(cover(pin)) == "inputs.cover", pin
    assert _field(cover(23)) == "lamps.mosi"  # a pin used twice: named by its second use
    out = _board()
    out["outputs"]["bell"] = 0
    assert _field(out) is None
    out["outputs"]["bell"] = 33
    assert _field(out) == "outputs.bell"  # the bell key's already
    out["outputs"]["bell"] = 34
    assert _field(out) == "outputs.bell"


def test_blank_configuration_objects_have_every_field():
    # What the parsers and the configuration cache fill in; a field they
    # leave out keeps these values.
    from sicbo.settings import Board, TableConfig

    c = TableConfig()
    assert (c.name, c.edition, c.shaker, c.offered, c.odds, c.triple_kills, c.lamp_order,
            c.void_policy, c.resume_policy, c.approval) == (
        "", 0, "", (), b"", (), (), "", "", {})
    b = Board()
    assert (b.name, b.description, b.inputs, b.keys, b.outputs, b.lamps, b.reader, b.timers,
            b.timings, b.pins, b.warnings, b.floor) == (
        "", "", (), None, {}, {}, None, {}, {}, {}, [], None)


def test_sections_that_are_not_objects_name_themselves():
    assert _field(_board(reader=5)) == "reader"
    assert _field(_board(reader=[1])) == "reader"
    assert _field(_board(timings=3)) == "timings"
    assert _field(_board(timers="x")) == "timers"


def test_every_missing_gpio_and_flash_pin_refused():
    for pin in (6, 7, 8, 9, 10, 11, 20, 24, 28, 29, 30, 31):
        b = _board()
        b["outputs"]["bell"] = pin
        assert _field(b) == "outputs.bell", pin


def test_config_errors_name_their_field():
    from sicbo import config
    from tables import table_dict

    e = ConfigError("reader.tx", "missing")
    assert e.field == "reader.tx" and str(e) == "reader.tx: missing"
    for bad in ("", "  ", 5):
        t = table_dict()
        t["name"] = bad
        try:
            config.parse_table(t)
        except ConfigError as e:
            assert e.field == "name", e.field
        else:
            raise AssertionError("accepted name %r" % (bad,))


def test_the_board_files_strip_is_driven_on_its_own_pin():
    import machine

    from hw import build

    machine.sim_reset()
    b = board.parse_board(_board(lamps={"bus": "neopixel", "pin": 23, "count": 16,
                                        "colour": [0, 0, 255]}))
    lamps = build.lamps(b, 2)
    f = bytearray(2)
    f[1] = 2  # channel 1 (sicbo.settle.set_channel)
    lamps.write(f)
    # Pixel 1 alone, in its colour (G, R, B on the wire).
    assert machine.sim_neopixel(23) == bytes(5) + b"\xff" + bytes(42)
