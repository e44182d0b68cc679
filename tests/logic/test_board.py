# Board-file validation (sicbo.board): the ESP32's pin rules, the table's
# signals, the lamp bus, timers and timings. Boards are built in code (so the
# tests run on a board too); the shipped files are checked when present.
import json

from sicbo import board
from sicbo.errors import ConfigError

KEYS = ("supervisor", "key_bell", "key_void", "key_payout", "key_confirm",
        "key_face_1", "key_face_2", "key_face_3", "key_face_4", "key_face_5",
        "key_face_6")
KEY_PINS = (32, 33, 14, 27, 13, 21, 22, 4, 16, 17, 38)


def board_dict(**changes):
    inputs = {"cover": {"pin": 34, "pull": "none"},
              "clasp_left": {"pin": 35, "pull": "none"},
              "clasp_right": {"pin": 36, "pull": "none"},
              "shake": {"pin": 39, "pull": "none"}}
    for k in range(len(KEYS)):
        inputs[KEYS[k]] = {"pin": KEY_PINS[k], "pull": "none" if KEY_PINS[k] >= 34 else "up",
                           "invert": True}
    b = {
        "name": "test board",
        "inputs": inputs,
        "outputs": {"solenoid": 25, "shaker_motor": 26, "bell": 15},
        "lamps": {"bus": "hc595", "spi": 2, "sck": 18, "mosi": 23, "latch": 19},
    }
    for k in changes:
        b[k] = changes[k]
    return b


def refusal(obj):
    try:
        board.parse_board(obj)
    except ConfigError as e:
        return e
    raise AssertionError("board file was accepted")


def with_input(signal, spec):
    d = board_dict()
    d["inputs"][signal] = spec
    return d


def with_output(signal, spec):
    d = board_dict()
    d["outputs"][signal] = spec
    return d


def test_good_board_loads_with_defaults():
    b = board.parse_board(board_dict())
    assert b.name == "test board"
    assert len(b.inputs) == len(board.INPUT_SIGNALS)
    assert b.inputs[0] == ("cover", 34, "none", False)
    assert b.inputs[b.input_index("key_confirm")] == ("key_confirm", 13, "up", True)
    assert b.outputs == {"solenoid": 25, "shaker_motor": 26, "bell": 15}
    assert b.lamps["bus"] == "hc595" and b.lamps["latch"] == 19 and b.lamps["oe"] is None
    assert b.lamps["baudrate"] == 1000000
    assert b.reader is None
    assert b.timers == {"solenoid": 0, "shaker_motor": 1, "bell": 2}
    assert b.timings["max_on_ms"] == 200 and b.timings["pulse_count"] == 3
    assert b.pins[19] == "lamps.latch" and b.pins[34] == "inputs.cover"


def test_strapping_pin_output_is_a_warning_naming_signal_and_pin():
    b = board.parse_board(board_dict())
    assert len(b.warnings) == 1  # bell on GPIO15
    assert b.warnings[0].startswith("outputs.bell: GPIO15 ")
    for pin in (2, 12):
        b = board.parse_board(with_output("solenoid", pin))
        found = [w for w in b.warnings if w.startswith("outputs.solenoid: GPIO%d " % pin)]
        assert len(found) == 1 and "strapping" in found[0]


def test_serial_repl_pins_warned():
    b = board.parse_board(with_output("shaker_motor", 1))
    found = [w for w in b.warnings if w.startswith("outputs.shaker_motor: GPIO1 ")]
    assert len(found) == 1 and "REPL" in found[0]


def test_flash_pins_refused():
    for pin in (6, 7, 8, 9, 10, 11):
        e = refusal(with_output("bell", pin))
        assert e.field == "outputs.bell"
        assert ("GPIO%d " % pin) in e.message and "flash" in e.message
    e = refusal(with_input("key_void", 9))
    assert e.field == "inputs.key_void" and "GPIO9 " in e.message and "flash" in e.message


def test_output_on_input_only_pin_refused():
    for pin in (34, 35, 36, 37, 38, 39):
        d = board_dict()
        d["inputs"]["cover"] = {"pin": 32, "pull": "none"}
        d["inputs"]["supervisor"] = {"pin": 2, "pull": "up"}
        d["inputs"]["clasp_left"] = {"pin": 0, "pull": "up"}
        d["inputs"]["clasp_right"] = {"pin": 12, "pull": "up"}
        d["inputs"]["shake"] = {"pin": 3, "pull": "up"}
        d["outputs"]["solenoid"] = pin
        d["strapping_ok"] = {"0": "test", "2": "test", "12": "test"}
        e = refusal(d)
        assert e.field == "outputs.solenoid", e
        assert ("GPIO%d " % pin) in e.message and "input-only" in e.message


def test_lamp_pins_are_outputs_too():
    d = board_dict()
    d["inputs"]["cover"] = {"pin": 32, "pull": "none"}
    d["inputs"]["supervisor"] = {"pin": 2, "pull": "up"}
    d["strapping_ok"] = {"2": "test"}
    d["lamps"]["latch"] = 34
    e = refusal(d)
    assert e.field == "lamps.latch" and "GPIO34 " in e.message and "input-only" in e.message


def test_pin_used_twice_refused_naming_both():
    e = refusal(with_output("bell", 33))  # key_bell's pin
    assert e.field == "outputs.bell"
    assert "GPIO33 " in e.message and "inputs.key_bell" in e.message
    e = refusal(with_input("key_face_2", 21))
    assert e.field == "inputs.key_face_2" and "GPIO21 " in e.message
    assert "inputs.key_face_1" in e.message
    d = board_dict()
    d["lamps"]["mosi"] = 25
    e = refusal(d)
    assert e.field == "lamps.mosi" and "GPIO25 " in e.message and "outputs.solenoid" in e.message


def test_nonexistent_gpio_refused():
    for pin in (20, 24, 28, 31, 40, -1):
        e = refusal(with_output("bell", pin))
        assert e.field == "outputs.bell" and ("GPIO%d " % pin) in e.message
        assert "does not exist" in e.message
    e = refusal(with_output("bell", "25"))
    assert e.field == "outputs.bell" and "GPIO number" in e.message


def test_pull_on_input_only_pin_refused():
    e = refusal(with_input("cover", {"pin": 34, "pull": "up"}))
    assert e.field == "inputs.cover.pull"
    assert "GPIO34 " in e.message and "cover" in e.message and "external" in e.message
    e = refusal(with_input("shake", 39))  # pull defaults to up
    assert e.field == "inputs.shake.pull" and "GPIO39 " in e.message


def test_an_output_given_as_an_object_needs_its_pin():
    # {"pin": N} is the same output as N; an object without its pin is
    # refused naming the field, never a crash of the parser.
    assert board.parse_board(with_output("bell", {"pin": 15})).outputs["bell"] == 15
    for signal in ("bell", "solenoid"):
        e = refusal(with_output(signal, {}))
        assert e.field == "outputs.%s.pin" % signal, e.field
        assert e.message == "missing: the GPIO number of " + signal, e.message


def test_unknown_signal_refused():
    d = board_dict()
    d["inputs"]["key_face_7"] = 17
    e = refusal(d)
    assert e.field == "inputs.key_face_7" and "unknown" in e.message
    assert "key_face_6" in e.message
    e = refusal(with_output("horn", 17))
    assert e.field == "outputs.horn" and "unknown" in e.message and "bell" in e.message
    e = refusal(with_input("bell", 17))  # an output listed as an input
    assert e.field == "inputs.bell" and "unknown" in e.message


def test_unknown_field_refused():
    e = refusal(board_dict(colour="red"))
    assert e.field == "colour" and "unknown" in e.message
    e = refusal(with_input("cover", {"pin": 34, "pull": "none", "debounce": 5}))
    assert e.field == "inputs.cover.debounce" and "unknown" in e.message
    e = refusal(board_dict(timings={"bell_sec": 2}))
    assert e.field == "timings.bell_sec" and "bell_ms" in e.message


def test_missing_required_signal_refused():
    for signal in ("cover", "clasp_right", "key_confirm", "key_face_6"):
        d = board_dict()
        del d["inputs"][signal]
        e = refusal(d)
        assert e.field == "inputs." + signal and "missing" in e.message
    d = board_dict()
    del d["outputs"]["bell"]
    e = refusal(d)
    assert e.field == "outputs.bell" and "missing" in e.message
    d = board_dict()
    del d["lamps"]
    e = refusal(d)
    assert e.field == "lamps" and "missing" in e.message


class _Table:
    """What check_table reads of a TableConfig."""

    def __init__(self, shaker, channels=4):
        self.shaker = shaker
        self.lamp_order = tuple("L%d" % i for i in range(channels))


def test_shaker_outputs_optional_but_checked_against_the_table():
    d = board_dict()
    del d["outputs"]["solenoid"]
    del d["outputs"]["shaker_motor"]
    b = board.parse_board(d)
    board.check_table(b, _Table("manual"))
    try:
        board.check_table(b, _Table("solenoid"))
    except ConfigError as e:
        assert e.field == "outputs.solenoid" and "missing" in e.message
    else:
        raise AssertionError("solenoid table accepted a board without a solenoid")
    try:
        board.check_table(b, _Table("electric"))
    except ConfigError as e:
        assert e.field == "outputs.shaker_motor"
    else:
        raise AssertionError("electric table accepted a board without a motor")


def test_a_strip_shorter_than_the_table_is_refused_on_the_board_too():
    d = board_dict()
    d["lamps"] = {"bus": "neopixel", "pin": 23, "count": 20, "colour": [255, 255, 255]}
    b = board.parse_board(d)
    board.check_table(b, _Table("solenoid", 20))  # one pixel a channel: fits
    try:
        board.check_table(b, _Table("solenoid", 21))
    except ConfigError as e:
        assert e.field == "lamps.count" and "20 LEDs" in e.message and "21" in e.message
    else:
        raise AssertionError("a strip of 20 pixels accepted for 21 lamp channels")

def test_neopixel_bus():
    b = board.parse_board(board_dict(lamps={"bus": "neopixel", "pin": 18, "count": 121,
                                            "colour": [255, 160, 0]}))
    assert b.lamps == {"bus": "neopixel", "pin": 18, "count": 121, "colour": (255, 160, 0)}
    e = refusal(board_dict(lamps={"bus": "neopixel", "pin": 18}))
    assert e.field == "lamps.count" and "missing" in e.message
    e = refusal(board_dict(lamps={"bus": "neopixel", "pin": 18, "count": 8,
                                  "colour": [300, 0, 0]}))
    assert e.field == "lamps.colour"
    e = refusal(board_dict(lamps={"bus": "neopixel", "pin": 18, "count": 8, "latch": 19}))
    assert e.field == "lamps.latch" and "unknown" in e.message


def test_lamp_bus_refusals():
    e = refusal(board_dict(lamps={"bus": "i2c"}))
    assert e.field == "lamps.bus" and "hc595" in e.message
    e = refusal(board_dict(lamps={"bus": "hc595", "sck": 18, "mosi": 23}))
    assert e.field == "lamps.latch" and "missing" in e.message
    e = refusal(board_dict(lamps={"bus": "hc595", "spi": 0, "sck": 18, "mosi": 23,
                                  "latch": 19}))
    assert e.field == "lamps.spi"


def test_reader_uart():
    b = board.parse_board(board_dict(reader={"uart": 2, "tx": 12, "rx": 37}))
    assert b.reader == {"uart": 2, "tx": 12, "rx": 37, "baudrate": 9600}
    e = refusal(board_dict(reader={"uart": 2, "tx": 2, "rx": 12}))  # an input too
    assert e.field == "reader.rx" and "GPIO12 " in e.message and "strapping_ok" in e.message
    e = refusal(board_dict(reader={"uart": 0, "tx": 17, "rx": 16}))
    assert e.field == "reader.uart" and "REPL" in e.message
    d = board_dict(reader={"uart": 1, "tx": 35, "rx": 2}, strapping_ok={"0": "t", "2": "t"})
    d["inputs"]["clasp_left"] = {"pin": 0, "pull": "up"}
    e = refusal(d)
    assert e.field == "reader.tx" and "GPIO35 " in e.message and "input-only" in e.message


def test_timers():
    b = board.parse_board(board_dict(timers={"solenoid": 3, "shaker_motor": 1, "bell": 0}))
    assert b.timers == {"solenoid": 3, "shaker_motor": 1, "bell": 0}
    e = refusal(board_dict(timers={"solenoid": 1, "shaker_motor": 1, "bell": 0}))
    assert e.field == "timers.shaker_motor" and "solenoid" in e.message
    e = refusal(board_dict(timers={"bell": 4}))
    assert e.field == "timers.bell" and "0..3" in e.message


def test_timing_rules():
    b = board.parse_board(board_dict(timings={"hold_percent": 30, "pull_in_ms": 20,
                                              "pulse_on_ms": 80}))
    assert b.timings["hold_percent"] == 30 and b.timings["pull_in_ms"] == 20
    e = refusal(board_dict(timings={"pulse_on_ms": 250}))
    assert e.field == "timings.pulse_on_ms" and "max_on_ms" in e.message
    e = refusal(board_dict(timings={"pulse_off_ms": 50, "rest_ms": 100}))
    assert e.field == "timings.pulse_off_ms" and "rest_ms" in e.message
    e = refusal(board_dict(timings={"hold_percent": 30}))
    assert e.field == "timings.pull_in_ms"
    e = refusal(board_dict(timings={"pull_in_ms": 20}))
    assert e.field == "timings.pull_in_ms" and "hold_percent" in e.message
    e = refusal(board_dict(timings={"debounce_ms": 0}))
    assert e.field == "timings.debounce_ms" and "1 to 500" in e.message
    e = refusal(board_dict(timings={"bell_ms": 1.5}))
    assert e.field == "timings.bell_ms"
    e = refusal(board_dict(timings={"max_on_ms": True}))
    assert e.field == "timings.max_on_ms"


def test_top_level_refusals():
    e = refusal([1, 2])
    assert e.field == "board"
    e = refusal(board_dict(mcu="esp32s3"))
    assert e.field == "mcu"
    e = refusal(board_dict(name=""))
    assert e.field == "name"
    e = refusal(with_input("cover", {"pin": 34, "pull": "sideways"}))
    assert e.field == "inputs.cover.pull"
    e = refusal(with_input("key_bell", {"pull": "up"}))
    assert e.field == "inputs.key_bell.pin" and "missing" in e.message


def _load(name):
    # The shipped file, from the repository's root (pytest, mprun) or the
    # tests' root on a board (sicbo test --on copies board_config/ there).
    with open("board_config/boards/" + name) as f:
        return json.load(f)


def test_shipped_board_files_validate():
    for name in ("esp32-devkitc.json", "virtual.json"):
        obj = _load(name)
        b = board.parse_board(obj)
        for signal, pin, _pull, _inv in b.inputs:
            assert pin not in (1, 3), signal  # the USB serial REPL stays free
        for w in b.warnings:
            assert "REPL" not in w
        assert b.lamps["bus"] == "hc595"


# ---- inputs on strapping pins; the keys' 74HC165 chain ----------------------

CHAIN_BITS = {"key_bell": 0, "key_void": 1, "key_payout": 2, "key_confirm": 3,
              "key_face_1": 4, "key_face_2": 5, "key_face_3": 6, "key_face_4": 7,
              "key_face_5": 8, "key_face_6": 9}


def chain_dict(**keys):
    d = board_dict()
    for name in CHAIN_BITS:
        del d["inputs"][name]
    d["lamps"]["miso"] = 37
    k = {"bus": "hc165", "load": 2, "chips": 2, "invert": True, "bits": dict(CHAIN_BITS),
         "low": [10, 11, 12, 13, 14], "high": [15]}
    for name in keys:
        if keys[name] is None:
            del k[name]
        else:
            k[name] = keys[name]
    d["keys"] = k
    return d


def test_input_on_strapping_pin_refused_naming_field_pin_and_remedy():
    for pin in (0, 2, 5, 12, 15):
        e = refusal(with_input("key_face_1", {"pin": pin, "pull": "up", "invert": True}))
        assert e.field == "inputs.key_face_1", e
        assert ("GPIO%d " % pin) in e.message and "strapping" in e.message
        assert "strapping_ok" in e.message
    d = board_dict()
    d["lamps"]["miso"] = 12  # the chain's QH would set the flash voltage at reset
    e = refusal(d)
    assert e.field == "lamps.miso" and "GPIO12 " in e.message


def test_input_on_strapping_pin_accepted_with_a_reason():
    d = with_input("key_face_1", {"pin": 12, "pull": "down"})
    d["strapping_ok"] = {"12": "external 10k pull-down; the key is open at reset"}
    b = board.parse_board(d)
    assert b.inputs[b.input_index("key_face_1")] == ("key_face_1", 12, "down", False)
    found = [w for w in b.warnings if w.startswith("inputs.key_face_1: GPIO12 ")]
    assert len(found) == 1 and "external 10k pull-down" in found[0]


def test_strapping_ok_refusals():
    d = board_dict(strapping_ok={"13": "why"})
    e = refusal(d)
    assert e.field == "strapping_ok.13" and "strapping pin" in e.message
    e = refusal(board_dict(strapping_ok={"GPIO0": "why"}))
    assert e.field == "strapping_ok.GPIO0"
    e = refusal(board_dict(strapping_ok={"0": ""}))
    assert e.field == "strapping_ok.0" and "why" in e.message
    e = refusal(board_dict(strapping_ok={"0": "unused"}))  # no input on GPIO0
    assert e.field == "strapping_ok.0" and "no input" in e.message
    e = refusal(board_dict(strapping_ok={"15": "the bell"}))  # an output needs none
    assert e.field == "strapping_ok.15"
    e = refusal(board_dict(strapping_ok=[0]))
    assert e.field == "strapping_ok"


def test_keys_on_the_chain():
    b = board.parse_board(chain_dict())
    k = b.keys
    assert k["bus"] == "hc165" and k["load"] == 2 and k["nbits"] == 16 and k["invert"]
    assert k["bits"] == CHAIN_BITS and k["high"] == (15,) and k["low"] == (10, 11, 12, 13, 14)
    i = b.input_index("key_confirm")
    assert b.inputs[i] == ("key_confirm", None, None, True)
    assert b.inputs[b.input_index("supervisor")] == ("supervisor", 32, "up", True)
    assert b.pins[2] == "keys.load" and b.pins[37] == "lamps.miso"
    assert [w for w in b.warnings if w.startswith("keys.load: GPIO2 ")]  # an output: a warning
    assert board.parse_board(board_dict()).keys is None
    # Partly direct: key_face_6 on its own pin, the rest on the chain.
    d = chain_dict()
    del d["keys"]["bits"]["key_face_6"]
    d["inputs"]["key_face_6"] = {"pin": 38, "pull": "none", "invert": True}
    b = board.parse_board(d)
    assert b.inputs[b.input_index("key_face_6")] == ("key_face_6", 38, "none", True)
    assert "key_face_6" not in b.keys["bits"]


def test_chain_section_errors_name_the_field():
    cases = (
        (chain_dict(bus="mcp23017"), "keys.bus", "hc165"),
        (chain_dict(load=None), "keys.load", "GPIO number"),
        (chain_dict(load=34), "keys.load", "input-only"),
        (chain_dict(load=32), "keys.load", "inputs.supervisor"),
        (chain_dict(chips=None), "keys.chips", "1 to 8"),
        (chain_dict(chips=9), "keys.chips", "1 to 8"),
        (chain_dict(invert="yes"), "keys.invert", "true or false"),
        (chain_dict(bits=[1]), "keys.bits", "object"),
        (chain_dict(high=None), "keys.high", "sentinel"),
        (chain_dict(low=[]), "keys.low", "sentinel"),
        (chain_dict(low=[16]), "keys.low", "0..15"),
        (chain_dict(high=[9]), "keys.high", "keys.bits.key_face_6"),
        (chain_dict(speed=1), "keys.speed", "unknown field"),
    )
    for d, field, words in cases:
        e = refusal(d)
        assert e.field == field and words in e.message, (field, e)
    d = chain_dict()
    d["keys"]["bits"]["key_void"] = 0
    e = refusal(d)
    assert e.field == "keys.bits.key_void" and "keys.bits.key_bell" in e.message
    d = chain_dict()
    d["keys"]["bits"]["cover"] = 10
    e = refusal(d)
    assert e.field == "keys.bits.cover" and "dealer's keys" in e.message
    d = chain_dict()
    d["keys"]["bits"]["lid"] = 10
    assert refusal(d).field == "keys.bits.lid"
    d = chain_dict()
    d["inputs"]["key_bell"] = {"pin": 38, "pull": "none"}
    e = refusal(d)
    assert e.field == "keys.bits.key_bell" and "also in inputs" in e.message
    d = chain_dict()
    del d["keys"]["bits"]["key_bell"]
    e = refusal(d)
    assert e.field == "inputs.key_bell" and "missing" in e.message
    d = chain_dict()
    del d["lamps"]["miso"]
    e = refusal(d)
    assert e.field == "keys.bus" and "lamps" in e.message and "miso" in e.message
    d = chain_dict()
    d["lamps"] = {"bus": "neopixel", "pin": 18, "count": 10}
    assert refusal(d).field == "keys.bus"


def test_shipped_boards_keep_strapping_pins_free_of_inputs():
    obj = _load("esp32-devkitc.json")
    b = board.parse_board(obj)
    assert b.keys is not None and b.warnings == []
    for field_pin in (0, 2, 5, 12, 15):
        assert field_pin not in b.pins
    for signal, pin, _pull, _inv in b.inputs:
        assert pin is not None or signal in b.keys["bits"]
