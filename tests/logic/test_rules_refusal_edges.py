# Edges of the rules engine's catalogue and refusals: an area's unused
# numbers are 0 (only the numbers of its code are set); a board checked
# against a table whose shaker type is not one the board file knows is
# refused by name, not with a crash; a table's odds that are not an object
# of area: odds are refused as such; and a file's key that would not read as
# a field name (spaces, control or non-ASCII characters) is quoted in the
# refusal, so that the one line a technician sees shows where it ends.
from sicbo import areas, board, config, kinds
from sicbo.errors import ConfigError, key_name
from tables import refusal, table_dict


def _params(code):
    i = areas.index_of(code)
    assert i >= 0, code
    return tuple(areas.param(i, k) for k in range(4))


def test_an_areas_unused_numbers_are_zero():
    assert _params("SMALL") == (0, 0, 0, 0)
    assert _params("ANY_TRIPLE") == (0, 0, 0, 0)
    assert _params("ODD") == (0, 0, 0, 0)
    assert _params("SINGLE_3") == (3, 0, 0, 0)
    assert _params("TRIPLE_6") == (6, 0, 0, 0)
    assert _params("TOTAL_9") == (9, 0, 0, 0)
    assert _params("DOUBLE_2") == (2, 0, 0, 0)
    # The double first, then the single; a pair names two numbers.
    assert _params("COMBO_1_2_2") == (2, 1, 0, 0)
    assert _params("PAIR_1_2") == (1, 2, 0, 0)
    assert _params("COMBO_1_2_3") == (1, 2, 3, 0)
    assert _params("FOUR_1_2_3_4") == (1, 2, 3, 4)
    # Every area with one number, whatever the kind: the other three are 0.
    for i in range(kinds.AREA_COUNT_2004):
        if areas.kind_of(i) in (kinds.SINGLE, kinds.TRIPLE, kinds.TOTAL, kinds.DOUBLE):
            assert areas.param(i, 0) and not (
                areas.param(i, 1) or areas.param(i, 2) or areas.param(i, 3)), areas.code(i)


def _full_board():
    # A board with every shaker's output: only the table's shaker type is wrong.
    b = board.Board()
    b.outputs = {"solenoid": 25, "shaker_motor": 26, "bell": 15}
    b.lamps = {"bus": "hc595"}
    return b


def test_a_table_with_a_shaker_type_unknown_to_the_board_check_is_refused_by_name():
    cfg = config.parse_table(table_dict())
    board.check_table(_full_board(), cfg)  # the real table fits
    cfg.shaker = "hydraulic"  # parse_table refuses it; check_table must not crash on it
    try:
        board.check_table(_full_board(), cfg)
    except ConfigError as e:
        assert e.field == "shaker" and "hydraulic" in e.message, (e.field, e.message)
    else:
        raise AssertionError("a board was checked against an unknown shaker type")


def test_odds_that_are_not_an_object_are_refused_as_such():
    for odds in ([], ["TOTAL_5"], [["TOTAL_5", 20]], 18, "TOTAL_5"):
        e = refusal(table_dict(odds=odds))
        assert e.field == "odds", (odds, e.field)
        assert "must be an object of area: odds" in e.message, e.message


def test_a_key_that_would_not_read_as_a_field_name_is_quoted():
    assert key_name("odds") == "odds"
    assert key_name("TOTAL_5") == "TOTAL_5"
    for key in ("my odds", " odds", "odds ", "tab\there", "line\n", "caf\u00e9", "odds\x7f"):
        assert key_name(key) == repr(key), key_name(key)
    assert key_name("") == repr("")
    assert key_name(5) == repr(5)


def test_an_unknown_field_with_a_space_is_named_quoted():
    t = table_dict()
    t["void policy"] = "bets_stay"  # a typo for void_policy
    e = refusal(t)
    assert e.field == repr("void policy"), e.field
    assert "unknown field" in e.message, e.message
