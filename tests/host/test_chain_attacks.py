"""The MAC chain against a review's attacks, on journals of the firmware's
round machine sealed as the board seals them (no board needed): a record
numbered far ahead (the verifier and the floor must not walk a key to it),
a key of an earlier provisioning copied and used after the table was
provisioned again, records cut from the front of a segment at a technician's
access record, and another table's journal passed off as this one's
(`--table-id`)."""

import json

import pytest
from attacker import join, seq, split, with_seq

from host_tools import chaincheck, keystore
from host_tools.cli import main
from roundkit import Rig, levels
from sicbo import chain as C
from sicbo import journal
from sicbo import records as R
from sicbo.meters import Meters, checkpoint


def payload(ident, previous=0):
    return ident.to_bytes(4, "little") + previous.to_bytes(4, "little")


class Board:
    """A table's journal as its board writes it: the round machine's records,
    each sealed by the chain in force (`recs`, bytes each)."""

    def __init__(self, store, prov, boot=True):
        self.store = store
        self.r = Rig()
        self.r.m.meters = Meters(self.r.m.table.channels, self.r.m.table)
        self.recs = []
        self.chain = None
        self.r.sink = self._sink
        self.take(prov, boot)

    def _sink(self, data):
        self.recs.extend(split(bytes(self.chain.seal(data, len(data)))))

    def _note(self, raw):
        self.r.m.take(raw, 0)
        self._sink(raw)

    def next_seq(self):
        return self.r.m.seq + 1

    def take(self, prov, boot=True):
        """The provisioning taken: its J_PROVISION (naming the chain it
        replaces) under its first key, then J_BOOT when a boot took it."""
        old = self.chain.ident if self.chain is not None else 0
        self.chain = C.Chain(self.store.provisioning_file(prov))
        assert self.next_seq() == prov.base
        self._note(journal.encode(R.J_PROVISION, self.next_seq(), self.r.m.round, 1, 0, None,
                                  payload(prov.id, old)))
        if boot:
            self.boot()

    def boot(self):
        self.r._drain(self.r.m.resume(self.r.now, None, levels()))

    def rounds(self, n):
        for k in range(n):
            self.r.round(1 + k % 6, 2, 3)

    def access(self, rtype=R.J_REPL, p=bytes((1, 0))):
        """A technician's record, after the journal's last (device/access.py)."""
        self._note(journal.encode(rtype, self.next_seq(), self.r.m.round, 1, 0, None,
                                  p.ljust(8, b"\0")))

    def fault(self, late):
        self._note(journal.encode(R.J_FAULT, self.next_seq(), self.r.m.round, 1, 0, None,
                                  bytes((3, 1, 0, late)).ljust(8, b"\0")))

    def rotate(self):
        self._sink(bytes(checkpoint(self.r.m, self.r.now, None)))

    def head(self):
        return C.head_text(self.chain.head, self.chain.link)


def store_of(tmp_path, tables=("T01",)):
    ks = keystore.KeyStore(str(tmp_path / "keys.json"))
    provs = [ks.new_chain(t, 1) for t in tables]
    ks.save()
    return ks, provs


def check(ks, recs, table=None, head=None):
    """chaincheck.verify on one segment of records."""
    more = {"table": table} if table is not None else {}
    return chaincheck.verify([("j", i, r) for i, r in enumerate(recs)], [], ks, head, **more)


def kinds(rep):
    return sorted({f["kind"] for f in rep.findings})


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    return code, out.out, out.err


def write(tmp_path, name, *segments):
    d = tmp_path / name
    d.mkdir()
    for i, recs in enumerate(segments):
        (d / ("j%08d.log" % (i + 1))).write_bytes(join(recs))
    return str(d)


class Steps:
    """Chain.evolve counted (one key step each); a walk past `limit` stops
    the test at once instead of running for hours."""

    def __init__(self, monkeypatch, limit):
        self.n = 0
        self.limit = limit
        evolve = C.Chain.evolve

        def counted(ch):
            self.n += 1
            if self.n > limit:
                raise AssertionError("more than %d key steps" % limit)
            evolve(ch)

        monkeypatch.setattr(C.Chain, "evolve", counted)


FAR_SEQS = (0x3FFEFFFF, 0xFFFFFFF0)  # under MAX_ID, above it; CRC mended, MAC kept


def test_a_record_numbered_far_ahead_is_named_without_walking_to_it(tmp_path, monkeypatch,
                                                                    capsys):
    ks, provs = store_of(tmp_path, ["T%02d" % i for i in range(1, 21)])
    b = Board(ks, provs[0])
    b.rounds(3)
    top = seq(b.recs[-1])
    limit = 2 * (top + 20 * (R.MAX_SKIP + 1))
    for far in FAR_SEQS:
        bad = with_seq(b.recs[5], far)
        path = write(tmp_path, "far%x" % far, b.recs + [bad])
        steps = Steps(monkeypatch, limit)
        code, out, _err = run(capsys, "journal", path, "--verify", ks.path, "--json")
        rep = json.loads(out)
        assert steps.n < limit
        assert code == 1 and [f["kind"] for f in rep["findings"]] == ["modified"], rep
        assert rep["findings"][0]["seq"] == far
        text = rep["findings"][0]["text"]
        assert ("beyond any the board writes" in text if far > R.MAX_ID else
                "never jump more than %d" % R.MAX_SKIP in text), text
        # Every other record verified: one chain, from the first record to the last.
        assert rep["chains"] == [{"id": provs[0].id, "table": "T01", "first_seq": 1,
                                  "last_seq": top, "records": len(b.recs),
                                  "provisioned_here": True}]


def test_the_floor_takes_a_record_numbered_far_ahead_in_a_few_steps(tmp_path, monkeypatch):
    ks, provs = store_of(tmp_path, ["T%02d" % i for i in range(1, 21)])
    b = Board(ks, provs[0])
    b.rounds(3)
    top = seq(b.recs[-1])
    steps = Steps(monkeypatch, 2 * (top + 20 * (R.MAX_SKIP + 1)))
    st = chaincheck.Stream(chaincheck.Book(ks), "T01")
    for r in b.recs[:-4]:
        assert st.take(r) == []
    for far in FAR_SEQS:
        out = st.take(with_seq(b.recs[5], far), gap=True)
        assert [k for k, _t in out] == ["modified"], out
    for r in b.recs[-4:]:  # and the table's records after it still verify
        assert st.take(r) == []
    assert steps.n < steps.limit and st.verified == len(b.recs) and st.failed == 2
    # A stream that has verified nothing of the table cannot tell: not verified.
    st = chaincheck.Stream(chaincheck.Book(ks), "T01")
    out = st.take(with_seq(b.recs[5], FAR_SEQS[0]))
    assert [k for k, _t in out] == ["unverifiable"] and "could be walked to" in out[0][1]
    assert steps.n < steps.limit


def test_a_journal_past_a_chains_reach_is_unverifiable_not_tampered(tmp_path, monkeypatch):
    # A table whose journal starts long after its chain's first key (rotation
    # deleted the rest). FAR made small here: walking 2**25 keys takes a minute.
    monkeypatch.setattr(chaincheck, "FAR", 1000)
    monkeypatch.setattr(chaincheck, "NEAR", 100)
    ks, (prov, _other) = store_of(tmp_path, ("T01", "T02"))
    b = Board(ks, prov)
    b.rounds(2)
    b.r.m.seq = 699  # the table went on for a while
    b.boot()
    b.rounds(2)
    kept = [r for r in b.recs if seq(r) >= 700]
    assert kept[0][R.OFF_TYPE] == R.J_BOOT
    # Without --table-id both tables' chains share the reach: not verified,
    # and said so (not called altered).
    rep = check(ks, kept)
    assert kinds(rep) == ["unverifiable"], rep.findings
    f = rep.findings[0]
    assert f["seq"] == 700 and f["count"] == len(kept)
    assert "could be walked to" in f["text"] and "--table-id" in f["text"]
    # The table named: its chain walks the whole reach, and the journal verifies.
    rep = check(ks, kept, table="T01")
    assert rep.verified, rep.findings
    assert any("rotated away" in n for n in rep.notes)
    # Further than that even for the table's own chain: not verified, said so.
    monkeypatch.setattr(chaincheck, "FAR", 500)
    rep = check(ks, kept, table="T01")
    assert kinds(rep) == ["unverifiable"] and "could be walked to" in rep.findings[0]["text"]


def reprovisioned(tmp_path):
    """T01 provisioned (A), its key file copied off the board when the table
    is provisioned again (B, at the next number): the genuine journal, the
    key file copied, B's J_PROVISION's index."""
    ks, (a,) = store_of(tmp_path)
    b = Board(ks, a)
    b.rounds(3)
    stolen = bytes(b.chain.pack())  # chain.key, read off the board
    bp = ks.new_chain("T01", b.next_seq())
    ks.save()
    b.take(bp)
    b.rounds(3)
    ib = [i for i, r in enumerate(b.recs) if r[R.OFF_TYPE] == R.J_PROVISION][1]
    return ks, a, bp, b, stolen, ib


def forged_round(key_file, n, rid, provision=None):
    """Records n.. signed with a copied key file: a J_PROVISION naming its
    chain (when provision is the chain it says it replaced), then a round
    paid 6 6 6."""
    stolen = C.Chain(key_file)
    out = []
    if provision is not None:
        raw = journal.encode(R.J_PROVISION, n, rid - 1, 1, 0, None,
                             payload(stolen.ident, provision))
        out.append(bytes(stolen.seal(raw, len(raw))))
        n += 1
    for i, (t, p) in enumerate(((R.J_ROUND, b"\0"), (R.J_OPEN, b""), (R.J_BELL, b""),
                                (R.J_COVER_OFF, b""), (R.J_RESULT, bytes((6, 6, 6, 0))),
                                (R.J_PAYOUT, b""))):
        raw = journal.encode(t, n + i, rid, 1, 0, None, p.ljust(8, b"\0"))
        out.append(bytes(stolen.seal(raw, len(raw))))
    return out


def test_a_key_of_an_earlier_provisioning_cannot_write_after_the_next(tmp_path):
    ks, a, bp, b, stolen, ib = reprovisioned(tmp_path)
    genuine = b.recs
    assert seq(genuine[ib]) == bp.base
    rep = check(ks, genuine)
    assert rep.verified, rep.findings
    assert [c["id"] for c in rep.chains] == [a.id, bp.id]
    rid = max(journal.u32(r, R.OFF_ROUND) for r in genuine) + 1
    # Kept up to two records after B's J_PROVISION, then A's chain "started
    # again" with A's copied key, and a round forged under it.
    keep = genuine[:ib + 3]
    forged = forged_round(stolen, seq(keep[-1]) + 1, rid, provision=bp.id)
    for recs in (keep + forged,  # a J_PROVISION of A after B's
                 genuine[ib:ib + 3] + forged,  # the journal from B's J_PROVISION on
                 keep + forged[1:]):  # no J_PROVISION: A's records after B's
        rep = check(ks, recs)
        assert kinds(rep) == ["replayed"], rep.findings
        assert {f["seq"] for f in rep.findings} == {seq(r) for r in forged if r in recs}
        for f in rep.findings:
            assert f["chain"] == a.id and "its key was copied" in f["text"]
            assert "after provisioning %d took over at seq %d" % (bp.id, bp.base) in f["text"]
    # The genuine journal from B's J_PROVISION on (what rotation leaves).
    rep = check(ks, genuine[ib:])
    assert rep.verified, rep.findings
    # Every record of B deleted, A's copied key signing on from B's first
    # number: the key store says B was made for it.
    rep = check(ks, genuine[:ib] + forged_round(stolen, bp.base, rid))
    assert kinds(rep) == ["replayed"], rep.findings
    assert all("signs nothing from seq %d on" % bp.base in f["text"] for f in rep.findings)


def test_a_provisioning_names_the_chain_it_replaced(tmp_path):
    # B replaced by C; A's copied key signs where B's records were: C's
    # J_PROVISION says it replaced B, not A.
    ks, a, bp, b, stolen, ib = reprovisioned(tmp_path)
    cp = ks.new_chain("T01", b.next_seq())
    ks.save()
    b.take(cp)
    b.rounds(1)
    ic = [i for i, r in enumerate(b.recs) if r[R.OFF_TYPE] == R.J_PROVISION][2]
    assert check(ks, b.recs).verified
    rid = journal.u32(b.recs[ib], R.OFF_ROUND) + 1
    forged = []
    while bp.base + len(forged) < seq(b.recs[ic]):
        n = bp.base + len(forged)
        forged += forged_round(stolen, n, rid + len(forged))[:seq(b.recs[ic]) - n]
    rep = check(ks, b.recs[:ib] + forged + b.recs[ic:])
    assert kinds(rep) == ["replayed"], rep.findings
    said = [f for f in rep.findings if "which replaced" in f["text"]]
    assert [f["seq"] for f in said] == [seq(b.recs[ic])], rep.findings


def test_the_floor_stops_a_key_of_an_earlier_provisioning(tmp_path):
    ks, a, bp, b, stolen, ib = reprovisioned(tmp_path)
    st = chaincheck.Stream(chaincheck.Book(ks), "T01")
    assert [st.take(r) for r in b.recs] == [[]] * len(b.recs)
    rid = max(journal.u32(r, R.OFF_ROUND) for r in b.recs) + 1
    keep = b.recs[:ib + 3]
    forged = forged_round(stolen, seq(keep[-1]) + 1, rid, provision=bp.id)
    for start in (0, ib):  # the floor had all of it, or from B's J_PROVISION on
        st = chaincheck.Stream(chaincheck.Book(ks), "T01")
        assert [st.take(r) for r in keep[start:]] == [[]] * len(keep[start:])
        for r in forged:
            out = st.take(r)
            assert [k for k, _t in out] == ["replayed"], out
            assert "its key was copied" in out[0][1]
    # B's J_PROVISION not delivered (a gap before B's records): B took over in it.
    for gap, said in ((True, []), (False, ["replayed"])):
        st = chaincheck.Stream(chaincheck.Book(ks), "T01")
        assert [st.take(r) for r in b.recs[:ib]] == [[]] * ib
        out = st.take(b.recs[ib + 2], gap=gap)
        assert [k for k, _t in out] == said, out


def test_records_cut_from_a_segment_at_an_access_record_are_deleted(tmp_path):
    ks, (a,) = store_of(tmp_path)
    b = Board(ks, a)
    b.rounds(2)
    b.access()  # mpremote: J_REPL after the segment's last record
    i = len(b.recs) - 1
    b.rounds(2)
    b.rotate()
    j = len(b.recs) - 1
    b.rounds(1)
    head = chaincheck.parse_head(b.head())
    assert check(ks, b.recs, head=head).verified
    rep = check(ks, b.recs[i:], head=head)
    assert kinds(rep) == ["deleted"], rep.findings
    f = rep.findings[0]
    assert f["seq"] == seq(b.recs[i]) and f["last_seq"] == seq(b.recs[i]) - 1
    assert "not rotated away" in f["text"]
    assert "a technician's access opens a segment of its own only after a torn one" in f["text"]
    # From the checkpoint rotation wrote: rotated away.
    rep = check(ks, b.recs[j:], head=head)
    assert rep.verified and rep.head_check == "ok", rep.findings
    assert any("rotated away" in n for n in rep.notes)


def test_a_boot_s_first_records_start_a_segment(tmp_path):
    ks, (a,) = store_of(tmp_path)
    b = Board(ks, a)
    b.rounds(1)
    k = len(b.recs)
    b.fault(late=1)  # the failed boots a boot journals before its J_BOOT
    b.fault(late=1)
    b.boot()
    b.rounds(1)
    f = len(b.recs)
    b.fault(late=0)  # a fault of the running table
    b.rounds(1)
    b.fault(late=1)  # diag's clear_fault: late faults, then its own record
    b.access(R.J_DIAG, bytes((1,)))
    n = len(b.recs)
    cp = ks.new_chain("T01", b.next_seq())
    ks.save()
    b.take(cp)  # taken at a boot: J_PROVISION, then J_BOOT
    b.rounds(1)
    m = len(b.recs)
    dp = ks.new_chain("T01", b.next_seq())
    ks.save()
    b.take(dp, boot=False)  # taken by a technician's record (device/access.py)
    b.access(R.J_CLOCK)
    assert check(ks, b.recs).verified
    for i in (k, k + 1, n):
        rep = check(ks, b.recs[i:])
        assert rep.verified, (i, rep.findings)
    for i in (f, n - 2, m):
        assert b.recs[i][R.OFF_TYPE] in (R.J_FAULT, R.J_PROVISION)
        rep = check(ks, b.recs[i:])
        assert kinds(rep) == ["deleted"], (i, rep.findings)


def test_verify_says_which_table_and_checks_it_when_told(tmp_path, capsys):
    ks, (p1, p2) = store_of(tmp_path, ("T01", "T02"))
    one = Board(ks, p1)
    one.rounds(4)
    two = Board(ks, p2)
    two.rounds(6)
    swapped = write(tmp_path, "swapped", two.recs)  # T01's journal folder holds T02's
    code, out, _err = run(capsys, "journal", swapped, "--verify", ks.path)
    assert code == 0 and "result:  VERIFIED" in out
    assert ("table:   T02, whose chains verify most of its records; --table-id T02 checks "
            "that it is the table expected") in out
    code, out, _err = run(capsys, "journal", swapped, "--verify", ks.path, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["table"] == "T02" and not rep["table_given"]
    code, out, _err = run(capsys, "journal", swapped, "--verify", ks.path, "--table-id", "T01")
    assert code == 1 and "NOT VERIFIED" in out and "table:   T01 (--table-id)" in out
    assert "no record of the journal verifies under a chain of table T01" in out
    code, out, _err = run(capsys, "journal", swapped, "--verify", ks.path, "--table-id", "T01",
                          "--json")
    rep = json.loads(out)
    assert code == 1 and [f["kind"] for f in rep["findings"]] == ["replayed"]
    assert rep["table"] == "T01" and rep["table_given"]
    code, out, _err = run(capsys, "journal", swapped, "--verify", ks.path, "--table-id", "T02",
                          "--json")
    assert code == 0 and json.loads(out)["verified"]
    # T01's journal, its tail T02's: with --table-id T02, T01's records are the replays.
    spliced = write(tmp_path, "spliced", one.recs[:10], two.recs[10:])
    code, out, _err = run(capsys, "journal", spliced, "--verify", ks.path, "--table-id", "T01",
                          "--json")
    rep = json.loads(out)
    assert code == 1 and {f["kind"] for f in rep["findings"]} == {"replayed"}
    assert {f["seq"] for f in rep["findings"]} == {seq(r) for r in two.recs[10:]}
    assert all(f["table"] == "T02" for f in rep["findings"])
    # Refused in one line: a table the key store has no chain of, --table-id alone.
    code, _out, err = run(capsys, "journal", swapped, "--verify", ks.path, "--table-id", "T09")
    assert code == 2 and "no chain of table T09" in err
    code, _out, err = run(capsys, "journal", swapped, "--table-id", "T01")
    assert code == 2 and "--verify" in err


@pytest.mark.parametrize("table", [None, "T01"])
def test_the_untouched_journal_verifies_either_way(tmp_path, table):
    ks, (p1, _p2) = store_of(tmp_path, ("T01", "T02"))
    b = Board(ks, p1)
    b.rounds(3)
    rep = check(ks, b.recs, table=table)
    assert rep.verified and rep.table == "T01" and rep.table_given == (table is not None)
