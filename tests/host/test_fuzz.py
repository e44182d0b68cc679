"""Fuzzing of every parser that takes outside bytes: the dice-reader
line protocol, the board and table files, the journal reader and the wager file
of `sicbo settle --wagers`. Random and mutated inputs must always end in a
clear error or a counted rejection: never an escaping exception, never a
settlement from corrupted input.

SICBO_FUZZ_EXAMPLES sets the examples per target (make soak runs many more);
the number that ran is printed with -s and summed in bench/soak output."""

import copy
import json
import os

from appkit import board_dict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host_tools.cli import UsageError
from host_tools.commands.settle import read_wagers
from roundkit import Rig
from sicbo import board, config, dicereader, journal, recall, settle
from sicbo import wagers as wagermod
from sicbo.errors import ConfigError, InputError
from sicbo.roundstate import RoundState
from tables import table_dict

EXAMPLES = int(os.environ.get("SICBO_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
COUNTS = {}


def counted(name):
    COUNTS[name] = COUNTS.get(name, 0) + 1


def mutate(data, edits):
    """Apply (kind, position, byte) edits: flip, insert, delete, replace."""
    b = bytearray(data)
    for kind, pos, value in edits:
        if not b and kind != "insert":
            continue
        i = pos % (len(b) + 1 if kind == "insert" else len(b))
        if kind == "flip":
            b[i] ^= 1 << (value % 8)
        elif kind == "insert":
            b.insert(i, value)
        elif kind == "delete":
            del b[i]
        else:
            b[i] = value
    return bytes(b)


EDITS = st.lists(st.tuples(st.sampled_from(["flip", "insert", "delete", "replace"]),
                           st.integers(0, 10 ** 6), st.integers(0, 255)), max_size=6)


# ---- dice reader -------------------------------------------------------------

def valid_lines(readings):
    return b"".join(dicereader.line(r, a, b, c) for r, a, b, c in readings)


def _crc_upper(line):
    star = line.rfind(b"*")
    return line[:star] + line[star:].upper() if star >= 0 else line


READINGS = st.lists(st.tuples(st.integers(1, 999999999), st.integers(1, 6),
                              st.integers(1, 6), st.integers(1, 6)), max_size=5)


@FUZZ
@given(READINGS, EDITS, st.binary(max_size=80))
def test_dice_reader_never_settles_corrupted_lines(readings, edits, noise):
    stream = mutate(valid_lines(readings), edits) + noise + b"\n"
    rd = dicereader.DiceReader()
    got = []
    rd.feed(stream, lambda *r: got.append(r))
    counted("dice reader streams")
    lines = stream.split(b"\n")
    # The protocol takes the checksum's hex digits in either case.
    canonical = {_crc_upper(ln.rstrip(b"\r")) for ln in lines}
    for r in got:
        # A reading comes only from a line that is exactly a valid line.
        assert dicereader.line(*r).rstrip(b"\n") in canonical, r
        assert all(1 <= d <= 6 for d in r[1:])
    assert rd.ok == len(got)
    nonempty = [ln for ln in lines[:-1] if ln not in (b"", b"\r")]
    assert rd.ok + rd.rejected() == len(nonempty)


@FUZZ
@given(st.binary(max_size=400))
def test_dice_reader_random_bytes(data):
    rd = dicereader.DiceReader()
    got = []
    rd.feed(data, lambda *r: got.append(r))
    counted("dice reader random")
    for r in got:
        assert dicereader.line(*r).rstrip(b"\n") in data


# ---- table and board files ---------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 40), 2 ** 40) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=4),
    max_leaves=12)


def mutate_obj(obj, data):
    """Replace, delete or add one value somewhere inside a JSON object."""
    obj = copy.deepcopy(obj)
    node = obj
    for _ in range(data.draw(st.integers(0, 3))):
        if isinstance(node, dict) and node:
            key = data.draw(st.sampled_from(sorted(node)))
            if isinstance(node[key], (dict, list)) and node[key]:
                node = node[key]
                continue
        if isinstance(node, list) and node:
            i = data.draw(st.integers(0, len(node) - 1))
            if isinstance(node[i], (dict, list)) and node[i]:
                node = node[i]
                continue
        break
    action = data.draw(st.sampled_from(["replace", "delete", "add"]))
    if isinstance(node, dict):
        keys = sorted(node)
        if action == "add" or not keys:
            node[data.draw(st.text(max_size=8))] = data.draw(JSON_VALUES)
        elif action == "delete":
            del node[data.draw(st.sampled_from(keys))]
        else:
            node[data.draw(st.sampled_from(keys))] = data.draw(JSON_VALUES)
    elif isinstance(node, list):
        if action == "add" or not node:
            node.append(data.draw(JSON_VALUES))
        elif action == "delete":
            del node[data.draw(st.integers(0, len(node) - 1))]
        else:
            node[data.draw(st.integers(0, len(node) - 1))] = data.draw(JSON_VALUES)
    return obj


@FUZZ
@given(st.data())
def test_table_files_mutated(data):
    obj = mutate_obj(table_dict(data.draw(st.sampled_from([2003, 2004]))), data)
    counted("table files")
    try:
        cfg = config.parse_table(obj)
    except ConfigError as e:
        assert e.field and e.message
        return
    # Accepted: it must still be a legal table.
    t = settle.SettlementTable(cfg)
    for area in cfg.offered:
        assert cfg.odds[area] > 0
    for code in ("TOTAL_5", "TOTAL_16", "TOTAL_6", "TOTAL_15"):
        from sicbo import areas

        i = areas.index_of(code)
        if cfg.is_offered(i):
            lo, hi = areas.ODDS_RANGES[int(code[6:])]
            assert lo <= cfg.odds[i] <= (hi if cfg.edition == 2004 else lo)
    assert t.size_bytes() > 0


@FUZZ
@given(st.text(max_size=300))
def test_table_files_random_text(text):
    counted("table texts")
    try:
        config.load_table(text)
    except ConfigError as e:
        assert e.field


@FUZZ
@given(st.data())
def test_board_files_mutated(data):
    obj = mutate_obj(board_dict(), data)
    counted("board files")
    try:
        b = board.parse_board(obj)
    except ConfigError as e:
        assert e.field and e.message
        return
    pins = [p for _s, p, _pull, _inv in b.inputs] + list(b.outputs.values())
    assert len(pins) == len(set(pins))
    for p in b.outputs.values():
        assert p not in (6, 7, 8, 9, 10, 11) and not 34 <= p <= 39


# ---- the journal reader --------------------------------------------------------

def sample_journal():
    rig = Rig()
    rig.round(1, 1, 2)
    rig.void_round(2)
    rig.round(6, 6, 6)
    rig.to_open()
    return bytes(rig.journal), rig.m.table


JOURNAL, JTABLE = sample_journal()
JRECORDS = {bytes(JOURNAL[r.offset:r.offset + r.length]) for r in journal.records(JOURNAL)}


@FUZZ
@given(EDITS, st.binary(max_size=64))
def test_journal_reader_mutated(edits, tail):
    data = mutate(JOURNAL, edits) + tail
    counted("journals")
    recs = journal.records(data)
    rp = RoundState()
    rp.feed(data)
    rc = recall.Recall(JTABLE)
    rc.feed(data)
    for r in recs:
        raw = bytes(data[r.offset:r.offset + r.length])
        # Every record read back is one that was written (a forged CRC-32 by
        # chance is the only way out, and hypothesis does not find one).
        assert raw in JRECORDS
    assert rp.state in range(7)
    for info in rc.last():
        if info.dice is not None:
            assert all(1 <= d <= 6 for d in info.dice)


@FUZZ
@given(st.binary(max_size=600))
def test_journal_reader_random_bytes(data):
    counted("journal random")
    assert journal.records(data) == [] or all(r.length >= 28 for r in journal.records(data))
    rp = RoundState()
    rp.feed(data)
    assert rp.state in range(7)


# ---- the wager file ---------------------------------------------------------------

WAGER = st.fixed_dictionaries({"area": st.sampled_from(["SMALL", "BIG", "TRIPLE_3", "NOPE"])
                               | st.text(max_size=6) | JSON_VALUES,
                               "stake": st.integers(-5, 10 ** 9) | JSON_VALUES})


WAGER_TABLE = settle.SettlementTable(config.parse_table(table_dict(2004)))


@FUZZ
@given(st.lists(WAGER, max_size=6) | JSON_VALUES, st.booleans(), EDITS)
def test_wager_files(content, corrupt, edits):
    import tempfile

    from sicbo import areas

    counted("wager files")
    text = json.dumps(content).encode()
    if corrupt:
        text = mutate(text, edits)
    with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        try:
            wagers = read_wagers(path)
        except UsageError as e:
            assert str(e)
            return
        try:
            s = wagermod.settle_wagers(WAGER_TABLE, (3, 3, 3), wagers)
        except InputError as e:
            assert str(e)
            return
        # Settled: only from well-formed wagers, each paid exactly.
        for (area, stake), payout in zip(wagers, s.payouts, strict=True):
            assert type(stake) is int and stake > 0
            odds = WAGER_TABLE.odds_for(areas.index_of(area), 3, 3, 3)
            assert payout == (stake * (odds + 1) if odds else 0)
    finally:
        os.remove(path)


def test_zz_every_target_was_fuzzed(capsys):
    # Runs last (by name): every target above ran its examples, none skipped
    # silently; the counts are printed for the campaign's record.
    with capsys.disabled():
        print("\nfuzz cases: " + ", ".join("%s %d" % (k, v) for k, v in sorted(COUNTS.items()))
              + ", total %d" % sum(COUNTS.values()))
    if len(COUNTS) < 2:
        return  # a single test chosen with -k: nothing to compare
    assert len(COUNTS) >= 8, COUNTS
    assert min(COUNTS.values()) >= EXAMPLES // 2, COUNTS
