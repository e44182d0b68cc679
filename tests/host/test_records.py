# The journal's record types are declared once (device/sicbo/records.py);
# everything derived from the declarations must agree with them: the board's
# tables (a block of sicbo/journal.py), the names in sicbo/texts.py, the payload
# checks, the meters each type counts, the states each type may follow, and
# the host's decoder. A new record type forgotten anywhere fails here.
import itertools

from host_tools import records as gen
from sicbo import events as E
from sicbo import journal, meters, texts
from sicbo import records as R
from sicbo.journal import CHECK_AT, CHECKS, FOLLOWS, METER_OF
from sicbo.roundstate import RoundState

STATES = range(E.ST_IDLE, E.ST_HOLD + 1)


def test_the_generated_files_agree_with_the_declarations():
    assert gen.stale() == [], "run python -m host_tools.records --write"


def test_every_code_up_to_j_last_is_declared_once_with_its_name():
    codes = [d[0] for d in R.RECORD_TYPES]
    assert sorted(codes) == list(range(1, R.J_LAST + 1))
    names = [d[1] for d in R.RECORD_TYPES]
    assert len(set(names)) == len(names)
    for code, name, *_rest in R.RECORD_TYPES:
        assert texts.J_NAMES[code] == name
        # The J_ constant of each declared type has the declared name.
        assert getattr(R, "J_" + name.upper()) == code, name
    assert len(texts.J_NAMES) == R.J_LAST + 1


def test_the_tables_cover_every_type_and_nothing_more():
    assert len(FOLLOWS) == len(METER_OF) == R.J_LAST + 1
    assert len(CHECK_AT) == R.J_LAST + 2 and len(CHECKS) == 5 * CHECK_AT[-1]
    for code, _name, _fields, follows, meter, _text in R.RECORD_TYPES:
        assert FOLLOWS[code] == sum(1 << s for s in set(follows)), code
        assert METER_OF[code] == (255 if meter is None else meters.NAMES.index(meter)), code
    assert FOLLOWS[0] == 0 and METER_OF[0] == 255


def _record(t, payload):
    return journal.encode(t, 7, 3, 1, 1000, None, bytes(payload))


def _size(code):
    """The payload every record of the type has: PAYLOAD, or the least of a
    payload that is not fixed."""
    return R.VARIABLE.get(code, R.PAYLOAD)


def test_the_payload_check_is_exactly_the_declared_fields():
    # Every byte value at every offset of every type: the check refuses
    # exactly the values outside a declared field's range, with the field's
    # damage code; nothing else.
    for code, _name, fields, *_rest in R.RECORD_TYPES:
        if code == R.J_METERS:
            continue
        base = bytearray(_size(code))
        for _f, off, size, kind, lo, _hi, _names in fields:
            if kind in ("dice", "code"):
                for i in range(off, off + size):
                    base[i] = 1 if kind == "dice" else lo
        rec = _record(code, base)
        assert journal.check_payload(code, len(rec), rec, R.HEADER) == 0, code
        for off, value in itertools.product(range(_size(code)), range(256)):
            p = bytearray(base)
            p[off] = value
            want = 0
            for _f, foff, size, kind, lo, hi, _names in fields:
                if foff <= off < foff + size:
                    if kind == "dice" and not 1 <= value <= 6:
                        want = E.BAD_DICE
                    elif kind == "code" and not lo <= value <= hi:
                        want = E.BAD_VALUE
            rec = _record(code, p)
            got = journal.check_payload(code, len(rec), rec, R.HEADER)
            assert got == want, (code, off, value, got, want)


def test_lengths_and_unknown_types():
    for code, *_rest in R.RECORD_TYPES:
        if code == R.J_METERS:
            continue
        least = _size(code)
        for n in (0, 4, 7, least - 1, least + 1, 16):
            if code in R.VARIABLE and n >= least:
                continue  # longer is allowed: checked below
            rec = _record(code, bytes(n))
            assert journal.check_payload(code, len(rec), rec, R.HEADER) == E.BAD_LENGTH, (
                code, n)
    # A payload that is not fixed: its least length and any more, to MAX_LEN.
    for code, least in R.VARIABLE.items():
        if code == R.J_METERS:
            continue
        decl = [d for d in R.RECORD_TYPES if d[0] == code][0]
        base = bytearray(least)
        for _f, off, _n, kind, lo, _hi, _names in decl[2]:
            if kind == "code":
                base[off] = lo
        for extra in (0, 1, R.MAX_LEN - R.MIN_LEN - least):
            rec = _record(code, bytes(base) + b"x" * extra)
            assert journal.check_payload(code, len(rec), rec, R.HEADER) == 0, (code, extra)
    rec = _record(R.J_METERS, bytes(R.METERS_HEAD - 1))
    assert journal.check_payload(R.J_METERS, len(rec), rec, R.HEADER) == E.BAD_LENGTH
    rec = _record(R.J_METERS, bytes(R.METERS_HEAD))
    assert journal.check_payload(R.J_METERS, len(rec), rec, R.HEADER) == 0
    for t in (0, R.J_LAST + 1, 255):
        rec = _record(t, bytes(8))
        assert journal.check_payload(t, len(rec), rec, R.HEADER) == E.BAD_TYPE


def test_the_replay_allows_each_type_in_exactly_its_declared_states():
    # A record of each type, put in the journal right after a state is reached
    # (a synced RoundState put in each state), is damage BAD_STATE exactly when
    # the type is not declared to follow that state.
    neutral = {R.J_CORRECTION, R.J_HOLD, R.J_RESULT, R.J_VOID, R.J_READER}
    for code, _name, fields, follows, *_rest in R.RECORD_TYPES:
        if code in neutral or code == R.J_METERS:
            continue  # their payload is checked against the round too (below)
        payload = bytearray(_size(code))
        for _f, off, size, kind, lo, _hi, _names in fields:
            if kind in ("dice", "code"):
                for i in range(off, off + size):
                    payload[i] = 1 if kind == "dice" else lo
        for st in STATES:
            rs = RoundState()
            rs.seq = 6
            rs.round = 3 if code != R.J_ROUND else 2
            rs.synced = True
            rs.state = st
            got = rs.take(_record(code, payload), 0)
            want = 0 if st in follows else E.BAD_STATE
            assert got == want, (code, st, got)


def test_the_host_decoder_names_every_declared_field():
    from host_tools.commands.journal import record_dict

    for code, name, fields, *_rest in R.RECORD_TYPES:
        if code == R.J_METERS:
            continue
        payload = bytearray(_size(code))
        for _f, off, size, kind, lo, _hi, _names in fields:
            if kind in ("dice", "code"):
                for i in range(off, off + size):
                    payload[i] = 1 if kind == "dice" else lo
        rec = journal.records(_record(code, payload))[0]
        d = record_dict("j00000001.log", rec, 0)
        assert d["type"] == name and d["type_code"] == code
        got = d["found"] if code == R.J_DAMAGE else d  # the damaged record it names
        for fname, *_more in fields:
            assert fname in got, (name, fname, sorted(got))



def test_technician_access_is_every_kind_the_access_list_names():
    # The access the table journals, each a record of its own (records.ACCESS:
    # what the floor raises as access and lists): the diag tests and a fault
    # cleared, the REPL stop, the clock set or moved, a deploy, a code check,
    # recovery mode, and provisioning once the MAC chain declares it.
    names = {texts.J_NAMES[c] for c in R.ACCESS}
    want = {"diag", "repl", "clock", "clock_moved", "deploy", "verify", "recovery"}
    if hasattr(R, "J_PROVISION"):
        want.add("provision")
    assert names == want and len(R.ACCESS) == len(want), names


def _with_fields(monkeypatch, code, fields):
    # The declarations with the fields of one record type replaced.
    decls = []
    for decl in R.RECORD_TYPES:
        if decl[0] == code:
            decl = (decl[0], decl[1], tuple(fields)) + tuple(decl[3:])
        decls.append(decl)
    monkeypatch.setattr(R, "RECORD_TYPES", tuple(decls))


def test_the_generator_refuses_what_it_cannot_derive_or_check(monkeypatch):
    import pytest

    fault = [d for d in R.RECORD_TYPES if d[0] == R.J_FAULT][0][2]
    assert gen.tables()  # the declarations as they are
    # Two fields on one byte: one number would read under two names.
    moved = [f if f[0] != "detail" else (f[0], fault[1][1]) + tuple(f[2:]) for f in fault]
    _with_fields(monkeypatch, R.J_FAULT, moved)
    with pytest.raises(ValueError, match="fields kind and detail share payload byte 1"):
        gen.tables()
    # A field past the bytes every record of the type has.
    _with_fields(monkeypatch, R.J_FAULT, list(fault) + [("spare", R.PAYLOAD, 1, "byte", 0, 255,
                                                         None)])
    with pytest.raises(ValueError, match="a field past the payload"):
        gen.tables()
    # A 3-byte wall: the decoders read a wall as 4 bytes.
    _with_fields(monkeypatch, R.J_FAULT, list(fault) + [("when", 4, 3, "wall", 0, 0, None)])
    with pytest.raises(ValueError, match="a wall field is 4 bytes, not 3"):
        gen.tables()
