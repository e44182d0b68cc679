# Boundaries of the firmware's pure core: a key file of the wrong length or
# magic is not taken, even under a good CRC; a chain caught up at boot with
# records its key file missed has the head it would have had; a record forged
# in place with a wrong number costs only itself; a dice reader's checksum in
# lower-case hex, letters a-f included, is read.
import gc
import hashlib
import struct
from binascii import crc32

from chainkit import check_journal, raw_records, started_key_file

from journal_store import KEY_NAME, JournalStore
from roundkit import Rig, forge, replay_of, rmdir, tmpdir
from sicbo import chain as C
from sicbo import events as E
from sicbo import journal
from sicbo import records as R
from sicbo.dicereader import DiceReader, crc8
from sicbo.roundstate import RoundState

_BUF = bytearray(2048)  # the boots' read buffer, made before the heap fragments


# ---- the key file: length, magic and CRC ------------------------------------------

def _resealed(data):
    """data (a key file's first 72 bytes and anything after) with a good CRC
    of its first 72 bytes at 72..75, as a writer that got the rest wrong
    would leave it."""
    out = bytearray(data)
    struct.pack_into("<I", out, 72, crc32(bytes(out[0:72])))
    return bytes(out)


def test_a_key_file_of_the_wrong_length_or_magic_is_not_one():
    good = C.key_file(7, 1, 5, 4, bytes(range(32)), bytes(16))
    assert C.parse(good)
    assert not C.parse(None)  # no file
    assert not C.parse(b"")
    # One byte more (a file appended to), its first 76 bytes a good key file.
    assert not C.parse(good + b"\x00")
    assert not C.parse(good + good)
    # Another magic (another format's file, or a version not ours), CRC good.
    for magic in (b"SKC2", b"skc1", b"\x00\x00\x00\x00"):
        other = _resealed(magic + good[4:])
        assert struct.unpack_from("<I", other, 72)[0] == crc32(other[0:72])
        assert not C.parse(other), magic


def test_the_store_refuses_a_key_file_of_the_wrong_magic_or_length():
    d = tmpdir("chainmagic")
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(_resealed(b"SKC0" + C.key_file(7, 1, 5, 4, bytes(32), bytes(16))[4:]))
    st = JournalStore(d)
    assert st.open_chain() is None and st.chain_damaged and st.head() is None
    st.close()
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(C.key_file(7, 1, 5, 4, bytes(32), bytes(16)) + b"\n")
    st = JournalStore(d)
    assert st.open_chain() is None and st.chain_damaged
    st.close()
    rmdir(d)


# ---- the chain caught up with records its key file missed ---------------------------

def _chain_hash(recs):
    """The chain hash over sealed records, from zeros: SHA-256 of the one
    before, the record before its CRC (its MAC included), first 16 bytes."""
    h = bytes(R.CHAIN_LEN)
    for raw in recs:
        h = hashlib.sha256(h + bytes(raw[:len(raw) - R.CRC_LEN])).digest()[:R.CHAIN_LEN]
    return h


def test_a_chain_caught_up_at_boot_has_the_head_its_key_file_would_have_had():
    d = tmpdir("chaincatch")
    started_key_file(d)
    st = JournalStore(d)
    st.boot(RoundState().feed)
    r = Rig()
    r.sink = st.append
    r.round(1, 2, 3)
    with open(d + "/" + KEY_NAME, "rb") as f:
        behind = f.read()  # the key file after the first round
    r.round(4, 5, 6)
    st.close()
    with open(d + "/" + KEY_NAME, "rb") as f:
        after = C.Chain(f.read())
    recs = raw_records(d)
    seqs = check_journal(d)
    assert after.head == seqs[-1] and bytes(after.link) == _chain_hash(recs)
    # A power cut before the key file's rename: the old one is found at boot.
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(behind)
    assert C.Chain(behind).seq < after.seq
    gc.collect()
    st = JournalStore(d)
    rs = RoundState()
    st.boot(rs.feed, _BUF)
    st.chain_next(rs, _BUF)
    ch = st.chain
    assert ch.seq == after.seq and ch.head == after.head and ch.bad == 0
    assert bytes(ch.key) == bytes(after.key)
    assert bytes(ch.link) == bytes(after.link) == _chain_hash(recs)
    assert st.head() == after.head_text()
    st.close()
    rmdir(d)


# ---- a record forged in place with a wrong number -----------------------------------

def test_a_record_with_a_wrong_number_in_place_of_one_costs_only_itself():
    # In betting: the supervisor's key on, off, then the bell. The key-on
    # record is forged in place with a wrong sequence number (CRC valid): it
    # is damage; the key-off record, numbered after the one it replaced,
    # follows on from it (one record missing), and so does the bell.
    r = Rig()
    r.to_open()
    r.ev(E.EV_SUPERVISOR_ON)
    r.ev(E.EV_SUPERVISOR_OFF)
    r.ev(E.EV_BELL)
    assert r.m.state == E.ST_CLOSED
    data = bytearray(r.journal)
    recs = journal.records(bytes(data))
    on = [x for x in recs if x.type == R.J_SUPERVISOR][0]
    off = [x for x in recs if x.type == R.J_SUPERVISOR][1]
    assert off.seq == on.seq + 1 and recs[-1].seq == off.seq + 1
    data[on.offset:on.offset + on.length] = forge(R.J_SUPERVISOR, on.seq + 9, on.round,
                                                  on.payload)
    rp = replay_of(bytes(data), r.cfg, r.m.table)
    assert rp.damaged == 1, rp.damaged
    assert rp.damage[0] == E.BAD_SEQ and rp.damage[1] == R.J_SUPERVISOR
    assert struct.unpack_from("<I", rp.damage, 2)[0] == on.seq + 9
    assert rp.seq == r.m.seq and rp.round == r.m.round and rp.state == E.ST_CLOSED


# ---- the dice reader's checksum in hex ---------------------------------------------

def _read(data):
    rd = DiceReader()
    got = []
    rd.feed(data, lambda *a: got.append(a))
    return rd, got


def test_a_checksum_with_hex_letters_in_either_case_is_read():
    # Round ids whose line's CRC-8 has each letter a-f in each of its digits.
    want_hi = {}
    want_lo = {}
    rid = 1
    while (len(want_hi) < 6 or len(want_lo) < 6) and rid < 5000:
        body = b"DICE %d 2 4 6 " % rid
        crc = crc8(body)
        if crc >> 4 >= 10 and crc >> 4 not in want_hi:
            want_hi[crc >> 4] = body
        if crc & 15 >= 10 and crc & 15 not in want_lo:
            want_lo[crc & 15] = body
        rid += 1
    assert len(want_hi) == 6 and len(want_lo) == 6
    bodies = list(want_hi.values()) + list(want_lo.values())
    for body in bodies:
        crc = crc8(body)
        for digits in (b"%02x" % crc, b"%02X" % crc):
            rd, got = _read(body + b"*" + digits + b"\n")
            expect = int(body.split()[1])
            assert got == [(expect, 2, 4, 6)], (body, digits, rd.garbage, rd.bad_crc)
            assert rd.ok == 1 and rd.rejected() == 0
        # The same digits one off: a bad checksum, not garbage, and not read.
        rd, got = _read(body + b"*" + (b"%02x" % (crc ^ 1)) + b"\n")
        assert got == [] and (rd.bad_crc, rd.garbage) == (1, 0)
