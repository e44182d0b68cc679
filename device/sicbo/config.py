# Table configuration: which edition of the rules, which areas are offered, the
# odds chosen within the legal ranges, what a triple kills, how the lamp
# segments are wired, and the regulator's approval (Art. 8).
#
# parse_table() takes the decoded JSON object and returns a TableConfig, or
# raises ConfigError naming the field and the allowed values. It checks
# everything before it builds anything, so a refused file is never half used.

from micropython import const

from sicbo import areas, dates, kinds
from sicbo import records as R
from sicbo.errors import ConfigError, key_name
from sicbo.settings import TableConfig
from sicbo.signals import STATUS_LAMPS  # lamps that are not bet areas

SHAKERS = ("solenoid", "electric", "manual")
# Art. 3(3)-(4): 2003 keeps every bet of a void round; 2004 lets the players
# cancel, keep or change them (text amended by 69/2006, which we do not hold).
VOID_POLICIES = ("bets_stay", "players_choose")
# What the controller does with a round that a power cut interrupted before
# the bell: keep betting open, or void it.
RESUME_POLICIES = ("keep_open", "void")
# Art. 7 names Big and Small; Odd and Even are the common house addition.
_KILLABLE = ("SMALL", "BIG", "ODD", "EVEN")
_REQUIRED_KILLS = ("SMALL", "BIG")
_WORKING_DAYS_NOTICE = 3
# The largest board or table file (tablefiles reads it whole on the board,
# sicbo deploy checks the same), the longest strings and lists one may hold.
FILE_MAX = const(16384)
NAME_MAX = const(80)  # a table's or a board's name
_REFERENCE_MAX = const(100)
_HOLIDAYS_MAX = const(100)

_FIELDS = ("name", "edition", "shaker", "offered", "odds", "triple_kills",
           "lamp_order", "void_policy", "resume_policy", "approval", "floor")
# The floor link's backlog: the rounds' worth of flash kept for records the
# floor has not acknowledged, and what happens past it: keep playing (the
# oldest unacknowledged records go; the floor sees the gap), or stop taking
# new rounds until the floor acknowledges.
WHEN_FULL = ("keep_playing", "stop_new_rounds")
_FLOOR_FIELDS = ("backlog_rounds", "when_full")
_REQUIRED = ("name", "edition", "shaker", "offered", "lamp_order", "approval")
_APPROVAL_FIELDS = ("reference", "applied", "effective", "holidays")


def _is_int(x):
    return type(x) is int


def _catalogue_order(code):
    return areas.index_of(code) if isinstance(code, str) else -1


def _choices(values):
    return ", ".join(values)


def text_in(value, field, most, what):
    """value, a non-blank string of at most `most` characters, or
    ConfigError: the board holds the file's strings in its heap, so the host
    refuses what the board could not boot with (both run this check)."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(field, "must be %s, a non-empty string" % what)
    if len(value) > most:
        raise ConfigError(field, "is %d characters: at most %d" % (len(value), most))
    return value


def _need_list(obj, field):
    if not isinstance(obj, list):
        raise ConfigError(field, "must be a list, got %r" % (obj,))
    return obj


def _area(code, field, edition):
    i = areas.index_of(code) if isinstance(code, str) else -1
    if i < 0:
        raise ConfigError(field, "unknown area %r (codes as in rules.md, e.g. SMALL, "
                          "TOTAL_4, COMBO_1_1_2)" % (code,))
    if i >= areas.area_count(edition):
        raise ConfigError(field, "area %s is not in the %d edition" % (code, edition))
    return i


def _parse_odds(obj, edition, offered_set):
    odds = bytearray(kinds.AREA_COUNT_2004)
    for i in offered_set:
        odds[i] = areas.base_odds(i)
    if obj is None:
        return odds
    if not isinstance(obj, dict):
        raise ConfigError("odds", "must be an object of area: odds, got %r" % (obj,))
    settable = []
    for total in sorted(areas.ODDS_RANGES):
        settable.append("TOTAL_%d" % total)
    # Catalogue order, so that the same file gets the same message everywhere
    # (MicroPython dicts do not keep the file's order).
    for code in sorted(obj, key=_catalogue_order):
        field = "odds." + str(code)
        i = areas.index_of(code) if isinstance(code, str) else -1
        if i < 0 or code not in settable:
            raise ConfigError(field, "odds can be chosen only for %s; every other area "
                              "has fixed legal odds" % _choices(settable))
        if i not in offered_set:
            raise ConfigError(field, "%s is not offered by this table" % code)
        low, high = areas.ODDS_RANGES[areas.param(i, 0)]
        if edition == kinds.EDITION_2003:
            high = low  # Art. 6(6) of 2003 fixes them
        value = obj[code]
        if not _is_int(value) or not low <= value <= high:
            if low == high:
                allowed = "%d (fixed in the %d edition)" % (low, edition)
            else:
                allowed = "an integer from %d to %d" % (low, high)
            raise ConfigError(field, "must be %s, got %r" % (allowed, value))
        odds[i] = value
    # Art. 6(6) gives 5 and 16 (and 6 and 15) one line and one odds.
    for a, b in ((5, 16), (6, 15)):
        ia = areas.index_of("TOTAL_%d" % a)
        ib = areas.index_of("TOTAL_%d" % b)
        if ia in offered_set and ib in offered_set and odds[ia] != odds[ib]:
            raise ConfigError("odds.TOTAL_%d" % b, "must equal odds.TOTAL_%d (%d): Art. 6(6) "
                              "sets one odds for totals %d and %d" % (a, odds[ia], a, b))
    return odds


def _parse_kills(obj, offered_set, edition):
    if obj is None:
        obj = list(_REQUIRED_KILLS)
    kills = []
    for k, code in enumerate(_need_list(obj, "triple_kills")):
        field = "triple_kills[%d]" % k
        if code not in _KILLABLE:
            raise ConfigError(field, "%r cannot be killed by a triple; allowed: %s"
                              % (code, _choices(_KILLABLE)))
        i = _area(code, field, edition)
        if i not in offered_set:
            raise ConfigError(field, "%s is not offered by this table" % code)
        if i in kills:
            raise ConfigError(field, "%s is listed twice" % code)
        kills.append(i)
    for code in _REQUIRED_KILLS:
        i = areas.index_of(code)
        if i in offered_set and i not in kills:
            raise ConfigError("triple_kills", "must include %s: Art. 7 makes every Big and "
                              "Small bet lose on a triple" % code)
    kills.sort()
    return tuple(kills)


def _parse_lamps(obj, offered_set, edition):
    seen = {}  # type: dict[str, int]
    wired = set()  # type: set[int]
    order = _need_list(obj, "lamp_order")
    if len(order) > R.MAX_CHANNELS:
        raise ConfigError("lamp_order", "%d channels: at most %d (a meters checkpoint holds "
                          "every channel's wins in one journal record)"
                          % (len(order), R.MAX_CHANNELS))
    for k, name in enumerate(order):
        field = "lamp_order[%d]" % k
        if name is None:
            continue  # a spare channel
        if not isinstance(name, str):
            raise ConfigError(field, "must be an area code, a status lamp (%s) or null, got %r"
                              % (_choices(STATUS_LAMPS), name))
        if name in seen:
            raise ConfigError(field, "%r is already wired to channel %d" % (name, seen[name]))
        seen[name] = k
        if name in STATUS_LAMPS:
            continue
        i = _area(name, field, edition)
        if i not in offered_set:
            raise ConfigError(field, "%s is not offered by this table (use null for a "
                              "spare channel)" % name)
        wired.add(i)
    for i in sorted(offered_set):
        if i not in wired:
            raise ConfigError("lamp_order", "misses the offered area %s: every offered area "
                              "needs its lamp segment" % areas.code(i))
    return order


def _parse_approval(obj):
    if not isinstance(obj, dict):
        raise ConfigError("approval", "must be an object with reference, applied, "
                          "effective and optional holidays")
    for key in sorted(obj):
        if key not in _APPROVAL_FIELDS:
            raise ConfigError("approval." + key_name(key), "unknown field; allowed: %s"
                              % _choices(_APPROVAL_FIELDS))
    ref = text_in(obj.get("reference"), "approval.reference", _REFERENCE_MAX,
                  "the regulator's approval reference")
    days = {}
    for key in ("applied", "effective"):
        try:
            days[key] = dates.parse(obj.get(key))
        except ValueError as e:
            raise ConfigError("approval." + key, str(e)) from None
    holidays = set()
    listed = _need_list(obj.get("holidays", []), "approval.holidays")
    if len(listed) > _HOLIDAYS_MAX:
        raise ConfigError("approval.holidays", "%d dates: at most %d (those between the "
                          "application and the effective date)" % (len(listed), _HOLIDAYS_MAX))
    for k, text in enumerate(listed):
        try:
            holidays.add(dates.parse(text))
        except ValueError as e:
            raise ConfigError("approval.holidays[%d]" % k, str(e)) from None
    notice = dates.working_days(days["applied"], days["effective"], holidays)
    if notice < _WORKING_DAYS_NOTICE:
        raise ConfigError("approval.effective", "%s is %d working day(s) after the "
                          "application of %s; Art. 8 needs at least %d (Saturdays, Sundays "
                          "and listed holidays do not count)"
                          % (obj["effective"], notice, obj["applied"], _WORKING_DAYS_NOTICE))
    return {"reference": ref, "applied": obj["applied"], "effective": obj["effective"],
            "holidays": list(obj.get("holidays", []))}


def _choice(obj, field, allowed, default=None):
    value = obj.get(field, default)
    if value not in allowed:
        raise ConfigError(field, "must be one of %s, got %r" % (_choices(allowed), value))
    return value


def parse_table(obj):
    """Validate a decoded table file; return a TableConfig or raise ConfigError."""
    if not isinstance(obj, dict):
        raise ConfigError("table", "must be a JSON object")
    for key in sorted(obj):
        if key not in _FIELDS:
            raise ConfigError(key_name(key), "unknown field; allowed: %s" % _choices(_FIELDS))
    for key in _REQUIRED:
        if key not in obj:
            raise ConfigError(key, "is required")
    name = text_in(obj["name"], "name", NAME_MAX, "the table's name")
    edition = obj["edition"]
    if not _is_int(edition) or edition not in areas.EDITIONS:
        raise ConfigError("edition", "must be 2003 or 2004, got %r" % (edition,))
    shaker = _choice(obj, "shaker", SHAKERS)
    if edition == kinds.EDITION_2003 and shaker == "electric":
        raise ConfigError("shaker", "the 2003 edition (Art. 1) has a handle only; allowed: "
                          "solenoid, manual")
    offered = []
    for k, code in enumerate(_need_list(obj["offered"], "offered")):
        i = _area(code, "offered[%d]" % k, edition)
        if i in offered:
            raise ConfigError("offered[%d]" % k, "%s is listed twice" % code)
        offered.append(i)
    if not offered:
        raise ConfigError("offered", "must list at least one area")
    offered.sort()
    offered_set = set(offered)
    cfg = TableConfig()
    cfg.odds = bytes(_parse_odds(obj.get("odds"), edition, offered_set))
    cfg.triple_kills = _parse_kills(obj.get("triple_kills"), offered_set, edition)
    cfg.lamp_order = _parse_lamps(obj["lamp_order"], offered_set, edition)  # kept as codes
    cfg.void_policy = _choice(obj, "void_policy", VOID_POLICIES, "bets_stay")
    if edition == kinds.EDITION_2003 and cfg.void_policy != "bets_stay":
        raise ConfigError("void_policy", "the 2003 edition (Art. 3(3)) does not let bets be "
                          "withdrawn; allowed: bets_stay")
    cfg.resume_policy = _choice(obj, "resume_policy", RESUME_POLICIES, "void")
    cfg.approval = _parse_approval(obj["approval"])
    floor = obj.get("floor", {})
    if not isinstance(floor, dict):
        raise ConfigError("floor", "must be an object (backlog_rounds, when_full)")
    for key in sorted(floor):
        if key not in _FLOOR_FIELDS:
            raise ConfigError("floor." + key_name(key), "unknown field; allowed: %s"
                              % _choices(_FLOOR_FIELDS))
    rounds = floor.get("backlog_rounds", 1000)
    if not _is_int(rounds) or not 10 <= rounds <= 100000:
        raise ConfigError("floor.backlog_rounds", "must be an integer from 10 to 100000 "
                          "(rounds' worth of flash kept for the floor), got %r" % (rounds,))
    cfg.backlog_rounds = rounds
    when = floor.get("when_full", "keep_playing")
    if when not in WHEN_FULL:
        raise ConfigError("floor.when_full", "must be one of %s, got %r"
                          % (_choices(WHEN_FULL), when))
    cfg.when_full = when
    cfg.name = name
    cfg.edition = edition
    cfg.shaker = shaker
    cfg.offered = tuple(offered)
    return cfg


def load_table(text):
    """Parse the text of a table file (JSON) and validate it."""
    import json

    try:
        obj = json.loads(text)
    except ValueError as e:
        raise ConfigError("table", "not valid JSON (%s)" % (e,)) from None
    return parse_table(obj)
