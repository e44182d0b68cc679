# The table's signal declarations (sicbo.signals) agree with each other: each
# named index is the place of its name in INPUT_SIGNALS, the order the switch
# bank is built in and its events are numbered by, so a constant that drifts
# from its name would read or act on another input (the sixth face's key
# taken for nothing, or past the bank's end).
from sicbo import signals as S

NAMED = (("cover", S.COVER), ("clasp_left", S.CLASP_LEFT), ("clasp_right", S.CLASP_RIGHT),
         ("shake", S.SHAKE), ("supervisor", S.SUPERVISOR), ("key_bell", S.KEY_BELL),
         ("key_void", S.KEY_VOID), ("key_payout", S.KEY_PAYOUT),
         ("key_confirm", S.KEY_CONFIRM), ("key_face_1", S.KEY_FACE_1),
         ("key_face_6", S.KEY_FACE_6))


def test_each_named_signal_indexes_its_own_name():
    for name, index in NAMED:
        assert S.INPUT_SIGNALS.index(name) == index, (name, index)
    assert len(S.INPUT_SIGNALS) == S.COUNT, len(S.INPUT_SIGNALS)
    assert len(set(S.INPUT_SIGNALS)) == S.COUNT  # no name twice


def test_the_six_face_keys_are_consecutive_and_the_last_signals():
    for f in range(1, 7):
        assert S.INPUT_SIGNALS[S.KEY_FACE_1 + f - 1] == "key_face_%d" % f, f
    assert S.KEY_FACE_6 == S.KEY_FACE_1 + 5, S.KEY_FACE_6
    assert S.KEY_FACE_6 == S.COUNT - 1, (S.KEY_FACE_6, S.COUNT)


def test_the_levels_come_before_the_keys():
    assert S.LEVELS == S.KEY_BELL
    for name in S.INPUT_SIGNALS[:S.LEVELS]:
        assert name[:4] != "key_", name
    for name in S.INPUT_SIGNALS[S.LEVELS:]:
        assert name[:4] == "key_", name
