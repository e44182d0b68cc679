# The board's sealing of records as it writes them (chainfile.StoredChain.write,
# through journal_store.JournalStore.append), checked on the journal's files
# as compliance reads them (chainkit: a textbook HMAC-SHA256 written apart):
# a record the chain may not sign goes as it is, and spends no key; a record
# whose length field changes its high byte as the MAC is added still reads
# back whole; and no copy of a record is made (the board's heap does not grow
# with a deploy's list of files or a checkpoint of many channels).
import gc
import os
import struct
import sys

import access
from chainkit import (
    IDENT,
    KEY0,
    check_journal,
    key_of,
    mac_ok,
    provision,
    raw_records,
    started_key_file,
    u32,
)
from folderkit import fresh_folder, rmdir, tmpdir

from journal_store import KEY_NAME, JournalStore
from sicbo import chain as C
from sicbo import journal
from sicbo import records as R
from sicbo.roundstate import RoundState

CPYTHON = sys.implementation.name != "micropython"


def _rec(rtype, seq, payload=bytes(R.PAYLOAD)):
    return journal.encode(rtype, seq, 0, 1, 0, None, payload)


def _key_file(folder):
    with open(folder + "/" + KEY_NAME, "rb") as f:
        return C.Chain(f.read())


def test_a_number_whose_key_is_gone_is_written_as_it_is_and_spends_no_key():
    # The key file is at 10 (records up to 9 were signed, then lost): a writer
    # that numbers a record below it gets it written plain, counted, never
    # with a MAC of a later key under its number; the next record, 10, is
    # signed by its own key.
    d = tmpdir("cfw_gone")
    started_key_file(d, seq=10)
    st = JournalStore(d)
    st.boot(RoundState().feed)
    old = _rec(R.J_BOOT, 5)
    st.append(old)
    st.append(_rec(R.J_ALARM_CLEAR, 10))
    st.close()
    recs = raw_records(d)
    assert [u32(r, R.OFF_SEQ) for r in recs] == [5, 10]
    assert recs[0] == old  # not flagged, no MAC: a verifier sees it unsigned
    assert recs[1][R.OFF_FLAGS] & R.FLAG_MAC and mac_ok(recs[1])
    ch = _key_file(d)
    assert ch.seq == 11 and bytes(ch.key) == key_of(11) and ch.head == 10
    assert st.chain.unsigned == 1
    rmdir(d)


def test_before_its_j_provision_the_chain_signs_nothing_then_starts_at_it():
    # A key file taken from a provisioning whose J_PROVISION is not written
    # yet (a power cut between the two): a record written then goes plain;
    # the chain's first record is its J_PROVISION, under the first key moved
    # on to its number.
    d = tmpdir("cfw_unstarted")
    base = 20
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(C.key_file(IDENT, 0, base, 0, KEY0, bytes(R.CHAIN_LEN)))
    st = JournalStore(d)
    st.boot(RoundState().feed)
    early = _rec(R.J_BOOT, base)
    st.append(early)
    p = bytearray(R.PAYLOAD)
    struct.pack_into("<II", p, R.P_CHAIN, IDENT, 0)
    st.append(_rec(R.J_PROVISION, base + 1, bytes(p)))
    st.append(_rec(R.J_BOOT, base + 2))
    st.close()
    recs = raw_records(d)
    assert recs[0] == early
    for raw in recs[1:]:
        assert raw[R.OFF_FLAGS] & R.FLAG_MAC and mac_ok(raw, KEY0, base), u32(raw, R.OFF_SEQ)
    ch = _key_file(d)
    assert ch.first == base + 1 and ch.head == base + 2 and ch.seq == base + 3
    assert st.chain.unsigned == 1
    rmdir(d)


def _deploy_name(n):
    # The one file a deploy record of n bytes lists ("+" and the name).
    return "%04d" % n + "x" * (n - R.MIN_LEN - R.DEPLOY_HEAD - 1 - 4)


def test_deploy_records_of_every_length_about_a_byte_of_the_length_field_verify():
    # A deploy's list of files makes records of any length up to MAX_LEN; the
    # MAC adds 8 bytes to the length field, which carries into its high byte
    # from 248..255 bytes on (+ 8: 256..263), and so at each 256. On a
    # provisioned board each one must read back whole, its MAC verifying,
    # its list of files intact. (A journal for each: the board's heap.)
    f = fresh_folder()
    for edge in (256, 512, 768, 1024):
        for n in range(edge - 9, min(edge + 1, R.MAX_LEN - R.MAC_LEN + 1)):
            for name in os.listdir(f):
                os.remove(f + "/" + name)
            provision(f)
            rec = access.deployed(R.CODE_FILES, "ab" * 32, "cd" * 6, [_deploy_name(n)], [], f)
            access.close()
            assert len(rec) == n, (len(rec), n)
            del rec
            gc.collect()
            # Every record whole, with a MAC that verifies, none missing.
            assert check_journal(f) == [1, 2], n
            raw = raw_records(f)[1]
            assert len(raw) == n + R.MAC_LEN, (len(raw), n)
            rec = journal.records(raw)[0]
            assert rec.type == R.J_DEPLOY and journal.check(rec) == 0
            assert rec.payload[R.DEPLOY_HEAD:] == b"+" + _deploy_name(n).encode()
            del raw, rec
            gc.collect()


class _Count:
    # A file that keeps nothing: the bytes written, counted.
    def __init__(self):
        self.n = 0

    def write(self, b):
        self.n += len(b)


def _meters_record(seq, channels):
    # A J_METERS checkpoint as the meters make it, in a buffer of their own
    # (bytearray), with room for the chain's tail.
    payload = bytearray(R.P_WINS + 4 * channels + R.METERS_CONFIG + R.METERS_CHAIN)
    struct.pack_into("<H", payload, R.P_CHANNELS, channels)
    return bytearray(_rec(R.J_METERS, seq, payload))


def _heap_used(step, *args):
    """The bytes allocated while step(*args) runs: MicroPython's heap counter
    with the collector held off, CPython's tracemalloc peak."""
    if not CPYTHON:
        gc.collect()
        gc.disable()
        try:
            before = gc.mem_alloc()
            step(*args)
            return gc.mem_alloc() - before
        finally:
            gc.enable()
    import tracemalloc

    tracemalloc.start()
    try:
        step(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _sealing_heap(make):
    # The heap that writing make()'s record with its MAC takes, the second
    # time (the first may make the chain's own buffers and the hash code).
    from chainfile import StoredChain

    ch = StoredChain(C.key_file(IDENT, 1, 1, 0, KEY0, bytes(R.CHAIN_LEN)), "/tmp/none/chain.key")
    out = []
    for seq in (1, 2):
        data = make(seq)
        sink = _Count()
        out.append(_heap_used(ch.write, sink, data))
        assert sink.n == len(data) + R.MAC_LEN
    return out[-1]


def test_sealing_a_record_as_it_is_written_takes_no_heap_for_its_bytes():
    # What sealing allocates (the hash objects, their digests) does not grow
    # with the record: a deploy (bytes, as access.record makes it) of 1000
    # bytes takes no more than one of 50, nor a checkpoint in the meters'
    # own buffer of 200 channels more than one of 1.
    def deploy(length):
        return lambda seq: _rec(R.J_DEPLOY, seq, bytes(length - R.MIN_LEN))

    def meters(channels):
        return lambda seq: _meters_record(seq, channels)

    for small, large in ((meters(1), meters(200)), (deploy(50), deploy(1000))):
        a = _sealing_heap(small)
        b = _sealing_heap(large)
        assert b - a < 200, (a, b)
