from sicbo import areas, config, settings, signals
from tables import refusal, table_dict


def test_full_2004_table_loads():
    cfg = config.parse_table(table_dict(2004))
    assert cfg.edition == 2004 and len(cfg.offered) == 117
    assert cfg.triple_kills == (areas.index_of("SMALL"), areas.index_of("BIG"))
    assert cfg.void_policy == "bets_stay" and cfg.resume_policy == "void"
    assert cfg.odds[areas.index_of("TOTAL_5")] == 18


def test_2003_table_loads():
    cfg = config.parse_table(table_dict(2003))
    assert len(cfg.offered) == 29


def test_chosen_odds_within_range():
    cfg = config.parse_table(table_dict(odds={"TOTAL_5": 30, "TOTAL_16": 30,
                                              "TOTAL_6": 18, "TOTAL_15": 18}))
    assert cfg.odds[areas.index_of("TOTAL_16")] == 30
    assert cfg.odds[areas.index_of("TOTAL_15")] == 18


def test_unknown_area_refused():
    e = refusal(table_dict(offered=["SMALL", "TOTAL_3"]))
    assert e.field == "offered[1]" and "unknown area" in e.message and "TOTAL_3" in e.message


def test_area_not_in_edition_refused():
    offered = list(areas.codes(29)) + ["ODD"]
    e = refusal(table_dict(2003, offered=offered))
    assert e.field == "offered[29]" and "not in the 2003 edition" in e.message


def test_area_listed_twice_refused():
    e = refusal(table_dict(offered=["SMALL", "BIG", "SMALL"]))
    assert e.field == "offered[2]" and "twice" in e.message


def test_odds_outside_range_refused():
    e = refusal(table_dict(odds={"TOTAL_5": 31, "TOTAL_16": 31}))
    assert e.field == "odds.TOTAL_5" and "from 18 to 30" in e.message
    e = refusal(table_dict(odds={"TOTAL_6": 13, "TOTAL_15": 13}))
    assert e.field == "odds.TOTAL_6" and "from 14 to 18" in e.message


def test_odds_not_an_integer_refused():
    e = refusal(table_dict(odds={"TOTAL_5": 20.5, "TOTAL_16": 20}))
    assert e.field == "odds.TOTAL_5" and "integer" in e.message
    e = refusal(table_dict(odds={"TOTAL_5": True, "TOTAL_16": 20}))
    assert e.field == "odds.TOTAL_5"


def test_odds_fixed_in_2003():
    e = refusal(table_dict(2003, odds={"TOTAL_5": 20, "TOTAL_16": 20}))
    assert e.field == "odds.TOTAL_5" and "fixed in the 2003 edition" in e.message
    cfg = config.parse_table(table_dict(2003, odds={"TOTAL_5": 18, "TOTAL_16": 18}))
    assert cfg.odds[areas.index_of("TOTAL_5")] == 18


def test_odds_for_fixed_odds_area_refused():
    e = refusal(table_dict(odds={"TRIPLE_1": 180}))
    assert e.field == "odds.TRIPLE_1" and "TOTAL_5" in e.message and "fixed" in e.message


def test_odds_for_area_not_offered_refused():
    offered = ["SMALL", "BIG", "TOTAL_6", "TOTAL_15"]
    e = refusal(table_dict(offered=offered, odds={"TOTAL_5": 20}))
    assert e.field == "odds.TOTAL_5" and "not offered" in e.message


def test_paired_totals_must_share_odds():
    e = refusal(table_dict(odds={"TOTAL_5": 20, "TOTAL_16": 22}))
    assert e.field == "odds.TOTAL_16" and "Art. 6(6)" in e.message


def test_lamp_order_missing_area_refused():
    t = table_dict()
    t["lamp_order"] = [c for c in t["lamp_order"] if c != "PAIR_2_5"]
    e = refusal(t)
    assert e.field == "lamp_order" and "PAIR_2_5" in e.message


def test_lamp_order_repeated_area_refused():
    t = table_dict()
    t["lamp_order"] = t["lamp_order"] + ["DOUBLE_3"]
    e = refusal(t)
    assert e.field == "lamp_order[%d]" % (len(t["lamp_order"]) - 1)
    assert "DOUBLE_3" in e.message and "already wired" in e.message


def test_lamp_order_area_not_offered_refused():
    t = table_dict(offered=["SMALL", "BIG"])
    t["lamp_order"] = ["SMALL", "BIG", "ODD"]
    e = refusal(t)
    assert e.field == "lamp_order[2]" and "not offered" in e.message


def test_lamp_order_spare_channels_allowed():
    t = table_dict(offered=["SMALL", "BIG"])
    t["lamp_order"] = ["SMALL", None, "BIG", "PLACE_BETS"]
    cfg = config.parse_table(t)
    assert cfg.lamp_order == ("SMALL", None, "BIG", "PLACE_BETS")


def test_the_table_keeps_one_code_a_lamp_channel_and_names_them_when_asked():
    # A string a channel, kept for the table's life, was 4 KiB of the board's
    # heap (121 channels): the config holds one byte a channel instead.
    t = table_dict(offered=["SMALL", "BIG"])
    t["lamp_order"] = ["SMALL", None, "BIG", "PLACE_BETS", "ALARM", "VOID", "PAYING"]
    cfg = config.parse_table(t)
    assert "lamp_order" not in cfg.__dict__
    assert type(cfg.lamps) is bytes
    # The codes are the configuration cache's (sicbo/cache.py, format 3):
    # the catalogue index, 250 + the status lamp's index, 255 for a spare.
    assert cfg.lamps == bytes((areas.index_of("SMALL"), 255, areas.index_of("BIG"),
                               250, 251, 252, 253))
    assert [settings.lamp_name(250 + k) for k in range(4)] == list(signals.STATUS_LAMPS)
    assert cfg.lamp_order == tuple(t["lamp_order"])
    assert [cfg.channel_name(c) for c in range(7)] == t["lamp_order"]
    full = config.parse_table(table_dict(2004))
    assert len(full.lamps) == len(table_dict(2004)["lamp_order"])
    assert full.lamp_order == tuple(table_dict(2004)["lamp_order"])
    # Every code stands for one name, and back.
    for code in list(range(117)) + [250, 251, 252, 253, 255]:
        cfg.lamp_order = (settings.lamp_name(code),)
        assert cfg.lamps == bytes((code,))
    # Names given to the config are coded the same way; a name that is
    # neither an area nor a status lamp is refused, and nothing is changed.
    cfg.lamp_order = ("BIG", "SMALL")
    assert cfg.lamps == bytes((areas.index_of("BIG"), areas.index_of("SMALL")))
    for bad in ("TOTAL_3", "place_bets", ""):
        try:
            cfg.lamp_order = ("SMALL", bad)
        except ValueError as e:
            assert repr(bad) in str(e)
        else:
            raise AssertionError("lamp %r taken" % bad)
        assert cfg.lamps == bytes((areas.index_of("BIG"), areas.index_of("SMALL")))


def test_the_floor_backlog_from_10_to_100000_rounds_and_its_policy_by_name():
    for good in (10, 100000):
        assert config.parse_table(table_dict(floor={"backlog_rounds": good})).backlog_rounds == good
    for bad in (9, 100001, "1000", 10.5):
        e = refusal(table_dict(floor={"backlog_rounds": bad}))
        assert e.field == "floor.backlog_rounds" and "from 10 to 100000" in e.message, (bad, e)
    e = refusal(table_dict(floor={"when_full": "pause"}))
    assert e.field == "floor.when_full", e
    assert e.message.startswith("must be one of ") and e.message.endswith("got 'pause'"), e


def test_an_area_killed_twice_is_refused_by_its_place():
    e = refusal(table_dict(triple_kills=["SMALL", "BIG", "SMALL"]))
    assert e.field == "triple_kills[2]" and e.message == "SMALL is listed twice", e


def test_triple_kills_must_keep_big_and_small():
    e = refusal(table_dict(triple_kills=["SMALL"]))
    assert e.field == "triple_kills" and "BIG" in e.message and "Art. 7" in e.message


def test_triple_kills_only_even_money_bets():
    e = refusal(table_dict(triple_kills=["SMALL", "BIG", "TOTAL_9"]))
    assert e.field == "triple_kills[2]" and "SMALL, BIG, ODD, EVEN" in e.message


def test_triple_kills_house_option_odd_even():
    cfg = config.parse_table(table_dict(triple_kills=["SMALL", "BIG", "ODD", "EVEN"]))
    assert areas.index_of("ODD") in cfg.triple_kills


def test_electric_shaker_not_in_2003():
    e = refusal(table_dict(2003, shaker="electric"))
    assert e.field == "shaker" and "handle" in e.message
    assert config.parse_table(table_dict(2004, shaker="electric")).shaker == "electric"


def test_unknown_shaker_refused():
    e = refusal(table_dict(shaker="hydraulic"))
    assert e.field == "shaker" and "solenoid, electric, manual" in e.message


def test_void_policy_2003_keeps_bets():
    e = refusal(table_dict(2003, void_policy="players_choose"))
    assert e.field == "void_policy" and "bets_stay" in e.message


def test_unknown_field_refused():
    t = table_dict()
    t["tripple_kills"] = ["SMALL", "BIG"]
    e = refusal(t)
    assert e.field == "tripple_kills" and "unknown field" in e.message


def test_missing_field_refused():
    t = table_dict()
    del t["approval"]
    e = refusal(t)
    assert e.field == "approval" and "required" in e.message


def test_bad_edition_refused():
    for bad in ("2004", 2005, None):
        t = table_dict()
        t["edition"] = bad
        e = refusal(t)
        assert e.field == "edition" and "2003 or 2004" in e.message


def test_approval_malformed_date_refused():
    t = table_dict(approval={"reference": "R", "applied": "2026-13-01", "effective": "2026-12-20"})
    e = refusal(t)
    assert e.field == "approval.applied" and "2026-13-01" in e.message
    t = table_dict(approval={"reference": "R", "applied": "2026-11-2", "effective": "2026-12-20"})
    assert refusal(t).field == "approval.applied"
    t = table_dict(approval={"reference": "R", "applied": "2026-02-29", "effective": "2026-12-20"})
    assert refusal(t).field == "approval.applied"


def test_approval_too_close_refused():
    # Applied Monday 2026-11-02, effective Wednesday: only Mon and Tue count.
    t = table_dict(approval={"reference": "R", "applied": "2026-11-02", "effective": "2026-11-04"})
    e = refusal(t)
    assert e.field == "approval.effective" and "2 working day" in e.message


def test_approval_weekend_does_not_count():
    # Applied Friday 2026-11-06: Fri, Mon, Tue are three working days, so
    # Wednesday is the first possible effective date, not Monday.
    t = table_dict(approval={"reference": "R", "applied": "2026-11-06", "effective": "2026-11-09"})
    assert refusal(t).field == "approval.effective"
    t = table_dict(approval={"reference": "R", "applied": "2026-11-06", "effective": "2026-11-11"})
    assert config.parse_table(t).approval["effective"] == "2026-11-11"


def test_approval_holidays_do_not_count():
    ok = {"reference": "R", "applied": "2026-12-17", "effective": "2026-12-22"}
    assert config.parse_table(table_dict(approval=ok))
    with_holiday = {"reference": "R", "applied": "2026-12-17", "effective": "2026-12-22",
                    "holidays": ["2026-12-18", "2026-12-21"]}
    e = refusal(table_dict(approval=with_holiday))
    assert e.field == "approval.effective" and "1 working day" in e.message


def test_approval_reference_required():
    e = refusal(table_dict(approval={"reference": " ", "applied": "2026-11-02",
                                     "effective": "2026-11-09"}))
    assert e.field == "approval.reference"


def test_load_table_rejects_bad_json():
    try:
        config.load_table("{not json")
    except config.ConfigError as e:
        assert e.field == "table" and "JSON" in e.message
    else:
        raise AssertionError("bad JSON accepted")


def test_lamp_order_entry_of_wrong_type_refused():
    # Found by fuzzing: a list in lamp_order used to escape as a TypeError.
    t = table_dict(offered=["SMALL", "BIG"])
    t["lamp_order"] = ["SMALL", ["BIG"], "BIG"]
    e = refusal(t)
    assert e.field == "lamp_order[1]" and "or null" in e.message


def test_empty_field_name_is_quoted():
    t = table_dict()
    t[""] = 1
    e = refusal(t)
    assert e.field == "''" and "unknown field" in e.message


def test_each_total_s_odds_are_refused_one_past_either_end_of_its_own_range():
    # Art. 6(6): 5 and 16 from 18 to 30, 6 and 15 from 14 to 18; each total's
    # range checked on its own, its pair given a value in range.
    for total, pair, low, high in ((5, 16, 18, 30), (16, 5, 18, 30), (6, 15, 14, 18),
                                   (15, 6, 14, 18)):
        for bad, good in ((low - 1, low), (high + 1, high)):
            e = refusal(table_dict(odds={"TOTAL_%d" % total: bad, "TOTAL_%d" % pair: good}))
            assert e.field == "odds.TOTAL_%d" % total, (total, bad, e.field)
            assert "from %d to %d, got %d" % (low, high, bad) in e.message, e.message
        for ok in (low, high):
            cfg = config.parse_table(table_dict(odds={"TOTAL_%d" % total: ok,
                                                      "TOTAL_%d" % pair: ok}))
            assert cfg.odds[areas.index_of("TOTAL_%d" % total)] == ok
