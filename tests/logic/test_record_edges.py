# The deploy record (J_DEPLOY) as the firmware writes it (access.deployed) and
# as people read it: its head at the offsets docs/journal.md gives (kind,
# copied, removed, the cut-short flag, the code, the configuration), the list
# of files cut short exactly where a provisioned journal's MAC still fits in
# a record of MAX_LEN bytes; read back by
# the board's line (sicbo.logtext) and the host's decoder (sicbo journal).
import sys

import access
import machine
from folderkit import fresh_folder, journal_records

from sicbo import events as E
from sicbo import journal, logtext
from sicbo import records as R

CPYTHON = sys.implementation.name != "micropython"
# Every byte of the code and of the configuration different: one field
# written over another shows.
CODE = bytes(range(0xA0, 0xA0 + 32)).hex()
CONFIG = bytes(range(0x10, 0x16)).hex()
# The files' text in a record of MAX_LEN once a provisioned journal has
# sealed it with its MAC.
ROOM = R.MAX_LEN - R.MIN_LEN - R.MAC_LEN - R.DEPLOY_HEAD


_folder = [None]


def _deploy(copied, removed):
    machine.sim_reset()  # the RTC not set (a test before may have set it): no wall time
    f = _folder[0] = fresh_folder()
    access.deployed(R.CODE_FILES, CODE, CONFIG, copied, removed, f)
    access.close()
    recs = journal_records(f)
    assert [r.type for r in recs] == [R.J_DEPLOY], recs
    return recs[0]


def _host_json(folder):
    # `sicbo journal FOLDER --json`, as compliance staff read a pulled journal.
    import contextlib
    import io
    import json

    from host_tools.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["journal", folder, "--json"]) == 0
    return json.loads(out.getvalue())


def _host_last(rec):
    # The host's fields of the journal's last record: rec, as _deploy read it.
    d = _host_json(_folder[0])["records_listed"][-1]
    assert d["seq"] == rec.seq and d["type"] == "deploy", d
    return d


def test_a_deploy_record_keeps_the_code_and_the_configuration_at_their_offsets():
    rec = _deploy(["main.py"], ["old.py"])
    p = rec.payload
    assert p[0] == R.CODE_FILES and p[1] == 1 and p[2] == 1 and p[3] == 0
    assert p[4:12].hex() == CODE[:16] and p[12:18].hex() == CONFIG and p[18:20] == b"\0\0"
    assert p[20:] == b"+main.py\n-old.py"
    assert logtext.journal_line(rec) == (
        "journal      1 round     0 deploy      deployed files a0a1a2a3a4a5a6a7"
        " config 101112131415: 1 copied, 1 removed: +main.py -old.py")
    if CPYTHON:
        d = _host_last(rec)
        assert (d["code"], d["config_id"], d["copied"], d["removed"], d["cut_short"]) == (
            "a0a1a2a3a4a5a6a7", "101112131415", 1, 1, 0)
        assert d["damage"] is None


def test_a_cut_short_list_of_files_is_flagged_and_the_counts_stay_whole():
    copied = ["sicbo/module_%02d_with_a_long_name.mpy" % i for i in range(40)]
    rec = _deploy(copied, ["a.py", "b.py", "c.py"])
    p = rec.payload
    # Flag in its own byte: the count of files removed is not written over.
    assert (p[1], p[2], p[3]) == (40, 3, 1)
    assert journal.check(rec) == 0
    assert ": 40 copied, 3 removed:" in logtext.journal_line(rec)
    if CPYTHON:
        d = _host_last(rec)
        assert (d["copied"], d["removed"], d["cut_short"]) == (40, 3, 1)
        assert d["files"]["removed"] == ["a.py", "b.py", "c.py"]
        assert d["files"]["copied"] == copied[:len(d["files"]["copied"])] != copied


def test_files_filling_a_record_of_max_len_are_all_kept_one_byte_more_is_cut_short():
    # "+" and the name: ROOM bytes exactly, the record MAX_LEN long with its
    # MAC (unprovisioned, MAC_LEN bytes short of it).
    rec = _deploy(["n" * (ROOM - 1)], [])
    assert rec.length == R.MAX_LEN - R.MAC_LEN and rec.payload[3] == 0
    assert rec.payload[R.DEPLOY_HEAD:] == b"+" + b"n" * (ROOM - 1)
    assert journal.check(rec) == 0
    rec = _deploy(["n" * ROOM], [])
    assert rec.length == R.MIN_LEN + R.DEPLOY_HEAD and rec.payload[3] == 1
    assert (rec.payload[1], rec.payload[2]) == (1, 0)
    assert journal.check(rec) == 0
    if CPYTHON:
        d = _host_last(rec)
        assert d["cut_short"] == 1 and d["files"] == {"copied": [], "removed": []}


def test_a_deploy_record_one_byte_short_of_its_head_is_damage_its_head_alone_is_not():
    head = bytes(_deploy(["main.py"], []).payload[:R.DEPLOY_HEAD])
    flag_2 = head[:3] + b"\x02" + head[4:]  # the cut-short flag is 0 or 1
    payloads = (head[:-1], head, flag_2)
    wanted = (E.BAD_LENGTH, 0, E.BAD_VALUE)
    data = journal.encode(R.J_BOOT, 1, 0, 1, 0, None, bytes(R.PAYLOAD))
    for seq, payload in enumerate(payloads, 2):
        data += journal.encode(R.J_DEPLOY, seq, 0, 1, 0, None, payload)
    recs = journal.records(data)
    assert [journal.check(r) for r in recs[1:]] == list(wanted)
    if CPYTHON:
        f = fresh_folder()
        with open(f + "/j00000001.log", "wb") as out:
            out.write(data)
        listed = _host_json(f)["records_listed"]
        assert [(d["damage"] or {}).get("code", 0) for d in listed[1:]] == list(wanted)
        assert listed[2]["code"] == "a0a1a2a3a4a5a6a7"


def test_the_board_tables_are_the_record_declarations():
    # `python -m host_tools.records --check` (the build's): the payload
    # checks, states and meters the board runs are derived from
    # sicbo/records.py without error and agree with it.
    if not CPYTHON:
        return
    from host_tools import records as gen

    assert gen.tables() == (journal.FOLLOWS, journal.METER_OF, journal.CHECK_AT,
                            journal.CHECKS, journal.VARLEN)
    assert gen.main(["--check"]) == 0


def test_the_host_reads_each_number_where_the_board_writes_it():
    # docs/journal.md's layout, as the board writes it (J_DAMAGE: roundmachine,
    # J_CLOCK: access.set_clock), read back by `sicbo journal --json`.
    if not CPYTHON:
        return
    import struct

    from journal_store import JournalStore

    f = _folder[0] = fresh_folder()
    st = JournalStore(f)
    st.boot(lambda piece: None)
    st.append(journal.encode(R.J_DAMAGE, 1, 0, 1, 0, None,
                             bytes((E.BAD_DICE, R.J_RESULT)) + struct.pack("<I", 0x01020304)
                             + bytes(2)))
    st.append(journal.encode(R.J_CLOCK, 2, 0, 1, 0, None, struct.pack("<II", 850000000, 860000000)))
    st.close()
    damage, clock = _host_json(f)["records_listed"]
    assert damage["found"] == {"code": E.BAD_DICE, "reason": "dice not 1..6", "type": "result",
                               "seq": 0x01020304}, damage
    assert (clock["old_seconds"], clock["new_seconds"]) == (850000000, 860000000), clock


def test_a_full_list_of_files_on_a_provisioned_journal_is_sealed_within_max_len():
    # The MAC is added as the record is written: the deploy must still be a
    # record the journal reads back, not damage that loses it.
    from chainkit import check_journal, provision, raw_records

    # A second file of 8 bytes ("\n+mmmmmm") would fill MAX_LEN without the
    # MAC: it is cut, and the record with its MAC is MAX_LEN.
    f = fresh_folder()
    provision(f)
    access.deployed(R.CODE_FILES, CODE, CONFIG, ["n" * (ROOM - 1), "m" * 6], [], f)
    access.close()
    assert check_journal(f) == [1, 2]
    raw = raw_records(f)[1]
    assert len(raw) == R.MAX_LEN
    rec = journal.records(raw)[0]
    assert rec.type == R.J_DEPLOY and journal.check(rec) == 0
    assert (rec.payload[1], rec.payload[3]) == (2, 1)  # two copied, the list cut short
    assert rec.payload[R.DEPLOY_HEAD:] == b"+" + b"n" * (ROOM - 1)
