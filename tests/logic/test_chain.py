# The journal's MAC chain (sicbo/chain.py) and the store's part of it
# (journal_store.py: sealing at append, the key file, catching up at boot).
# The MACs are checked by a textbook HMAC-SHA256 and key steps written apart
# from sicbo.chain (chainkit.py), on the bytes of the journal's files.
import gc
import hashlib
import os

from chainkit import (
    IDENT,
    KEY0,
    check_journal,
    hmac256,
    key_of,
    mac_ok,
    raw_records,
    started_key_file,
    u32,
)

from journal_store import KEY_NAME, JournalStore
from roundkit import Rig, rmdir, tmpdir
from sicbo import chain as C
from sicbo import journal
from sicbo import records as R
from sicbo.meters import Meters, checkpoint
from sicbo.roundstate import RoundState

_BUF = bytearray(2048)  # the boots' read buffer, made before the heap fragments


def test_hmac_is_hmac_sha256():
    c = C.Chain(C.key_file(1, 1, 5, 0, KEY0, bytes(16)))
    for data in (b"", b"abc", bytes(range(200))):
        assert bytes(c.hmac(data)) == hmac256(KEY0, data)[:R.MAC_LEN]
    # A known answer: CPython's hmac.new(bytes(range(32)), b"sicbo", "sha256").
    assert bytes(c.hmac(b"sicbo")) == bytes.fromhex("3925df45315943ec")


def test_the_key_moves_one_way_indexed_by_the_sequence_number():
    c = C.Chain(C.key_file(1, 1, 5, 0, KEY0, bytes(16)))
    c.evolve()
    assert c.seq == 6 and bytes(c.key) == key_of(6, KEY0, 5)
    c.to(40)
    assert c.seq == 40 and bytes(c.key) == key_of(40, KEY0, 5)
    assert bytes(c.key) != key_of(40, KEY0, 6)  # the number is in the step


def test_a_sealed_record_keeps_its_payload_and_its_checks():
    c = C.Chain(C.key_file(IDENT, 1, 7, 0, key_of(7), bytes(16)))
    plain = journal.encode(R.J_RESULT, 7, 3, 2, 12345, 820000000, bytes([1, 2, 3, 0, 0, 0, 0, 0]))
    sealed = bytes(c.seal(plain, len(plain)))
    assert len(sealed) == R.REC_LEN + R.MAC_LEN
    assert sealed[R.OFF_LENGTH] == R.REC_LEN + R.MAC_LEN
    assert sealed[R.OFF_FLAGS] == R.FLAG_WALL | R.FLAG_MAC
    assert journal.valid_at(sealed, 0, len(sealed)) == len(sealed)
    rec = journal.records(sealed)[0]
    assert rec.payload == plain[R.HEADER:R.HEADER + R.PAYLOAD] and rec.dice() == (1, 2, 3)
    assert journal.check(rec) == 0 and rec.mac == sealed[R.REC_LEN - 4:R.REC_LEN + 4]
    assert mac_ok(sealed)
    assert c.seq == 8 and c.head == 7
    # The chain hash: SHA-256 of the one before (zeros), the record and its MAC.
    assert bytes(c.link) == hashlib.sha256(bytes(16) + sealed[:-4]).digest()[:16]
    # The replay takes a sealed record as the plain one.
    a = RoundState()
    b = RoundState()
    a.feed(plain)
    b.feed(sealed)
    assert (a.seq, a.round, a.damaged, b.damaged) == (b.seq, b.round, 0, 0)


def test_a_number_whose_key_is_gone_is_written_without_a_mac():
    c = C.Chain(C.key_file(IDENT, 1, 9, 0, key_of(9), bytes(16)))
    plain = journal.encode(R.J_BELL, 8, 3, 2, 1, None, bytes(8))
    out = bytes(c.seal(plain, len(plain)))
    assert out == plain and c.unsigned == 1 and c.seq == 9


def test_a_journal_of_plain_and_sealed_records_replays_alike():
    r = Rig()
    for k in range(3):
        r.round(1 + k, 2, 3)
    plain = bytes(r.journal)
    c = C.Chain(C.key_file(IDENT, 1, 1, 0, KEY0, bytes(16)))
    sealed = bytes(c.seal(plain, len(plain)))
    a = RoundState()
    b = RoundState()
    a.meters = Meters(r.m.table.channels, r.m.table)
    b.meters = Meters(r.m.table.channels, r.m.table)
    a.feed(plain)
    b.feed(sealed)
    assert (b.seq, b.round, b.state, b.damaged) == (a.seq, a.round, a.state, 0)
    assert b.meters.counts == a.meters.counts and b.meters.wins == a.meters.wins
    recs = journal.records(sealed)
    assert len(recs) == len(journal.records(plain)) and all(x.mac is not None for x in recs)


def test_a_checkpoint_names_the_head_before_it_and_old_checkpoints_still_load():
    r = Rig()
    r.round(1, 2, 3)
    r.m.meters = Meters(r.m.table.channels, r.m.table)
    c = C.Chain(C.key_file(IDENT, 1, 1, 0, KEY0, bytes(16)))
    c.seal(bytes(r.journal), len(r.journal))
    head, link = c.head, bytes(c.link)
    cp = bytes(checkpoint(r.m, r.now, None))
    sealed = bytes(c.seal(cp, len(cp)))
    assert mac_ok(sealed)
    tail = journal.records(sealed)[0].payload[-R.METERS_CHAIN:]
    assert u32(tail, R.H_SEQ) == head == r.m.seq - 1
    assert tail[R.H_HASH:R.H_HASH + R.CHAIN_LEN] == link
    # Without the chain's tail (a checkpoint of an older firmware): the same meters.
    old = bytearray(cp[:-R.CRC_LEN - R.METERS_CHAIN] + bytes(R.CRC_LEN))
    old[R.OFF_LENGTH] = len(old)
    journal.seal(old, len(old))
    for data in (bytes(old), sealed):
        m = Meters(r.m.table.channels, r.m.table)
        rs = RoundState()
        rs.meters = m
        rs.feed(data)
        assert rs.damaged == 0 and m.checkpoints == 1 and m.counts == r.m.meters.counts


def test_the_store_seals_every_append_and_keeps_the_key_file_after_it():
    d = tmpdir("chain")
    started_key_file(d)
    st = JournalStore(d)
    assert st.chain is None  # read when first needed: after a boot's replay
    assert st.open_chain() is st.chain and st.chain.seq == 1
    rs = RoundState()
    st.boot(rs.feed)
    r = Rig()
    r.sink = st.append
    r.round(1, 2, 3)
    r.round(4, 5, 6)
    st.close()
    seqs = check_journal(d)
    assert seqs[0] == 1 and seqs[-1] == r.m.seq
    with open(d + "/" + KEY_NAME, "rb") as f:
        kf = f.read()
    assert C.parse(kf)
    ch = C.Chain(kf)
    assert ch.seq == r.m.seq + 1 and ch.head == r.m.seq
    assert bytes(ch.key) == key_of(ch.seq)
    # No key that signed a record is left: the file's is for the next number.
    for s in seqs:
        assert key_of(s) != bytes(ch.key)
    assert st.key_saves == st.appends
    assert st.head() == C.head_text(r.m.seq, ch.link)
    rmdir(d)


def _files(folder):
    out = {}
    for name in os.listdir(folder):
        with open(folder + "/" + name, "rb") as f:
            out[name] = f.read()
    return out


def _put(folder, files):
    for name in os.listdir(folder):
        os.remove(folder + "/" + name)
    for name in files:
        with open(folder + "/" + name, "wb") as f:
            f.write(files[name])


def _boot_and_write(folder):
    """A boot on the folder as it is: replay, the chain caught up, one record
    more; the journal then verifies."""
    gc.collect()
    st = JournalStore(folder)
    rs = RoundState()
    st.boot(rs.feed, _BUF)
    st.chain_next(rs, _BUF)
    before = rs.seq
    assert st.chain.seq == rs.seq + 1  # never a number already used
    st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    st.close()
    seqs = check_journal(folder)
    assert seqs[-1] == before + 1
    return seqs


def test_a_power_cut_at_any_point_of_an_append_leaves_a_verifiable_journal():
    d = tmpdir("chaincut")
    started_key_file(d)
    st = JournalStore(d)
    st.boot(RoundState().feed)
    r = Rig()
    states = []

    def sink(data):
        # Only the last three appends are cut below: older snapshots of the
        # files are let go, not held (a board's heap runs this too).
        if len(states) == 3:
            states.pop(0)
        states.append((_files(d), len(data)))
        st.append(data)
        states[-1] = states[-1] + (_files(d),)

    r.sink = sink
    r.round(1, 2, 3)
    r.round(6, 6, 6)
    st.close()
    seg = [n for n in states[-1][2] if n.endswith(".log")][-1]
    w = tmpdir("chaincut-w")
    cuts = 0
    for before, n, after in states[-3:]:  # the last appends: one of several records
        old = before.get(seg, b"")
        new = after[seg]
        assert len(new) > len(old) + n  # each of its records grew by its MAC
        for k in range(len(old), len(new)):  # cut inside the journal's write
            files = dict(before)
            files[seg] = new[:k]
            _put(w, files)
            _boot_and_write(w)
            cuts += 1
        key = after[KEY_NAME]
        for k in range(0, len(key) + 1, 5):  # the key file's temporary, cut anywhere
            files = dict(before)
            files[seg] = new
            files["chain.tmp"] = key[:k]
            _put(w, files)
            _boot_and_write(w)
            cuts += 1
        _put(w, after)  # renamed
        _boot_and_write(w)
    assert cuts > 100
    rmdir(w)
    rmdir(d)


def test_a_key_file_ahead_of_the_journal_never_signs_a_number_again():
    # Records lost after they were flushed (the key file was written after
    # them): the next record gets a number past the chain's.
    d = tmpdir("chainahead")
    started_key_file(d)
    st = JournalStore(d)
    st.boot(RoundState().feed)
    r = Rig()
    r.sink = st.append
    r.round(1, 2, 3)
    st.close()
    signed = r.m.seq
    seg = sorted(n for n in os.listdir(d) if n.endswith(".log"))[-1]
    with open(d + "/" + seg, "rb") as f:
        data = f.read()
    with open(d + "/" + seg, "wb") as f:
        f.write(data[:len(data) - 3 * (R.REC_LEN + R.MAC_LEN)])  # three records gone
    st = JournalStore(d)
    rs = RoundState()
    st.boot(rs.feed)
    assert rs.seq == signed - 3
    st.chain_next(rs)
    assert rs.seq == signed
    st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    st.close()
    recs = raw_records(d)
    assert u32(recs[-1], R.OFF_SEQ) == signed + 1 and mac_ok(recs[-1])
    rmdir(d)


def test_a_tail_record_not_signed_by_the_chain_is_counted_and_its_number_used_up():
    d = tmpdir("chainforged")
    started_key_file(d)
    st = JournalStore(d)
    rs = RoundState()
    st.boot(rs.feed)
    st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    st.close()
    # A record with a MAC the chain did not make, after what the key file knows.
    forged = bytearray(journal.encode(R.J_ALARM_CLEAR, rs.seq + 1, rs.round, rs.boot, 9, None,
                                      bytes(8) + bytes(R.MAC_LEN)))
    forged[R.OFF_LENGTH] = len(forged)
    forged[R.OFF_FLAGS] |= R.FLAG_MAC
    journal.seal(forged, len(forged))
    with open(d + "/j00000009.log", "wb") as f:
        f.write(forged)
    st = JournalStore(d)
    rs = RoundState()
    st.boot(rs.feed)
    assert st.chain is None  # not read until the boot's replay is over
    st.chain_next(rs)  # as resumption.stage_chain does, after the replay
    assert st.chain.bad == 1 and st.chain.seq == rs.seq + 1
    st.close()
    rmdir(d)


def test_a_journal_without_a_chain_reads_as_before():
    d = tmpdir("nochain")
    st = JournalStore(d)
    assert st.open_chain() is None and st.head() is None
    rs = RoundState()
    st.boot(rs.feed)
    r = Rig()
    r.sink = st.append
    r.round(1, 2, 3)
    st.close()
    recs = raw_records(d)
    assert recs and all(len(x) == R.REC_LEN for x in recs)
    assert all(journal.records(x)[0].mac is None for x in recs)
    assert KEY_NAME not in os.listdir(d)
    rmdir(d)


def test_a_key_file_keeps_every_field_whole():
    # Every field at its place, none overlapping another or the CRC: a key
    # file read back says what was written, to the top byte of each number.
    key = bytes(range(1, 1 + C.KEY_LEN))
    link = bytes(range(0x80, 0x80 + R.CHAIN_LEN))
    data = C.key_file(0xA1B2C3D4, 0xB1B2B3B4, 0xC1C2C3C4, 0xD1D2D3D4, key, link, 0xE1E2E3E4)
    assert len(data) == C.FILE_LEN and C.parse(data)
    ch = C.Chain(data)
    assert (ch.ident, ch.first, ch.seq, ch.head, ch.previous) == (
        0xA1B2C3D4, 0xB1B2B3B4, 0xC1C2C3C4, 0xD1D2D3D4, 0xE1E2E3E4)
    assert bytes(ch.key) == key and bytes(ch.link) == link
    assert bytes(ch.pack()) == data


def test_a_damaged_key_file_is_not_taken():
    d = tmpdir("chainbad")
    started_key_file(d)
    with open(d + "/" + KEY_NAME, "rb") as f:
        kf = bytearray(f.read())
    kf[30] ^= 1
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(kf)
    st = JournalStore(d)
    assert st.open_chain() is None and st.chain_damaged
    st.close()
    rmdir(d)


class _Sink:
    def __init__(self):
        self.data = bytearray()

    def write(self, b):
        self.data.extend(b)


def test_the_store_writes_what_seal_makes_piece_by_piece():
    # chainfile.StoredChain.write (the board's: header, payload, MAC and CRC
    # written apart) and Chain.seal (a copy) give the same bytes.
    from chainfile import StoredChain

    r = Rig()
    r.round(1, 2, 3)
    r.m.meters = Meters(r.m.table.channels, r.m.table)
    kf = C.key_file(IDENT, 1, 1, 0, KEY0, bytes(16))
    a = C.Chain(kf)
    b = StoredChain(kf, "/tmp/none/chain.key")
    plain = bytes(r.journal)
    sink = _Sink()
    assert b.write(sink, plain) == len(sink.data)
    assert bytes(sink.data) == bytes(a.seal(plain, len(plain)))
    cp = checkpoint(r.m, r.now, None)  # the meters' own buffer: the head goes into it
    for data in (bytes(cp), cp):
        sink = _Sink()
        a2 = C.Chain(a.pack())
        b2 = StoredChain(b.pack(), "/tmp/none/chain.key")
        b2.write(sink, data)
        assert bytes(sink.data) == bytes(a2.seal(bytes(data), len(data)))
        assert mac_ok(bytes(sink.data))
    assert bytes(a.link) == bytes(b.link) and a.seq == b.seq
