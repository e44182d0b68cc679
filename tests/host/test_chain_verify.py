"""The MAC chain against each alteration: journals pulled
from virtual boards provisioned with `sicbo deploy --provision` (a board with
a power cut mid-round, its journal put back from an older copy, a board
provisioned again, a second table, a board never provisioned), altered by
tests/host/attacker.py (struct, zlib, no project code), then `sicbo journal
--verify`: each alteration named, the untouched journals verified."""

import contextlib
import io
import json
import os
import re
import shutil

import pytest
from attacker import (
    TYPE_PROVISION,
    TYPE_RESULT,
    fix_crc,
    has_mac,
    index_of,
    join,
    kind,
    poke,
    seq,
    split,
    with_seq,
    without_mac,
)
from test_system import HEAP, TABLE, board_file, open_betting, play, wait_app

from host_tools.cli import main
from host_tools.deploy import deploy
from host_tools.simclient import TableClient
from host_tools.vboard import VirtualBoard

HEAD = re.compile(r"^chain +provisioning (\d+) since seq (\d+), head (\d+:[0-9a-f]{32})$", re.M)


def _cli(*argv):
    out = io.StringIO()
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _pull(vb, client, path):
    """sicbo diag status --pull-journal: the status's output (the board's own
    head), the journal pulled to path; then the app back."""
    frames = client.lamps()["frames"]
    code, out, err = _cli("diag", "--port", vb.port, "status", "--pull-journal", str(path))
    assert code == 0, err
    wait_app(client, frames)
    return out


def _board_head(out):
    m = HEAD.search(out)
    assert m, out
    return int(m.group(1)), m.group(3)


class Journals:
    pass


@pytest.fixture(scope="module")
def journals(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chain-journals")
    j = Journals()
    j.keys = str(tmp / "keys.json")
    j.dir = tmp
    board = board_file(tmp)
    vb = VirtualBoard(str(tmp / "vb1"), board=board, heap=HEAP)
    vb.start()
    try:
        with TableClient(vb.control) as client:
            frames = client.lamps()["frames"]
            deploy(vb.port, board, TABLE, provision_to=j.keys, table_id="T01")
            wait_app(client, frames)
            play(client, (1, 1, 2))
            open_betting(client)
            vb.power_cut()  # mid-round
            frames = client.lamps()["frames"]
            vb.power_on(timeout=0)
            wait_app(client, frames)
            play(client, (3, 4, 5))
            j.a = tmp / "a.bin"
            out = _pull(vb, client, j.a)
            j.a_chain, j.a_head = _board_head(out)
            # A copy of the board's journal and key file, taken off it.
            vb.power_cut()
            jdir = os.path.join(vb.fs, "journal")
            shutil.copytree(jdir, tmp / "copy")
            frames = client.lamps()["frames"]
            vb.power_on(timeout=0)
            wait_app(client, frames)
            play(client, (6, 6, 6))
            j.a2 = tmp / "a2.bin"
            j.a2_head = _board_head(_pull(vb, client, j.a2))[1]  # the head the floor saw
            # The copy put back, and the table plays on from it.
            vb.power_cut()
            shutil.rmtree(jdir)
            shutil.copytree(tmp / "copy", jdir)
            frames = client.lamps()["frames"]
            vb.power_on(timeout=0)
            wait_app(client, frames)
            play(client, (2, 3, 3))
            play(client, (1, 5, 6))
            j.rolled = tmp / "rolled.bin"
            _pull(vb, client, j.rolled)
            # Provisioned again: a second chain of the same table.
            frames = client.lamps()["frames"]
            deploy(vb.port, board, TABLE, provision_to=j.keys, table_id="T01")
            wait_app(client, frames)
            play(client, (4, 4, 1))
            j.b = tmp / "b.bin"
            j.b_chain = _board_head(_pull(vb, client, j.b))[0]
    finally:
        vb.stop()
    vb = VirtualBoard(str(tmp / "vb2"), board=board, heap=HEAP)
    vb.start()
    try:
        with TableClient(vb.control) as client:
            frames = client.lamps()["frames"]
            deploy(vb.port, board, TABLE)  # no chain yet
            wait_app(client, frames)
            play(client, (2, 2, 2))
            j.plain = tmp / "plain.bin"
            out = _pull(vb, client, j.plain)
            assert "none: records not authenticated" in out, out
            frames = client.lamps()["frames"]
            deploy(vb.port, board, TABLE, provision_to=j.keys, table_id="T02")
            wait_app(client, frames)
            play(client, (5, 5, 5))
            j.c = tmp / "c.bin"
            j.c_chain = _board_head(_pull(vb, client, j.c))[0]
    finally:
        vb.stop()
    return j


def verify(journals, data, *more, name="x.bin"):
    """sicbo journal FILE --verify KEYSTORE --json on data: (exit status, report)."""
    path = journals.dir / name
    with open(path, "wb") as f:
        f.write(data)
    code, out, err = _cli("journal", str(path), "--verify", journals.keys, "--json", *more)
    assert "Traceback" not in out + err
    return code, json.loads(out)


def kinds(rep):
    return sorted({f["kind"] for f in rep["findings"]})


def read(path):
    with open(path, "rb") as f:
        return f.read()


def results(recs):
    return [i for i, r in enumerate(recs) if kind(r) == TYPE_RESULT]


def test_the_untouched_journals_verify_and_their_head_is_the_boards(journals):
    for path, head in ((journals.a, journals.a_head), (journals.a2, journals.a2_head)):
        code, rep = verify(journals, read(path))
        assert code == 0 and rep["verified"], rep["findings"]
        assert rep["authenticated"] == rep["records"] == len(split(read(path)))
        assert rep["head"]["text"] == head  # what the board's diag.status() says
        assert [c["id"] for c in rep["chains"]] == [journals.a_chain]
        assert rep["chains"][0]["table"] == "T01" and rep["chains"][0]["first_seq"] == 1
    code, out, _err = _cli("journal", str(journals.a), "--verify", journals.keys)
    assert code == 0 and "result:  VERIFIED" in out, out
    # The board rolled back is consistent in itself, and so is the one provisioned again.
    assert verify(journals, read(journals.rolled))[0] == 0
    code, rep = verify(journals, read(journals.b))
    assert code == 0 and [c["id"] for c in rep["chains"]] == [journals.a_chain, journals.b_chain]


def test_a_modified_record_is_named(journals):
    recs = split(read(journals.a))
    i = results(recs)[0]
    p = 24  # the payload: the first die
    recs[i] = poke(recs[i], p, 6 if recs[i][p] != 6 else 5)  # CRC mended
    code, rep = verify(journals, join(recs))
    assert code == 1 and kinds(rep) == ["modified"], rep["findings"]
    assert rep["findings"][0]["seq"] == seq(recs[i])
    # Its CRC not mended: bytes that are no record where it was.
    recs = split(read(journals.a))
    recs[i] = poke(recs[i], p, 6 if recs[i][p] != 6 else 5, crc=False)
    code, rep = verify(journals, join(recs))
    assert code == 1 and kinds(rep) == ["modified"] and rep["findings"][0]["seq"] == seq(recs[i])


def test_a_record_without_its_mac_is_named(journals):
    recs = split(read(journals.a))
    i = results(recs)[0]
    recs[i] = without_mac(poke(recs[i], 24, 4))
    assert not has_mac(recs[i])
    code, rep = verify(journals, join(recs))
    assert code == 1 and kinds(rep) == ["modified"] and "no MAC" in rep["findings"][0]["text"]


def test_an_inserted_record_is_named(journals):
    recs = split(read(journals.a))
    i = results(recs)[0]
    forged = poke(recs[i], 24, 6 if recs[i][24] != 6 else 5)  # a second result, same number
    code, rep = verify(journals, join(recs[:i + 1] + [forged] + recs[i + 1:]))
    assert code == 1 and kinds(rep) == ["inserted"], rep["findings"]
    assert rep["findings"][0]["seq"] == seq(recs[i])
    # A genuine record copied in again.
    code, rep = verify(journals, join(recs[:i + 1] + [recs[i]] + recs[i + 1:]))
    assert code == 1 and kinds(rep) == ["inserted"] and "copy" in rep["findings"][0]["text"]
    # Inserted, and the numbers after it moved up to make room.
    moved = recs[:i + 1] + [with_seq(forged, seq(recs[i]) + 1)] + [
        with_seq(r, seq(r) + 1) for r in recs[i + 1:]]
    code, rep = verify(journals, join(moved))
    assert code == 1 and "inserted" in kinds(rep) and "renumbered" in kinds(rep), kinds(rep)


def test_a_deleted_record_is_named(journals):
    recs = split(read(journals.a))
    i = results(recs)[0]
    gone = seq(recs[i])
    code, rep = verify(journals, join(recs[:i] + recs[i + 1:]))
    assert code == 1 and kinds(rep) == ["deleted"], rep["findings"]
    assert rep["findings"][0]["seq"] == gone and rep["findings"][0]["last_seq"] == gone
    # Deleted, and the numbers after it moved down to close the gap.
    closed = recs[:i] + [with_seq(r, seq(r) - 1) for r in recs[i + 1:]]
    code, rep = verify(journals, join(closed))
    assert code == 1 and "deleted" in kinds(rep) and "renumbered" in kinds(rep), kinds(rep)


TYPE_BOOT = 1
TYPE_ROUND = 2
TYPE_DEPLOY = 28


def test_records_cut_from_the_journal_s_front_are_named(journals):
    recs = split(read(journals.a))
    assert seq(recs[0]) == 1 and kind(recs[0]) == TYPE_PROVISION
    # Every record before the first round's gone (the provisioning, the
    # deploy's, the boot): the journal now starts with a record no segment
    # starts with. Rotation deletes whole segments, so this is a deletion,
    # not history rotated away.
    i = [kind(r) for r in recs].index(TYPE_ROUND)
    code, rep = verify(journals, join(recs[i:]))
    assert code == 1 and kinds(rep) == ["deleted"], rep["findings"]
    f = rep["findings"][0]
    assert f["seq"] == seq(recs[i]) and f["last_seq"] == seq(recs[i]) - 1
    assert "not rotated away" in f["text"]
    # Cut at what a technician's access journaled (the deploy's record): it
    # went after the segment's last record, so this is a deletion too.
    i = [kind(r) for r in recs].index(TYPE_DEPLOY)
    code, rep = verify(journals, join(recs[i:]))
    assert code == 1 and kinds(rep) == ["deleted"], rep["findings"]
    assert "opens a segment of its own only after a torn one" in rep["findings"][0]["text"]
    # Cut where a segment starts (a later boot's J_BOOT): what rotation leaves.
    boots = [i for i, r in enumerate(recs) if kind(r) == TYPE_BOOT and i > 0]
    assert boots, "no later boot in the journal"
    code, rep = verify(journals, join(recs[boots[-1]:]))
    assert code == 0 and rep["findings"] == [], rep["findings"]
    assert any("older records were rotated away" in n for n in rep["notes"]), rep["notes"]


def test_records_reordered_are_named(journals):
    recs = split(read(journals.a))
    i = results(recs)[0]
    recs[i - 1], recs[i] = recs[i], recs[i - 1]
    code, rep = verify(journals, join(recs))
    assert code == 1 and kinds(rep) == ["reordered"], rep["findings"]


def test_a_record_from_another_table_is_named(journals):
    recs = split(read(journals.a))
    theirs = [r for r in split(read(journals.c)) if has_mac(r) and kind(r) != TYPE_PROVISION]
    # In the place of one of this table's records (its number).
    same = [r for r in theirs if seq(r) in {seq(x) for x in recs}]
    assert same, "table T02's chain and table T01's journal share no number"
    k = index_of(recs, seq(same[0]))
    code, rep = verify(journals, join(recs[:k] + [same[0]] + recs[k + 1:]))
    assert code == 1 and kinds(rep) == ["replayed"], rep["findings"]
    f = rep["findings"][0]
    assert f["seq"] == seq(same[0]) and f["table"] == "T02" and f["chain"] == journals.c_chain
    assert "table T02" in f["text"]
    # Added after this table's last record.
    code, rep = verify(journals, join(recs + [theirs[-1]]))
    assert code == 1 and "replayed" in kinds(rep), rep["findings"]


def test_a_record_from_another_provisioning_of_the_table_is_named(journals):
    old = split(read(journals.a))
    newer = split(read(journals.b))
    start = [seq(r) for r in newer if kind(r) == TYPE_PROVISION][-1]
    later = [r for r in newer if seq(r) > start]  # signed by the second chain
    code, rep = verify(journals, join(old + later[:1]))
    assert code == 1 and kinds(rep) == ["replayed"], rep["findings"]
    f = rep["findings"][0]
    assert f["chain"] == journals.b_chain and f["table"] == "T01"
    assert "provisioning of this table" in f["text"]


def test_truncation_against_a_head_is_named(journals):
    recs = split(read(journals.a2))
    head = journals.a2_head
    code, rep = verify(journals, join(recs), "--head", head)
    assert code == 0 and rep["head_check"] == "ok"
    code, rep = verify(journals, join(recs[:-3]), "--head", head)
    assert code == 1 and kinds(rep) == ["truncated"] and rep["head_check"] == "truncated"
    # The older journal, pulled before the head was taken: truncated too.
    code, rep = verify(journals, read(journals.a), "--head", head)
    assert code == 1 and rep["head_check"] == "truncated"


def test_a_rollback_against_a_head_is_named(journals):
    # The board's journal and key file put back from a copy taken before the
    # head, and the table played on: every record verifies, but not the head.
    code, rep = verify(journals, read(journals.rolled))
    assert code == 0
    assert rep["head"]["seq"] > int(journals.a2_head.split(":")[0])
    code, rep = verify(journals, read(journals.rolled), "--head", journals.a2_head)
    assert code == 1 and kinds(rep) == ["rollback"] and rep["head_check"] == "rollback"
    # The same numbers signed twice with other bytes, in one journal: a rollback.
    honest = split(read(journals.a2))
    rolled = split(read(journals.rolled))
    theirs = {seq(r): r for r in rolled}
    twice = [r for r in honest if seq(r) in theirs and theirs[seq(r)] != r][:1]
    assert twice
    code, rep = verify(journals, join(rolled + twice))
    assert code == 1 and "rollback" in kinds(rep), rep["findings"]


def test_a_journal_from_before_the_chain_is_named(journals):
    code, rep = verify(journals, read(journals.plain))
    assert code == 1 and kinds(rep) == ["unauthenticated"]
    assert rep["authenticated"] == 0 and rep["unauthenticated"] == rep["records"] > 0
    code, out, _err = _cli("journal", str(journals.plain), "--verify", journals.keys)
    assert code == 1 and "NOT VERIFIED" in out and "before the chain" in out
    # Records before the board's provisioning: named, the chain after them verified.
    code, rep = verify(journals, read(journals.c))
    assert code == 1 and kinds(rep) == ["unauthenticated"], rep["findings"]
    assert [c["table"] for c in rep["chains"]] == ["T02"]
    # And sicbo journal marks them.
    code, out, _err = _cli("journal", str(journals.c), "--json")
    listed = json.loads(out)["records_listed"]
    assert not listed[0]["authenticated"] and listed[-1]["authenticated"]
    assert [r["chain"] for r in listed if r["type"] == "provision"] == [journals.c_chain]


def test_a_key_store_of_other_chains_verifies_nothing(journals, tmp_path):
    from host_tools import keystore

    other = keystore.KeyStore(str(tmp_path / "other.json"))
    other.new_chain("T01", 1)
    other.save()
    path = tmp_path / "a.bin"
    shutil.copy(journals.a, path)
    code, out, _err = _cli("journal", str(path), "--verify", other.path, "--json")
    rep = json.loads(out)
    assert code == 1 and kinds(rep) == ["unverifiable"]


def test_verify_refuses_bad_arguments_in_one_line(journals, tmp_path):
    code, _out, err = _cli("journal", str(journals.a), "--head", "12:ab")
    assert code == 2 and "--verify" in err
    code, _out, err = _cli("journal", str(journals.a), "--verify", journals.keys, "--head", "x")
    assert code == 2 and "SEQ:HASH" in err and "Traceback" not in err
    code, _out, err = _cli("journal", str(journals.a), "--verify", str(tmp_path / "none.json"))
    assert code == 2 and "no key store" in err
    loose = tmp_path / "loose.json"
    shutil.copy(journals.keys, loose)
    os.chmod(loose, 0o644)
    code, _out, err = _cli("journal", str(journals.a), "--verify", str(loose))
    assert code == 2 and "chmod 600" in err


def test_fix_crc_is_what_the_board_checks(journals):
    # The attacker's CRC is the board's: a record rewritten unchanged is itself.
    recs = split(read(journals.a))
    assert all(fix_crc(r) == r for r in recs)


def test_the_attackers_layout_is_the_journals():
    # attacker.py keeps its own copy of the layout (docs/journal.md); a record
    # type renumbered in sicbo/records.py must fail here, not leave the
    # alterations above editing the wrong records.
    import attacker

    from sicbo import records as R

    assert (attacker.MAGIC, attacker.TYPE_RESULT, attacker.TYPE_PROVISION) == (
        R.MAGIC, R.J_RESULT, R.J_PROVISION)
