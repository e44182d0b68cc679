# Refusals of the table and board files that name the field at fault and say
# what it must be: an approval that is not an object, a floor broker that is
# missing or cannot be an address, and a broker certificate name that is not
# a name. A technician reads one line: "field: what is wrong". And the
# configuration cache the host writes (`sicbo deploy`) is the one the board
# reads, refused for other files.
import os
import sys

from sicbo import board, cache, config
from sicbo import records as R
from sicbo.errors import ConfigError
from tables import refusal, table_dict

KEYS = ("supervisor", "key_bell", "key_void", "key_payout", "key_confirm",
        "key_face_1", "key_face_2", "key_face_3", "key_face_4", "key_face_5",
        "key_face_6")
KEY_PINS = (32, 33, 14, 27, 13, 21, 22, 4, 16, 17, 38)


def _board(floor):
    inputs = {"cover": {"pin": 34, "pull": "none"},
              "clasp_left": {"pin": 35, "pull": "none"},
              "clasp_right": {"pin": 36, "pull": "none"},
              "shake": {"pin": 39, "pull": "none"}}
    for k in range(len(KEYS)):
        inputs[KEYS[k]] = {"pin": KEY_PINS[k], "pull": "none" if KEY_PINS[k] >= 34 else "up",
                           "invert": True}
    return {
        "name": "test board",
        "inputs": inputs,
        "outputs": {"solenoid": 25, "shaker_motor": 26, "bell": 15},
        "lamps": {"bus": "hc595", "spi": 2, "sck": 18, "mosi": 23, "latch": 19},
        "floor": floor,
    }


def _floor(**changes):
    f = {"site": "S1", "table": "T07", "broker": "10.0.0.5"}
    for k in changes:
        if changes[k] is None:
            del f[k]
        else:
            f[k] = changes[k]
    return f


def _board_refusal(floor):
    try:
        board.parse_board(_board(floor))
    except ConfigError as e:
        return e
    raise AssertionError("board file accepted: floor %r" % (floor,))


# ---- the table's approval ------------------------------------------------------

def test_an_approval_that_is_not_an_object_is_refused_naming_approval():
    for bad in ("DICJ-TEST-1", ["DICJ-TEST-1", "2026-11-02", "2026-11-05"], 7, True):
        e = refusal(table_dict(approval=bad))
        assert e.field == "approval", (bad, e.field)
        assert e.message == ("must be an object with reference, applied, effective and "
                             "optional holidays"), (bad, e.message)
        assert str(e).startswith("approval: must be an object"), str(e)


# ---- the floor link's broker ---------------------------------------------------

def test_a_broker_address_of_1_to_253_characters_is_kept():
    for broker in ("b", "10.0.0.5", "broker.casino.example", "x" * 253):
        f = board.parse_board(_board(_floor(broker=broker))).floor
        assert f["broker"] == broker
        assert f["server_name"] == broker  # the certificate's name, unless told


def test_a_missing_or_unusable_broker_is_refused_naming_floor_broker():
    for broker in ("", "x" * 254, 7, ["10.0.0.5"], True):
        e = _board_refusal(_floor(broker=broker))
        assert e.field == "floor.broker", (broker, e.field)
        assert "broker's address" in e.message and ("%r" % (broker,)) in e.message, e.message
    e = _board_refusal(_floor(broker=None))  # no broker at all
    assert e.field == "floor.broker", e.field
    assert e.message.endswith("got None"), e.message


def test_a_broker_name_is_refused_even_with_a_server_name_given():
    # The server name is only the certificate's: it is no address to connect to.
    for broker in ("", "x" * 254, 7):
        e = _board_refusal(_floor(broker=broker, server_name="broker.casino.example"))
        assert e.field == "floor.broker", (broker, e.field)
    e = _board_refusal(_floor(broker=None, server_name="broker.casino.example"))
    assert e.field == "floor.broker", e.field


# ---- the broker certificate's name ----------------------------------------------

def test_a_server_name_is_kept_as_given():
    f = board.parse_board(_board(_floor(tls=True, server_name="mqtt.casino.example"))).floor
    assert f["broker"] == "10.0.0.5" and f["server_name"] == "mqtt.casino.example"
    assert f["tls"] is True and f["port"] == 8883


def test_a_server_name_that_is_not_a_name_is_refused_naming_it():
    for name in ("", 7, ["mqtt.casino.example"], False):
        e = _board_refusal(_floor(tls=True, server_name=name))
        assert e.field == "floor.server_name", (name, e.field)
        assert e.message == ("must be the name on the broker's certificate (at most 253 "
                             "characters)"), e.message


# ---- the configuration cache's text, as the host writes it -------------------------

def test_the_cache_text_the_host_writes_is_the_one_the_board_reads():
    # The text whole is the host's (`sicbo deploy`, CPython): a board's heap
    # need not hold it, and the board writes it piece by piece (cache.save).
    from folderkit import process_tag

    ident = b"\x0a\x0b\x0c\x0d\x0e\x0f"
    b = board.parse_board(_board(_floor(tls=True, server_name="mqtt.casino.example")))
    c = config.parse_table(table_dict(offered=["SMALL", "BIG"]))
    folder = "/tmp/sicbo-cachedump-%s" % process_tag()
    try:
        os.mkdir(folder)
    except OSError:
        pass
    saved = folder + "/saved.cache"
    dumped = folder + "/dumped.cache"
    assert cache.save(saved, b, c, ident)
    path = saved
    if sys.implementation.name != "micropython":
        text = cache.dump(b, c, ident)
        with open(dumped, "w") as f:
            f.write(text)
        with open(saved, "rb") as f:
            assert f.read() == text.encode()
        path = dumped
    got = cache.load(path, ident)
    assert got is not None
    b2, c2 = got
    assert c2.name == c.name and c2.edition == c.edition and bytes(c2.odds) == bytes(c.odds)
    assert tuple(c2.offered) == tuple(c.offered) and tuple(c2.lamp_order) == tuple(c.lamp_order)
    assert b2.floor["server_name"] == "mqtt.casino.example" and b2.floor["tls"] is True
    assert cache.load(path, b"\x00" * 6) is None  # for other files: refused
    for p in os.listdir(folder):
        os.remove(folder + "/" + p)
    os.rmdir(folder)


def test_a_table_with_more_lamp_channels_than_a_checkpoint_holds_is_refused():
    # A meters checkpoint carries every channel's wins in one journal record
    # of at most R.MAX_LEN bytes, sealed with its MAC: 222 channels. One more
    # and the journal would read the checkpoint back as damage, its meters
    # lost: the table file is refused instead, by its field.
    full = table_dict()  # the 2004 layout: 4 status lamps and 117 areas
    spares = R.MAX_CHANNELS - len(full["lamp_order"])
    t = config.parse_table(table_dict(lamp_order=full["lamp_order"] + [None] * spares))
    assert len(t.lamp_order) == R.MAX_CHANNELS == 222
    e = refusal(table_dict(lamp_order=full["lamp_order"] + [None] * (spares + 1)))
    assert e.field == "lamp_order" and "223 channels: at most 222" in str(e), str(e)
