# The board file's floor section (sicbo.board): a Wi-Fi network name the
# radio cannot join, or a site or table id that cannot be part of an MQTT
# topic, is refused, naming the field, before the table starts; and a keys
# section that is not an object is refused naming it, never a
# crash of the parser.
from sicbo import board
from sicbo.errors import ConfigError

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
    f.update(changes)
    return f


def test_a_wifi_name_of_1_to_32_characters_is_kept():
    for name in ("f", "casino-floor", "x" * 32):
        assert board.parse_board(_board(_floor(wifi=name))).floor["wifi"] == name
    assert board.parse_board(_board(_floor())).floor["wifi"] is None


def test_a_wifi_name_the_radio_cannot_join_is_refused_naming_the_field():
    for wifi in ("", "x" * 33, 7, ["casino-floor"], True):
        try:
            board.parse_board(_board(_floor(wifi=wifi)))
        except ConfigError as e:
            assert e.field == "floor.wifi", (wifi, e)
            assert str(e) == "floor.wifi: must be the Wi-Fi network's name (1 to 32 characters)"
        else:
            raise AssertionError("accepted wifi %r" % (wifi,))


def test_a_keys_section_that_is_not_an_object_is_refused_naming_it():
    for keys in ([], [{"bus": "hc165"}], 7, 0, "hc165", True):
        b = _board(None)
        b["keys"] = keys
        try:
            board.parse_board(b)
        except ConfigError as e:
            assert e.field == "keys", (keys, e)
            assert "must be an object" in e.message and "hc165" in e.message, (keys, e)
        else:
            raise AssertionError("accepted keys %r" % (keys,))


# ---- the floor ids (floor.site, floor.table): part of every MQTT topic the
# table publishes, 1 to 32 of A-Z a-z 0-9 _ - kept as written, anything else
# refused naming the field, then the id and the characters allowed.

WHY = "only A-Z a-z 0-9 _ - (it is part of MQTT topics)"


def _floor_id(key, value):
    f = {"site": "S1", "table": "T07", "broker": "10.0.0.5"}
    f[key] = value
    return f


def _refusal(key, value):
    try:
        board.parse_board(_board(_floor_id(key, value)))
    except ConfigError as e:
        return e
    raise AssertionError("floor.%s %r accepted" % (key, value))


def test_ids_of_the_topic_characters_are_kept_as_written():
    for key in ("site", "table"):
        for v in ("A", "Zz09_-", "casino-FLOOR_2", "x" * 32):
            assert board.parse_board(_board(_floor_id(key, v))).floor[key] == v, (key, v)


def test_an_id_with_a_character_outside_the_topic_set_is_refused_naming_its_field():
    # The MQTT wildcards and separator, a space, a dot, a letter outside A-Z.
    for key in ("site", "table"):
        field = "floor." + key
        for v in ("T/07", "T+", "#", "T 07", "T.07", "t\u00e9"):
            e = _refusal(key, v)
            assert e.field == field, (v, e.field)
            assert e.message == "%r: %s" % (v, WHY), (v, e.message)
            assert str(e) == "%s: %r: %s" % (field, v, WHY), (v, str(e))


def test_an_id_of_no_characters_or_too_many_is_refused_naming_its_field():
    for key in ("site", "table"):
        for v in ("", "x" * 33, 7, None):
            e = _refusal(key, v)
            assert e.field == "floor." + key, (v, e.field)
            assert e.message == "must be 1 to 32 characters of A-Z a-z 0-9 _ -, got %r" % (v,), (
                v, e.message)


def test_a_table_may_not_take_the_floor_services_name():
    # The broker's ACL gives the name `floor` every table's journals and
    # acknowledgements; a site may be called so, a table may not.
    e = _refusal("table", "floor")
    assert e.field == "floor.table", e.field
    assert e.message == "'floor' is the floor service's name on the broker, never a table's", e
    assert board.parse_board(_board(_floor_id("site", "floor"))).floor["site"] == "floor"
    assert board.parse_board(_board(_floor_id("table", "Floor"))).floor["table"] == "Floor"
    # The site's read-only account reads every topic of the site.
    e = _refusal("table", "compliance")
    assert e.field == "floor.table", e.field
    assert e.message == ("'compliance' is the site's read-only account's name on the broker, "
                         "never a table's"), e
