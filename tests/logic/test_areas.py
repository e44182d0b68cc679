# The catalogue of bet areas (sicbo.areas): editions, codes, legal odds, and
# what every area wins on every throw by the definitions of Art. 5.
from sicbo import areas, kinds


def test_edition_sizes():
    assert areas.area_count(2003) == 29
    assert areas.area_count(2004) == 117
    assert len(areas.codes()) == 117 and len(areas.codes(29)) == 29


def test_codes_are_unique():
    assert len(set(areas.codes())) == len(areas.codes())


def test_no_module_getattr_misspelt_names_fail():
    # Real names only: no module __getattr__ that accepts any name.
    from sicbo import journal, settle, texts

    for mod in (areas, journal, settle, texts):
        assert not hasattr(mod, "__getattr__"), mod
    for mod, name in ((areas, "CODES"), (journal, "Replay"), (settle, "settle_wagers"),
                      (texts, "TEXT")):
        try:
            getattr(mod, name)
            raise AssertionError(name)
        except AttributeError:
            pass


def test_2003_areas_are_the_first_of_the_catalogue():
    first = areas.codes(29)
    assert first[0] == "SMALL" and first[1] == "BIG"
    assert "ANY_TRIPLE" in first and "TOTAL_4" in first and "TOTAL_17" in first
    assert "ODD" not in first and "FOUR_1_2_3_4" not in first


def test_counts_per_kind_in_2004():
    counts = {}
    for i in range(117):
        k = areas.kind_of(i)
        counts[k] = counts.get(k, 0) + 1
    assert counts[kinds.SINGLE] == 6 and counts[kinds.TRIPLE] == 6
    assert counts[kinds.TOTAL] == 14
    assert counts[kinds.COMBO_DOUBLE] == 30
    assert counts[kinds.COMBO_THREE] == 20
    assert counts[kinds.PAIR] == 15
    assert counts[kinds.DOUBLE] == 6
    assert counts[kinds.FOUR] == 15


def test_combo_codes_list_numbers_in_ascending_order():
    double_1 = areas.index_of("COMBO_1_1_2")
    double_2 = areas.index_of("COMBO_1_2_2")
    assert double_1 >= 0 and double_2 >= 0 and double_1 != double_2
    assert areas.hits(double_1, 1, 2, 1) == 1 and areas.hits(double_1, 2, 2, 1) == 0
    assert areas.hits(double_2, 2, 1, 2) == 1 and areas.hits(double_2, 1, 1, 2) == 0
    assert areas.index_of("COMBO_2_1_1") == -1


def test_unknown_code_and_edition():
    assert areas.index_of("TOTAL_3") == -1
    assert areas.index_of("TOTAL_18") == -1
    assert areas.index_of("small") == -1
    try:
        areas.area_count(2005)
    except ValueError as e:
        assert "2003 or 2004" in str(e)
    else:
        raise AssertionError("edition 2005 accepted")


def test_legal_odds():
    odds = {"SMALL": 1, "TRIPLE_4": 150, "ANY_TRIPLE": 24, "TOTAL_4": 50, "TOTAL_17": 50,
            "TOTAL_5": 18, "TOTAL_6": 14, "TOTAL_7": 12, "TOTAL_14": 12, "TOTAL_8": 8,
            "TOTAL_9": 6, "TOTAL_12": 6, "ODD": 1, "COMBO_1_1_2": 50, "COMBO_1_2_3": 30,
            "PAIR_5_6": 5, "DOUBLE_2": 8, "FOUR_1_2_3_4": 7}
    for code in odds:
        assert areas.base_odds(areas.index_of(code)) == odds[code], code


def _won_by_code(code, dice):
    """How many times the bet named by code is won by the dice, read from the
    code and Art. 5 alone (independent of the catalogue's bytes): the number of
    matching dice for a Single, otherwise 0 or 1."""
    total = dice[0] + dice[1] + dice[2]
    triple = dice[0] == dice[1] == dice[2]
    if code == "ANY_TRIPLE":
        return 1 if triple else 0
    parts = code.split("_")
    kind = parts[0]
    n = [int(p) for p in parts[1:]]
    if kind == "SMALL":
        return 1 if 4 <= total <= 10 else 0
    if kind == "BIG":
        return 1 if 11 <= total <= 17 else 0
    if kind == "SINGLE":
        return dice.count(n[0])
    if kind == "TRIPLE":
        return 1 if triple and dice[0] == n[0] else 0
    if kind == "TOTAL":
        return 1 if total == n[0] else 0
    if kind == "ODD":
        return total % 2
    if kind == "EVEN":
        return 1 - total % 2
    if kind == "COMBO":  # the three numbers shown, as a set with repeats
        return 1 if sorted(dice) == n else 0
    if kind == "PAIR":
        return 1 if n[0] in dice and n[1] in dice else 0
    if kind == "DOUBLE":
        return 1 if dice.count(n[0]) >= 2 else 0
    if kind == "FOUR":
        return 1 if len(set(dice)) == 3 and all(d in n for d in dice) else 0
    raise AssertionError("no definition for " + code)


def test_hits_of_every_area_on_every_throw_follow_art_5():
    codes = areas.codes()
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            for d3 in range(1, 7):
                dice = [d1, d2, d3]
                for i in range(len(codes)):
                    got = areas.hits(i, d1, d2, d3)
                    assert got == _won_by_code(codes[i], dice), (codes[i], dice, got)


def test_a_double_is_won_once_even_on_a_triple():
    # Short pair (短牌): at least two dice show n, paid once, a triple included.
    double_2 = areas.index_of("DOUBLE_2")
    assert areas.hits(double_2, 2, 5, 2) == 1
    assert areas.hits(double_2, 2, 2, 2) == 1
    assert areas.hits(double_2, 2, 5, 6) == 0
