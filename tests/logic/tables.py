# Table configurations for the logic tests, built in code so that the tests
# also run on a board (where board_config/ is not present).
from sicbo import areas, config, settle

STATUS = ["PLACE_BETS", "ALARM", "VOID", "PAYING"]


def table_dict(edition=2004, offered=None, **changes):
    codes = list(areas.codes(areas.area_count(edition)))
    offered = codes if offered is None else offered
    t = {
        "name": "test table %d" % edition,
        "edition": edition,
        "shaker": "solenoid",
        "offered": list(offered),
        "lamp_order": STATUS + list(offered),
        "approval": {"reference": "DICJ-TEST-1", "applied": "2026-11-02",
                     "effective": "2026-11-05"},
    }
    for k in changes:
        t[k] = changes[k]
    return t


def table(edition=2004, **changes):
    return settle.SettlementTable(config.parse_table(table_dict(edition, **changes)))


def refusal(obj):
    """The ConfigError that parse_table raises for obj (fails if it accepts)."""
    try:
        config.parse_table(obj)
    except config.ConfigError as e:
        return e
    raise AssertionError("configuration was accepted: %r" % (obj,))
