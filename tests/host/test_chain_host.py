"""The chain's host side without a board: sicbo.chain against CPython's own
hmac and hashlib, the key store's file (format, permissions, refusals), the
verifier on journals of the firmware's round machine (rotation: a journal
that starts after its J_PROVISION was deleted, from a checkpoint's head), the
floor verifying what it stores and keeping heads, deploy's refusals."""

import hashlib
import hmac
import json
import os
import random
import stat

import pytest
from attacker import join, poke, seq, split

from host_tools import chaincheck, keystore
from host_tools.cli import UsageError, main
from host_tools.floor import ingest, store
from host_tools.rules import load_table
from sicbo import chain as C
from sicbo import journal
from sicbo import records as R
from sicbo.meters import Meters, checkpoint

_CFG, TABLE = load_table(None)


def test_mac_and_key_steps_against_cpython():
    rng = random.Random(7)
    for _ in range(50):
        key = bytes(rng.randrange(256) for _ in range(32))
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 700)))
        s = rng.randrange(1, 1 << 32)
        c = C.Chain(C.key_file(1, 1, s, 0, key, bytes(16)))
        assert bytes(c.hmac(data)) == hmac.new(key, data, "sha256").digest()[:R.MAC_LEN]
        c.evolve()
        step = hashlib.sha256(b"sicbo-key" + s.to_bytes(4, "little") + key).digest()
        assert bytes(c.key) == step and c.seq == s + 1


def test_the_key_store_is_the_owners_alone(tmp_path):
    path = str(tmp_path / "keys.json")
    ks = keystore.load(path, create=True)
    a = ks.new_chain("T01", 1)
    b = ks.new_chain("T02", 500)
    ks.save()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    doc = json.load(open(path))
    assert doc["format"] == "sicbo-chain-keys" and doc["version"] == 1
    assert [c["table"] for c in doc["chains"]] == ["T01", "T02"]
    again = keystore.load(path)
    assert again.get(a.id).key == a.key and again.get(b.id).base == 500 and a.id != b.id
    assert len(a.key) == 32 and a.key != b.key
    prov = ks.provisioning_file(b)
    assert C.parse(prov) and C.Chain(prov).seq == 500 and C.Chain(prov).first == 0
    os.chmod(path, 0o640)
    with pytest.raises(UsageError, match="chmod 600"):
        keystore.load(path)
    os.chmod(path, 0o600)
    for bad, why in (({"format": "x"}, "not a sicbo key store"),
                     ({"format": "sicbo-chain-keys", "version": 9, "chains": []}, "version"),
                     ({"format": "sicbo-chain-keys", "version": 1,
                       "chains": [{"id": 1, "table": "T", "base": 1, "key": "zz"}]}, "hex"),
                     ({"format": "sicbo-chain-keys", "version": 1,
                       "chains": [{"id": 1, "table": "T", "base": 1, "key": "00" * 32},
                                  {"id": 1, "table": "T", "base": 1, "key": "00" * 32}]},
                      "twice")):
        with open(path, "w") as f:
            json.dump(bad, f)
        with pytest.raises(UsageError, match=why):
            keystore.load(path)
    with pytest.raises(UsageError, match="table"):
        ks.new_chain("no spaces", 1)


def _journal(rounds, rotate_at=None, chain=None):
    """A journal the firmware's round machine writes, sealed by a chain as the
    store seals it; rotate_at: checkpoints (as rotation writes them) after
    these rounds. Returns (records as bytes, chain)."""
    from roundkit import Rig

    r = Rig()
    r.m.meters = Meters(r.m.table.channels, r.m.table)
    out = []
    first = journal.encode(R.J_PROVISION, 1, 0, 0, 0, None,
                           chain_payload(chain.ident)) if chain.first == 0 else None
    if first is not None:
        r.m.take(first, 0)
        out.append(bytes(chain.seal(first, len(first))))

    def sink(data):
        out.extend(split(bytes(chain.seal(data, len(data)))))

    r.sink = sink
    for k in range(rounds):
        r.round(1 + k % 6, 2, 3)
        if rotate_at and k in rotate_at:
            cp = bytes(checkpoint(r.m, r.now, None))
            sink(cp)
    return out, chain


def chain_payload(ident, previous=0):
    return ident.to_bytes(4, "little") + previous.to_bytes(4, "little")


def _store_with(tmp_path, table="T01"):
    ks = keystore.KeyStore(str(tmp_path / "keys.json"))
    prov = ks.new_chain(table, 1)
    ks.save()
    return ks, prov


def test_a_journal_that_rotation_cut_verifies_from_a_checkpoint(tmp_path):
    ks, prov = _store_with(tmp_path)
    recs, ch = _journal(8, rotate_at=(3, 6), chain=C.Chain(ks.provisioning_file(prov)))
    cps = [i for i, r in enumerate(recs) if r[1] == R.J_METERS]
    assert len(cps) == 2
    # The oldest segments deleted: the journal starts with the checkpoint
    # that heads its oldest segment (rotation deletes whole segments).
    kept = recs[cps[0]:]
    rep = chaincheck.verify([("j", i, r) for i, r in enumerate(kept)], [], ks,
                            (ch.head, bytes(ch.link)))
    assert rep.verified and rep.head_check == "ok", rep.findings
    assert rep.head == (ch.head, bytes(ch.link))
    assert any("rotated away" in n for n in rep.notes)
    # A journal that starts a few records before a checkpoint, in the middle
    # of a segment, had records deleted from its front: named, though every
    # record it holds verifies.
    kept = recs[cps[0] - 5:]
    rep = chaincheck.verify([("j", i, r) for i, r in enumerate(kept)], [], ks,
                            (ch.head, bytes(ch.link)))
    assert [f["kind"] for f in rep.findings] == ["deleted"], rep.findings
    assert rep.head_check == "ok" and not rep.verified
    # A record before the first checkpoint altered is still named.
    kept[1] = poke(kept[1], R.HEADER + 1, 7)
    rep = chaincheck.verify([("j", i, r) for i, r in enumerate(kept)], [], ks)
    assert [f["kind"] for f in rep.findings] == ["modified", "deleted"]
    assert rep.findings[0]["seq"] == seq(kept[1])


def test_a_checkpoint_that_its_records_do_not_lead_to_is_a_rollback(tmp_path):
    # Records before a checkpoint signed again by someone who read a key off
    # the board: each verifies, the chain hash the checkpoint names does not.
    ks, prov = _store_with(tmp_path)
    recs, _ch = _journal(5, rotate_at=(3,), chain=C.Chain(ks.provisioning_file(prov)))
    cp = [i for i, r in enumerate(recs) if r[1] == R.J_METERS][0]
    k = cp - 2
    s = seq(recs[k])
    stolen = bytes(chaincheck.Keys(prov).at(s).key)  # the key of seq s, read off the board
    c = C.Chain(C.key_file(prov.id, 1, s, 0, stolen, bytes(16)))
    plain = bytearray(recs[k][:R.REC_LEN - 4] + bytes(4))
    plain[R.OFF_LENGTH] = R.REC_LEN
    plain[R.OFF_FLAGS] &= ~R.FLAG_MAC
    plain[R.HEADER] = 6 if plain[R.HEADER] != 6 else 5  # the record's first payload byte
    journal.seal(plain, len(plain))
    recs[k] = bytes(c.seal(bytes(plain), len(plain)))
    assert chaincheck.Keys(prov).verifies(recs[k])
    rep = chaincheck.verify([("j", i, r) for i, r in enumerate(recs)], [], ks)
    assert [f["kind"] for f in rep.findings] == ["rollback"], rep.findings
    assert rep.findings[0]["seq"] == seq(recs[cp])


class Floor:
    def __init__(self, path, keys):
        self.conn = store.open_rw(str(path))
        self.floor = ingest.Floor("s1", TABLE, lookup=self._lookup, keys=keys)
        self.now = 1000.0

    def _lookup(self, tid, s):
        row = self.conn.execute("SELECT raw FROM records WHERE table_id=? AND seq=?",
                                (tid, s)).fetchone()
        return bytes(row[0]) if row else None

    def send(self, tid, payload, kind="journal"):
        self.now += 1
        out = ingest.Batch()
        self.floor.message("sicbo/s1/%s/%s" % (tid, kind), payload, self.now, out)
        self.floor.finish(out)
        store.write(self.conn, out, self.floor.feeds)
        # the chain's verdicts; a provisioning's record is also listed as
        # technician access (tests/host/test_access_floor.py)
        return [(a[4], a[6]) for a in out.alarms if a[4] != "access"]


def test_the_floor_verifies_each_record_as_it_stores_it(tmp_path):
    ks, prov = _store_with(tmp_path)
    other = ks.new_chain("T02", 1)
    recs, ch = _journal(3, chain=C.Chain(ks.provisioning_file(prov)))
    theirs, _ = _journal(3, chain=C.Chain(ks.provisioning_file(other)))
    fl = Floor(tmp_path / "f.db", ks)
    assert fl.send("T01", join(recs[:10])) == []
    bad = poke(recs[10], R.HEADER, 5 if recs[10][R.HEADER] != 5 else 4)
    alarms = fl.send("T01", bad)
    assert [k for k, _t in alarms] == ["modified"], alarms
    assert [k for k, _t in fl.send("T01", theirs[11])] == ["replayed"]
    assert fl.send("T01", join(recs[12:])) == []
    # What the floor stored is not what the table's chain took: its head says so.
    head = C.head_text(ch.head, ch.link).encode()
    assert [k for k, _t in fl.send("T01", head, "head")] == ["rollback"]
    # The table's heads against what a floor stored whole: the chain hash of
    # it, never lower, never another hash for the same number.
    fl = Floor(tmp_path / "g.db", ks)
    assert fl.send("T01", join(recs)) == []
    assert fl.send("T01", head, "head") == []
    s = fl.floor.feeds["T01"]
    assert s.head_seq == ch.head and s.chain.head(ch.head) == bytes(ch.link)
    lower = C.head_text(ch.head - 1, ch.link).encode()
    assert [k for k, _t in fl.send("T01", lower, "head")] == ["rollback"]
    other_hash = C.head_text(ch.head, bytes(16)).encode()
    assert [k for k, _t in fl.send("T01", other_hash, "head")] == ["rollback"]
    ahead = C.head_text(ch.head + 5, bytes(16)).encode()
    assert fl.send("T01", ahead, "head") == []  # not stored yet: checked when it comes
    assert [k for k, _t in fl.send("T01", b"12:zz", "head")] == ["rejected"]
    # A restart rebuilds the chain from the store, and the highest head.
    fl2 = Floor(tmp_path / "g.db", ks)
    out, _differ = fl2.floor.reload(fl2.conn, fl2.now)
    f2 = fl2.floor.feeds["T01"]
    assert f2.head_seq == ch.head + 5 and f2.chain.head(ch.head) == bytes(ch.link)
    assert [k for k, _t in fl2.send("T01", lower, "head")] == ["rollback"]
    rows = fl.conn.execute("SELECT seq, hash FROM heads").fetchall()
    assert rows == [(ch.head + 5, "00" * 16)]


def test_the_floor_without_keys_still_keeps_heads(tmp_path):
    fl = Floor(tmp_path / "f.db", None)
    assert fl.send("T01", b"5:" + b"ab" * 16, "head") == []
    assert [k for k, _t in fl.send("T01", b"4:" + b"ab" * 16, "head")] == ["rollback"]


def test_deploy_refuses_a_provisioning_without_a_table_id(tmp_path, capsys):
    from host_tools import REPO

    board = os.path.join(REPO, "board_config", "boards", "virtual.json")
    code = main(["deploy", "--port", str(tmp_path / "tty"), "--board", board, "--table-id", "T1"])
    assert code == 2 and "--provision" in capsys.readouterr().err
