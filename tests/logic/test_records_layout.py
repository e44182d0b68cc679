# mprun-heap: controller
# The record declarations (sicbo/records.py) as a layout: no two fields of a
# record type share a byte, each lies within the payload every record of its
# type has; and a fault record (J_FAULT) as the controller writes it reads
# back, field by declared field, as it was written: by its declaration, on
# the board's line (sicbo.logtext) and by the host's decoder (`sicbo journal
# --json`, which compliance staff read a pulled journal with). A field
# declared at another's offset would show one number under two names. And
# the most lamp channels a table may have is what a sealed checkpoint holds.
import sys

from appkit import Table

from sicbo import events as E
from sicbo import logtext
from sicbo import records as R

CPYTHON = sys.implementation.name != "micropython"


def _declared(code):
    for decl in R.RECORD_TYPES:
        if decl[0] == code:
            return decl
    raise AssertionError("record type %d is not declared" % code)


def test_no_two_fields_of_a_record_type_share_a_byte():
    for code, name, fields, *_rest in R.RECORD_TYPES:
        room = R.VARIABLE.get(code, R.PAYLOAD)  # the bytes every record of the type has
        owner = {}
        for fname, off, size, kind, _lo, _hi, _names in fields:
            if kind == "text":
                # The rest of a payload that is not fixed, after its head.
                assert off == room and size == 0, (name, fname)
                continue
            assert size > 0 and 0 <= off and off + size <= room, (name, fname, off, size)
            for i in range(off, off + size):
                assert i not in owner, (name, fname, owner.get(i), i)
                owner[i] = fname


def test_the_channel_limit_is_the_most_a_sealed_checkpoint_holds():
    # A J_METERS checkpoint of MAX_CHANNELS channels, with its configuration
    # and chain tails and its MAC, fits a record; one channel more would not.
    def sealed(channels):
        return (R.HEADER + R.METERS_HEAD + 4 * channels + R.METERS_CONFIG + R.METERS_CHAIN
                + R.MAC_LEN + R.CRC_LEN)

    assert sealed(R.MAX_CHANNELS) <= R.MAX_LEN < sealed(R.MAX_CHANNELS + 1), (
        R.MAX_CHANNELS, sealed(R.MAX_CHANNELS))


def test_a_fault_record_reads_back_as_the_controller_wrote_it():
    t = Table()
    # Every field a different number: one read at another's offset shows.
    t.ctl.journal_fault(E.F_TASK, E.K_OS, 9, 1)
    rec = t.journal()[-1]
    assert rec.type == R.J_FAULT, rec
    got = {}
    for fname, off, size, _kind, _lo, _hi, _names in _declared(R.J_FAULT)[2]:
        assert size == 1, fname
        got[fname] = rec.p(off)
    assert got == {"stage": E.F_TASK, "kind": E.K_OS, "detail": 9, "late": 1}, got
    line = logtext.journal_line(rec)
    assert "in stage %d" % E.F_TASK in line and ", detail 9" in line, line
    assert "journaled late" in line, line
    t.close()
    if CPYTHON:
        import contextlib
        import io
        import json

        from host_tools.cli import main

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["journal", t.folder, "--json"]) == 0
        d = json.loads(out.getvalue())["records_listed"][-1]
        assert d["type"] == "fault" and d["seq"] == rec.seq, d
        assert (d["stage_code"], d["kind_code"], d["detail"], d["late"]) == (
            E.F_TASK, E.K_OS, 9, 1), d
        assert d["damage"] is None, d
