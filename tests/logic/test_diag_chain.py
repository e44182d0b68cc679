# mprun-heap: controller
# diag.status's chain line in each state of the MAC chain (sicbo/chain.py):
# whether the records are authenticated, the head to take off the table
# (`sicbo journal --verify KEYSTORE --head SEQ:HASH`), a damaged key file, a
# provisioning waiting for the next boot; and diag's counts in words (the
# damaged records, the failed boots), a refused board file through sensors.
from appkit import Table, fresh_folder, reboot
from chainkit import IDENT, KEY0, provision, provisioned_table, raw_records, u32
from diagkit import _out

import diag
from journal_store import KEY_NAME
from sicbo import chain as C
from sicbo import records as R


def _status(t, name="chain"):
    """What diag.status() says on its `name` line (the chain's by default)."""
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.status()
    lines = [x for x in _out if x.startswith(name + " ")]
    assert len(lines) == 1, _out
    return lines[0][len(name) + 1:].strip()


def _head(folder):
    """(seq, chain hash) of the last record, the hash folded from zeros at
    the chain's first record as sicbo/chain.py's doc defines it, written
    apart from it."""
    import hashlib

    link = bytes(R.CHAIN_LEN)
    seq = 0
    for raw in raw_records(folder):
        link = hashlib.sha256(link + bytes(raw[:len(raw) - R.CRC_LEN])).digest()[:R.CHAIN_LEN]
        seq = u32(raw, R.OFF_SEQ)
    return seq, link


def test_a_table_without_a_chain_says_its_records_are_not_authenticated():
    t = Table()
    t.play(1, 2, 3)
    t.close()
    assert _status(t) == "none: records not authenticated (sicbo deploy --provision)"
    provision(t.folder, base=t.m.seq + 1)
    assert _status(t) == ("none: records not authenticated (sicbo deploy --provision); "
                          "a provisioning waits for the next boot")


def test_a_provisioned_table_shows_its_head_the_chain_hash_of_its_last_record():
    t = provisioned_table(2, 2, 5)
    f = t.folder
    seq, mac = _head(f)
    line = _status(t)
    assert line == "provisioning %d since seq 1, head %s" % (IDENT, C.head_text(seq, mac)), (
        line, seq)
    t = reboot(t)  # the head moves with the journal
    t.play(6, 6, 6)
    t.close()
    seq2, mac2 = _head(f)
    assert seq2 > seq and _status(t).endswith("head " + C.head_text(seq2, mac2))


def test_a_key_file_taken_before_its_first_record_is_said_so():
    t = Table()
    t.play(1, 1, 4)
    t.close()
    # As a cut between the key file's write and its J_PROVISION leaves it.
    with open(t.folder + "/" + KEY_NAME, "wb") as g:
        g.write(C.key_file(0x42, 0, t.m.seq + 1, 0, KEY0, bytes(R.CHAIN_LEN)))
    assert _status(t) == "provisioning 66 taken, its first record not yet written"


def test_a_damaged_key_file_is_said_in_capitals():
    f = fresh_folder()
    provision(f)
    t = Table(folder=f)
    t.close()
    with open(f + "/" + KEY_NAME, "wb") as g:
        g.write(b"not a key file")
    assert _status(t) == "KEY FILE DAMAGED: records not authenticated"


def _append(t, rtype, payload):
    """A well-formed record of rtype after the journal's last one (the next
    sequence number, the same round), as another writer would add it."""
    import os

    from sicbo import journal as jfmt

    last = raw_records(t.folder)[-1]
    names = sorted(n for n in os.listdir(t.folder) if n.endswith(".log"))
    with open(t.folder + "/" + names[-1], "ab") as g:
        g.write(jfmt.encode(rtype, u32(last, R.OFF_SEQ) + 1, u32(last, R.OFF_ROUND), 1, 0, 0,
                            payload))


def _append_impossible_result(t):
    # A result record while the round is already paid: one record the replay
    # refuses, nothing else.
    _append(t, R.J_RESULT, bytes([3, 4, 5]))


def test_diag_journal_counts_damaged_records_in_words():
    t = Table()
    t.play(3, 4, 5)
    t.close()
    _append_impossible_result(t)
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.journal(50)
    assert "1 damaged record in the journal: see sicbo journal --json" in _out, "\n".join(_out)
    assert [x for x in _out if "DAMAGED" in x], _out


def test_a_refused_board_file_is_said_by_sensors_not_a_failure():
    import json

    from appkit import board_dict

    t = Table()
    t.close()
    bad = board_dict()
    bad["inputs"]["cover"]["pin"] = 99  # no such GPIO on an ESP32
    with open(t.folder + "/board.json", "w") as g:
        g.write(json.dumps(bad))
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.sensors()
    assert len(_out) == 1 and _out[0].startswith("sensors: not available: "), _out
    assert "cover" in _out[0] and "failed" not in _out[0], _out


def test_status_counts_failed_boots_in_words():
    import faults

    t = Table()
    t.close()
    path = t.folder + "/fault.txt"
    entry = [3, 1, 0, 1, "stage 3: MemoryError memory allocation failed"]
    for n, words in ((1, "1 failed boot in a row"), (2, "2 failed boots in a row")):
        faults.write_file(n, [entry] * n, path)
        diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder, path)
        del _out[:]
        diag.status()
        lines = [x for x in _out if x.startswith("faults ")]
        assert len(lines) == 1 and lines[0].split(None, 1)[1] == words, _out


def test_status_names_the_damaged_records_on_its_alarms_line():
    t = Table()
    t.play(3, 4, 5)
    t.close()
    assert _status(t, "alarms") == "none"
    _append_impossible_result(t)
    assert _status(t, "alarms") == "1 damaged record"
    _append_impossible_result(t)
    assert _status(t, "alarms") == "2 damaged records"


def test_diag_journal_names_a_record_of_an_unknown_type_as_such():
    # Damage code 1, the first the table names: a well-formed record of a type
    # this firmware does not know (written by a newer one, or forged).
    t = Table()
    t.play(3, 4, 5)
    t.close()
    _append(t, R.J_LAST + 1, bytes(8))
    diag.setup(t.folder + "/board.json", t.folder + "/table.json", t.folder)
    del _out[:]
    diag.journal(5)
    bad = [x for x in _out if "DAMAGED" in x]
    assert len(bad) == 1 and bad[0].endswith(
        "DAMAGED (unknown record type): type %d, not used" % (R.J_LAST + 1)), _out
