# Board files: which ESP32 pin carries which table signal, which bus drives
# the lamps, which hardware timers give the hard offs, and the timings of the
# actuators and inputs (docs/board-files.md).
#
# parse_board() takes the decoded JSON object and returns a Board, or raises
# ConfigError naming the field (the signal) and the pin. Everything is checked
# before anything is built. Pure: no `machine`, so the host validates a board
# file with the firmware's own code before it is deployed.
#
# ESP32 (classic) facts checked here: GPIOs 0-19, 21-23, 25-27, 32-39 exist;
# 6-11 are wired to the module's SPI flash; 34-39 are input-only and have no
# internal pull resistors; 0, 2, 5, 12 and 15 are strapping pins read at
# reset: refused for an input (a level held at reset changes the boot) unless
# `strapping_ok` gives the reason, a warning for an output; 1 and 3 are
# UART0, the USB serial REPL (a warning: mpremote and the log stop working).
#
# The dealer's keys may be read through a 74HC165 chain on the lamps' SPI bus
# (`keys`, hw.keychain): their inputs entries are then (signal, None, None,
# invert) and Board.keys says where each one is.

from micropython import const

from sicbo.config import NAME_MAX, text_in
from sicbo.errors import ConfigError, key_name
from sicbo.settings import Board
from sicbo.signals import INPUT_SIGNALS

OUTPUT_SIGNALS = ("solenoid", "shaker_motor", "bell")
REQUIRED_OUTPUTS = ("bell",)
# Which output each shaker type of the table needs (sicbo.config.SHAKERS).
SHAKER_OUTPUT = {"solenoid": "solenoid", "electric": "shaker_motor", "manual": None}
LAMP_BUSES = ("hc595", "neopixel")
PULLS = ("up", "down", "none")
TIMER_USERS = ("solenoid", "shaker_motor", "bell")
TIMER_IDS = (0, 1, 2, 3)  # the ESP32's four hardware timers
SPI_IDS = (1, 2)  # HSPI, VSPI
UART_IDS = (1, 2)  # UART0 is the REPL
# Free text, held in the board's heap (sicbo.config.text_in): the wiring
# notes, and why an input on a strapping pin is safe.
_DESCRIPTION_MAX = const(2000)
_REASON_MAX = const(400)

_FIELDS = ("name", "description", "mcu", "inputs", "outputs", "lamps", "reader",
           "timers", "timings", "keys", "strapping_ok", "floor")
# The floor link (docs/floor.md): the site and the table's id on it, the
# broker, and the Wi-Fi network's name. Secrets (the Wi-Fi key, the table's
# TLS key or password) are files of their own, never in this file.
_FLOOR_FIELDS = ("site", "table", "broker", "port", "tls", "server_name", "keepalive_s",
                 "wifi")
_ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_KEYS_FIELDS = ("bus", "load", "chips", "invert", "bits", "high", "low")
KEY_BUSES = ("hc165",)
_KEYS_WHAT = "bus hc165, load, chips, invert, bits, high, low"
_REQUIRED = ("name", "inputs", "outputs", "lamps")
_INPUT_FIELDS = ("pin", "pull", "invert")
_HC595_FIELDS = ("bus", "spi", "sck", "mosi", "miso", "latch", "oe", "baudrate")
_HC595_PINS = ("sck", "mosi", "latch")
_NEOPIXEL_FIELDS = ("bus", "pin", "count", "colour")
_READER_FIELDS = ("uart", "tx", "rx", "baudrate")
_DEFAULT_TIMERS = {"solenoid": 0, "shaker_motor": 1, "bell": 2}

# name: (default, low, high)
TIMINGS = {
    "debounce_ms": (20, 1, 500),
    "chatter_limit": (10, 2, 250),
    "chatter_window_ms": (1000, 10, 60000),
    "pulse_count": (3, 1, 20),
    "pulse_on_ms": (60, 1, 980),  # at most max_on_ms - PULSE_MARGIN_MS
    "pulse_off_ms": (250, 0, 10000),
    "max_on_ms": (200, 21, 1000),  # at least a 1 ms pulse and PULSE_MARGIN_MS
    "rest_ms": (150, 0, 10000),
    "hold_percent": (0, 0, 95),
    "pull_in_ms": (0, 0, 1000),
    "pwm_freq": (20000, 100, 40000),
    "electric_run_ms": (3000, 100, 30000),
    "bell_ms": (1500, 50, 10000),
    "watchdog_ms": (8000, 1000, 60000),
}

# A solenoid pulse ends at least this long before the coil's hard limit
# (max_on_ms): the task that ends it may be late by that much.
PULSE_MARGIN_MS = 20
_NO_GPIO = (20, 24, 28, 29, 30, 31)
_FLASH = (6, 7, 8, 9, 10, 11)
_MAX_GPIO = 39
_FIRST_INPUT_ONLY = 34
STRAPPING = {
    0: "strapping pin (boot mode): held low at reset it enters the ROM download mode",
    2: "strapping pin (boot mode): must be low or floating at reset to download",
    5: "strapping pin (SDIO slave timing), sampled at reset; it outputs a PWM "
       "signal during boot",
    12: "strapping pin (MTDI, flash voltage): high at reset selects 1.8 V flash "
        "and the board will not boot",
    15: "strapping pin (MTDO, boot log): low at reset silences the ROM boot log",
}
SERIAL = {
    1: "UART0 TX, the USB serial REPL: mpremote and the log stop working",
    3: "UART0 RX, the USB serial REPL: mpremote and the log stop working",
}


def _is_int(x):
    return type(x) is int


def _choices(values):
    return ", ".join(values)


def _known(obj, field, allowed):
    for key in sorted(obj):
        if key not in allowed:
            where = field + "." + key_name(key) if field else key_name(key)
            raise ConfigError(where, "unknown field; allowed: %s" % _choices(allowed))


def _need_obj(obj, field, what):
    if not isinstance(obj, dict):
        raise ConfigError(field, "must be an object (%s), got %r" % (what, obj))
    return obj


class _Pins:
    """Collects pin uses, refusing the ESP32's impossible ones. `ok`: the
    board's strapping_ok, {gpio: reason}."""

    def __init__(self, ok):
        self.used = {}
        self.warnings = []
        self.ok = ok
        self.excused = []

    def take(self, field, pin, output):
        if not _is_int(pin):
            raise ConfigError(field, "must be a GPIO number, got %r" % (pin,))
        if pin < 0 or pin > _MAX_GPIO or pin in _NO_GPIO:
            raise ConfigError(field, "GPIO%d does not exist on the ESP32 (GPIO0-19, "
                              "21-23, 25-27, 32-39)" % pin)
        if pin in _FLASH:
            raise ConfigError(field, "GPIO%d is wired to the module's SPI flash "
                              "(GPIO6-11) and cannot be used" % pin)
        if output and pin >= _FIRST_INPUT_ONLY:
            raise ConfigError(field, "GPIO%d is input-only (GPIO34-39) and cannot drive "
                              "an output" % pin)
        if pin in self.used:
            raise ConfigError(field, "GPIO%d is already used by %s" % (pin, self.used[pin]))
        if pin in STRAPPING and not output:
            if pin not in self.ok:
                raise ConfigError(field, "GPIO%d is a %s: refused for an input; move it, "
                                  "or say why it is safe in strapping_ok" % (pin, STRAPPING[pin]))
            self.excused.append(pin)
            self.warnings.append("%s: GPIO%d is a %s; accepted: %s"
                                 % (field, pin, STRAPPING[pin], self.ok[pin]))
        elif pin in STRAPPING:
            self.warnings.append("%s: GPIO%d is a %s" % (field, pin, STRAPPING[pin]))
        self.used[pin] = field
        if pin in SERIAL:
            self.warnings.append("%s: GPIO%d is %s" % (field, pin, SERIAL[pin]))
        return pin


def _parse_input(pins, signal, spec):
    field = "inputs." + signal
    if _is_int(spec):
        spec = {"pin": spec}
    _need_obj(spec, field, "a GPIO number or {pin, pull, invert}")
    _known(spec, field, _INPUT_FIELDS)
    if "pin" not in spec:
        raise ConfigError(field + ".pin", "missing: the GPIO number of %s" % signal)
    pull = spec.get("pull", "up")
    if pull not in PULLS:
        raise ConfigError(field + ".pull", "must be one of %s, got %r" % (_choices(PULLS), pull))
    invert = _bool(spec, "invert", field)
    pin = pins.take(field, spec["pin"], False)
    if pin >= _FIRST_INPUT_ONLY and pull != "none":
        raise ConfigError(field + ".pull", "GPIO%d (the %s input) has no internal pull "
                          "resistor (GPIO34-39): set pull to none and fit an external "
                          "one" % (pin, signal))
    return (signal, pin, pull, invert)


def _bool(obj, key, field):
    v = obj.get(key, False)
    if v is not True and v is not False:
        raise ConfigError(field + "." + key, "must be true or false, got %r" % (v,))
    return v


def _parse_strapping(obj):
    ok = {}  # type: dict
    if obj is None:
        return ok
    _need_obj(obj, "strapping_ok", "GPIO number: why an input there is safe")
    for key in sorted(obj):
        field = "strapping_ok." + key_name(key)
        try:
            pin = int(key)
        except ValueError:
            pin = -1
        if pin not in STRAPPING or key != str(pin):
            raise ConfigError(field, "must be a strapping pin: 0, 2, 5, 12 or 15")
        why = text_in(obj[key], field, _REASON_MAX, "why an input there is safe at reset")
        ok[pin] = why
    return ok


def _parse_keys(pins, obj, lamps, ins):
    """The keys section (an object: parse_board checked it first, to know
    which inputs the chain carries): {signal: bit} and the chain itself."""
    _known(obj, "keys", _KEYS_FIELDS)
    bus = obj.get("bus")
    if bus not in KEY_BUSES:
        raise ConfigError("keys.bus", "must be hc165, got %r" % (bus,))
    if lamps["bus"] != "hc595" or lamps["miso"] is None:
        raise ConfigError("keys.bus", "the chain is read on the lamps' bus: lamps needs "
                          "bus hc595 and miso")
    load = pins.take("keys.load", obj.get("load"), True)
    nbits = _int_in(obj, "chips", "keys.chips", 1, 8, None) * 8
    invert = _bool(obj, "invert", "keys")
    bits = _need_obj(obj.get("bits"), "keys.bits", "signal: bit number")
    _known(bits, "keys.bits", INPUT_SIGNALS)
    taken = {}  # type: dict
    out = {}
    for signal in INPUT_SIGNALS:
        if signal not in bits:
            continue
        field = "keys.bits." + signal
        if signal[:4] != "key_":
            raise ConfigError(field, "only the dealer's keys may be on the chain")
        if signal in ins:
            raise ConfigError(field, "also in inputs")
        out[signal] = _bit(bits[signal], field, nbits, taken)
    sent = []
    for name in ("high", "low"):
        field = "keys." + name
        lst = obj.get(name)
        if not isinstance(lst, list) or not lst:
            raise ConfigError(field, "must list the sentinel bits tied %s, got %r"
                              % (name, lst))
        sent.append(tuple([_bit(b, field, nbits, taken) for b in lst]))
    return {"bus": bus, "load": load, "nbits": nbits, "invert": invert, "bits": out,
            "high": sent[0], "low": sent[1]}


def _bit(b, field, nbits, taken):
    if not _is_int(b) or not 0 <= b < nbits:
        raise ConfigError(field, "must be a chain bit 0..%d, got %r"
                          % (nbits - 1, b))
    if b in taken:
        raise ConfigError(field, "bit %d is already %s" % (b, taken[b]))
    taken[b] = field
    return b


def _parse_output(pins, signal, spec):
    field = "outputs." + signal
    if isinstance(spec, dict):
        _known(spec, field, ("pin",))
        if "pin" not in spec:
            raise ConfigError(field + ".pin", "missing: the GPIO number of %s" % signal)
        spec = spec["pin"]
    return pins.take(field, spec, True)


def _int_in(obj, key, field, low, high, default):
    value = obj.get(key, default)
    if not _is_int(value) or not low <= value <= high:
        raise ConfigError(field, "must be an integer from %d to %d, got %r" % (low, high, value))
    return value


def _parse_lamps(pins, obj):
    _need_obj(obj, "lamps", "bus hc595 or neopixel and its pins")
    bus = obj.get("bus")
    if bus not in LAMP_BUSES:
        raise ConfigError("lamps.bus", "must be one of %s, got %r" % (_choices(LAMP_BUSES), bus))
    if bus == "hc595":
        _known(obj, "lamps", _HC595_FIELDS)
        spi = obj.get("spi", 2)
        if spi not in SPI_IDS or not _is_int(spi):
            raise ConfigError("lamps.spi", "must be 1 (HSPI) or 2 (VSPI), got %r" % (spi,))
        lamps = {"bus": bus, "spi": spi}
        for key in _HC595_PINS:
            if key not in obj:
                raise ConfigError("lamps." + key, "missing: the 74HC595 chain needs sck "
                                  "(SRCLK), mosi (SER) and latch (RCLK)")
            lamps[key] = pins.take("lamps." + key, obj[key], True)
        lamps["oe"] = pins.take("lamps.oe", obj["oe"], True) if obj.get("oe") is not None \
            else None
        lamps["miso"] = pins.take("lamps.miso", obj["miso"], False) \
            if obj.get("miso") is not None else None
        lamps["baudrate"] = _int_in(obj, "baudrate", "lamps.baudrate", 1000, 20000000,
                                    1000000)
        return lamps
    _known(obj, "lamps", _NEOPIXEL_FIELDS)
    if "pin" not in obj:
        raise ConfigError("lamps.pin", "missing: the WS2812 strip's data pin")
    pin = pins.take("lamps.pin", obj["pin"], True)
    if "count" not in obj:
        raise ConfigError("lamps.count", "missing: the number of pixels on the strip")
    count = _int_in(obj, "count", "lamps.count", 1, 1024, 0)
    colour = obj.get("colour", [255, 255, 255])
    if not isinstance(colour, list) or len(colour) not in (3, 4) or \
            not all(_is_int(v) and 0 <= v <= 255 for v in colour):
        raise ConfigError("lamps.colour", "must be [r, g, b] or [r, g, b, w], each 0..255, "
                          "got %r" % (colour,))
    return {"bus": bus, "pin": pin, "count": count, "colour": tuple(colour)}


def _parse_reader(pins, obj):
    _need_obj(obj, "reader", "uart, tx, rx, baudrate")
    _known(obj, "reader", _READER_FIELDS)
    uart = obj.get("uart", 2)
    if uart not in UART_IDS or not _is_int(uart):
        raise ConfigError("reader.uart", "must be 1 or 2 (UART0 is the REPL), got %r" % (uart,))
    for key in ("tx", "rx"):
        if key not in obj:
            raise ConfigError("reader." + key, "missing: the dice reader's UART needs tx and rx")
    tx = pins.take("reader.tx", obj["tx"], True)
    rx = pins.take("reader.rx", obj["rx"], False)
    baud = _int_in(obj, "baudrate", "reader.baudrate", 1200, 1000000, 9600)
    return {"uart": uart, "tx": tx, "rx": rx, "baudrate": baud}


def _floor_id(obj, key):
    v = obj.get(key)
    field = "floor." + key
    if not isinstance(v, str) or not 1 <= len(v) <= 32:
        raise ConfigError(field, "must be 1 to 32 characters of A-Z a-z 0-9 _ -, got %r" % (v,))
    for ch in v:
        if ch not in _ID_CHARS:
            raise ConfigError(field, "%r: only A-Z a-z 0-9 _ - (it is part of MQTT topics)"
                              % (v,))
    return v


def _parse_floor(obj):
    _need_obj(obj, "floor", "site, table, broker, port, tls, server_name, keepalive_s, wifi")
    _known(obj, "floor", _FLOOR_FIELDS)
    site = _floor_id(obj, "site")
    table = _floor_id(obj, "table")
    # The broker's ACL gives these names powers no table has (the floor
    # service's: every table's journals and acknowledgements; the read-only
    # account's: every topic): a table under one could read or move others'.
    who = ("the floor service's" if table == "floor" else
           "the site's read-only account's" if table == "compliance" else None)
    if who is not None:
        raise ConfigError("floor.table", "%r is %s name on the broker, never a table's"
                          % (table, who))
    broker = obj.get("broker")
    if not isinstance(broker, str) or not broker or len(broker) > 253:
        raise ConfigError("floor.broker", "must be the broker's address (an IP address is "
                          "best: a name costs a lookup at every connection), got %r" % (broker,))
    tls = _bool(obj, "tls", "floor")
    port = _int_in(obj, "port", "floor.port", 1, 65535, 8883 if tls else 1883)
    name = obj.get("server_name", broker)
    if not isinstance(name, str) or not name or len(name) > 253:
        raise ConfigError("floor.server_name", "must be the name on the broker's certificate "
                          "(at most 253 characters)")
    keepalive = _int_in(obj, "keepalive_s", "floor.keepalive_s", 5, 600, 30)
    wifi = obj.get("wifi")
    if wifi is not None and (not isinstance(wifi, str) or not 1 <= len(wifi) <= 32):
        raise ConfigError("floor.wifi", "must be the Wi-Fi network's name (1 to 32 characters)")
    return {"site": site, "table": table, "broker": broker, "port": port, "tls": tls,
            "server_name": name, "keepalive_s": keepalive, "wifi": wifi}


def _parse_timers(obj, outputs):
    if obj is None:
        obj = _DEFAULT_TIMERS
    _need_obj(obj, "timers", "output: hardware timer id")
    _known(obj, "timers", TIMER_USERS)
    timers = {}
    seen = {}  # type: dict
    for user in TIMER_USERS:
        tid = obj.get(user, _DEFAULT_TIMERS[user])
        field = "timers." + user
        if not _is_int(tid) or tid not in TIMER_IDS:
            raise ConfigError(field, "must be a hardware timer id 0..3, got %r" % (tid,))
        if user in outputs:
            if tid in seen:
                raise ConfigError(field, "timer %d is already the hard off of %s"
                                  % (tid, seen[tid]))
            seen[tid] = user
        timers[user] = tid
    return timers


def _parse_timings(obj):
    if obj is None:
        obj = {}
    _need_obj(obj, "timings", "name: milliseconds")
    _known(obj, "timings", sorted(TIMINGS))
    t = {}
    for name in sorted(TIMINGS):
        default, low, high = TIMINGS[name]
        t[name] = _int_in(obj, name, "timings." + name, low, high, default)
    if t["chatter_window_ms"] <= t["debounce_ms"]:
        raise ConfigError("timings.chatter_window_ms", "must be longer than debounce_ms (%d)"
                          % t["debounce_ms"])
    if t["pulse_on_ms"] + PULSE_MARGIN_MS > t["max_on_ms"]:
        # The pulse is ended by the shaker's task, the hard limit by a timer:
        # a pulse as long as the limit was cut by it at every shake, a fault.
        raise ConfigError("timings.pulse_on_ms", "%d must end at least %d ms before "
                          "max_on_ms (%d), the coil's hard limit" % (
                              t["pulse_on_ms"], PULSE_MARGIN_MS, t["max_on_ms"]))
    if t["pulse_off_ms"] < t["rest_ms"]:
        raise ConfigError("timings.pulse_off_ms", "%d is shorter than rest_ms (%d), the "
                          "coil's minimum rest" % (t["pulse_off_ms"], t["rest_ms"]))
    if t["hold_percent"]:
        if t["hold_percent"] < 5:
            raise ConfigError("timings.hold_percent", "must be 0 (no hold) or 5..95")
        if not 0 < t["pull_in_ms"] < t["pulse_on_ms"]:
            raise ConfigError("timings.pull_in_ms", "must be 1..%d (less than pulse_on_ms) "
                              "with a hold duty" % (t["pulse_on_ms"] - 1))
    elif t["pull_in_ms"]:
        raise ConfigError("timings.pull_in_ms", "needs hold_percent: without a hold the "
                          "coil is at full duty for the whole pulse")
    return t


def parse_board(obj):
    """Validates a decoded board file; returns a Board or raises ConfigError."""
    _need_obj(obj, "board", "a board file")
    _known(obj, "", _FIELDS)
    for key in _REQUIRED:
        if key not in obj:
            raise ConfigError(key, "missing")
    name = text_in(obj["name"], "name", NAME_MAX, "the board's name")
    desc = obj.get("description", "")
    if not isinstance(desc, str):
        raise ConfigError("description", "must be a string")
    if len(desc) > _DESCRIPTION_MAX:
        raise ConfigError("description", "is %d characters: at most %d"
                          % (len(desc), _DESCRIPTION_MAX))
    mcu = obj.get("mcu", "esp32")
    if mcu != "esp32":
        raise ConfigError("mcu", "only esp32 (the classic ESP32) is supported, got %r" % (mcu,))
    ins = _need_obj(obj["inputs"], "inputs", "signal: pin")
    outs = _need_obj(obj["outputs"], "outputs", "signal: pin")
    _known(ins, "inputs", INPUT_SIGNALS)
    _known(outs, "outputs", OUTPUT_SIGNALS)
    chained = {}  # type: dict
    if obj.get("keys") is not None:
        chained = _need_obj(_need_obj(obj["keys"], "keys", _KEYS_WHAT).get("bits"),
                            "keys.bits", "signal: bit number")
    for signal in INPUT_SIGNALS:
        if signal not in ins and signal not in chained:
            raise ConfigError("inputs." + signal, "missing: every table input needs a pin "
                              "(or keys.bits)")
    for signal in REQUIRED_OUTPUTS:
        if signal not in outs:
            raise ConfigError("outputs." + signal, "missing: every table needs it")
    pins = _Pins(_parse_strapping(obj.get("strapping_ok")))
    inputs = []  # type: list
    for signal in INPUT_SIGNALS:
        inputs.append(_parse_input(pins, signal, ins[signal]) if signal in ins else None)
    outputs = {}
    for signal in OUTPUT_SIGNALS:
        if signal in outs:
            outputs[signal] = _parse_output(pins, signal, outs[signal])
    lamps = _parse_lamps(pins, obj["lamps"])
    keys = None
    if obj.get("keys") is not None:
        keys = _parse_keys(pins, obj["keys"], lamps, ins)
        for i in range(len(inputs)):
            if inputs[i] is None:
                inputs[i] = (INPUT_SIGNALS[i], None, None, keys["invert"])
    reader = _parse_reader(pins, obj["reader"]) if obj.get("reader") is not None else None
    timers = _parse_timers(obj.get("timers"), outputs)
    timings = _parse_timings(obj.get("timings"))
    floor = _parse_floor(obj["floor"]) if obj.get("floor") is not None else None
    for pin in sorted(pins.ok):
        if pin not in pins.excused:
            raise ConfigError("strapping_ok.%d" % pin, "no input on GPIO%d" % pin)
    b = Board()
    b.name = name
    b.description = desc
    b.inputs = tuple(inputs)
    b.keys = keys
    b.outputs = outputs
    b.lamps = lamps
    b.reader = reader
    b.timers = timers
    b.timings = timings
    b.floor = floor
    b.pins = pins.used
    b.warnings = pins.warnings
    return b


def check_table(board, cfg):
    """Refuses a board that cannot run the table: no output for the table's
    shaker type, or fewer WS2812 pixels than the table has lamp channels
    (the extra channels would never light)."""
    shaker = cfg.shaker
    if shaker not in SHAKER_OUTPUT:
        raise ConfigError("shaker", "unknown shaker type %r" % (shaker,))
    need = SHAKER_OUTPUT[shaker]
    if need is not None and need not in board.outputs:
        raise ConfigError("outputs." + need, "missing: the table's shaker is %s" % shaker)
    lamps = board.lamps
    if lamps.get("bus") == "neopixel" and lamps["count"] < len(cfg.lamp_order):
        raise ConfigError("lamps.count", "%d LEDs for the table's %d lamp channels"
                          % (lamps["count"], len(cfg.lamp_order)))
