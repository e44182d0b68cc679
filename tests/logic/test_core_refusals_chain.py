# Edges of the rules engine's refusals, of the round machine's display and
# of the MAC chain: a triple kill of an area the table does not offer, and a
# floor section that is not an object, are refused naming the field with
# what is wrong; a date with anything but digits where its digits go is not
# a date, so an approval whose effective date has one is refused; a message
# shown without a detail shows detail 0; and the chain caught up over a
# journal where a record was written without a MAC, before
# the chain's J_PROVISION or among its records, passes over it without
# counting it as a bad record and still reaches the writer's head.
import struct

from roundkit import Rig
from sicbo import chain as C
from sicbo import dates, journal
from sicbo import events as E
from sicbo import records as R
from sicbo.chainfollow import follow_all
from tables import refusal, table_dict

# ---- the table file's refusals ------------------------------------------------------


def test_a_triple_kill_of_an_area_not_offered_is_refused_naming_the_entry():
    offered = [c for c in table_dict()["offered"] if c != "BIG"]
    e = refusal(table_dict(offered=offered, triple_kills=["SMALL", "BIG"]))
    assert e.field == "triple_kills[1]", (e.field, e.message)
    assert e.message == "BIG is not offered by this table", e.message
    assert str(e) == "triple_kills[1]: BIG is not offered by this table", str(e)


def test_a_floor_section_that_is_not_an_object_is_refused_naming_floor():
    for bad in ("keep_playing", [1000], 1000):
        e = refusal(table_dict(floor=bad))
        assert e.field == "floor", (bad, e.field)
        assert e.message == "must be an object (backlog_rounds, when_full)", e.message


# ---- dates --------------------------------------------------------------------------


def test_a_date_with_a_sign_or_space_among_its_digits_is_refused():
    # int() would read "+1" or " 5" as a number: the date's own check must not.
    for text in ("2026-+1-05", "2026-11-+5", "+026-11-05", "2026-11- 5", "2026-1 -05"):
        try:
            day = dates.parse(text)
        except ValueError:
            continue
        raise AssertionError("accepted %r as day %d" % (text, day))
    assert dates.parse("2026-11-05") - dates.parse("2026-11-02") == 3


def test_an_approval_whose_effective_date_is_not_all_digits_is_refused():
    approval = {"reference": "DICJ-TEST-1", "applied": "2026-11-02", "effective": "2026-11-+9"}
    e = refusal(table_dict(approval=approval))
    assert e.field == "approval.effective", (e.field, e.message)
    assert "YYYY-MM-DD" in e.message, e.message


# ---- the round machine --------------------------------------------------------------


def test_a_message_shown_without_a_detail_shows_detail_zero():
    r = Rig()
    r.to_open()
    r.ev(E.EV_BELL)
    assert r.has(E.C_SHOW) == (E.C_SHOW, E.M_BETS_CLOSED, 0, 0), r.last
    r.ev(E.EV_BELL)  # not now: shown, not journaled
    assert r.last == [(E.C_SHOW, E.R_KEY_NOT_NOW, 0, 0)], r.last


# ---- the MAC chain caught up --------------------------------------------------------

_IDENT = 0x5EED0001
_KEY = bytes(range(100, 132))


def _plain(rtype, seq, payload=bytes(R.PAYLOAD)):
    return journal.encode(rtype, seq, 0, 1, 0, None, payload)


def _provisioning():
    # The provisioning file's chain: first = 0 (its J_PROVISION not yet seen).
    return C.key_file(_IDENT, 0, 1, 0, _KEY, bytes(R.CHAIN_LEN))


def _sealed(ch, recs):
    data = b"".join(recs)
    return bytes(ch.seal(data, len(data)))


def test_the_chain_passes_over_records_written_without_a_mac_before_and_among_its_own():
    w = C.Chain(_provisioning())
    p = bytearray(R.PAYLOAD)
    struct.pack_into("<I", p, R.P_CHAIN, _IDENT)
    # Record 1 before the chain's J_PROVISION (2): written plain.
    part = _sealed(w, [_plain(R.J_BOOT, 1), _plain(R.J_PROVISION, 2, bytes(p)),
                       _plain(R.J_BOOT, 3)])
    assert w.unsigned == 1 and w.first == 2 and w.head == 3
    # The key file was ahead of the journal (record 4 signed, then lost):
    # record 4 written again has no key any more and goes plain.
    w.to(5)
    gone = _sealed(w, [_plain(R.J_ALARM_CLEAR, 4)])
    assert w.unsigned == 2 and not gone[R.OFF_FLAGS] & R.FLAG_MAC
    rest = _sealed(w, [_plain(R.J_BOOT, 5), _plain(R.J_ALARM_CLEAR, 6)])
    data = part + gone + rest
    # A key file from before all of it follows the whole journal.
    ch = C.Chain(_provisioning())
    follow_all(ch, data)
    assert ch.bad == 0, ch.bad
    assert (ch.first, ch.head, ch.seq) == (2, 6, 7)
    assert bytes(ch.key) == bytes(w.key)
    assert ch.head_text() == w.head_text(), (ch.head_text(), w.head_text())
    # One that stops at the plain record: its number is used up, never signed.
    ch = C.Chain(_provisioning())
    follow_all(ch, part + gone)
    assert (ch.bad, ch.head, ch.seq) == (0, 3, 5)
    # Before the J_PROVISION nothing is followed: the key does not move.
    ch = C.Chain(_provisioning())
    follow_all(ch, part[:R.REC_LEN])
    assert (ch.bad, ch.first, ch.seq) == (0, 0, 1) and bytes(ch.key) == _KEY
