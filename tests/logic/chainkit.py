# Helpers of the MAC chain's tests (test_chain*.py), portable: a textbook
# HMAC-SHA256 and key steps written apart from sicbo.chain, and checks of a
# journal folder's records made with them. Not a test module itself.
import hashlib
import os
import struct

from journal_store import KEY_NAME
from sicbo import chain as C
from sicbo import journal
from sicbo import records as R

KEY0 = bytes(range(32))
IDENT = 0x1234ABCD


def hmac256(key, data):
    k = bytes(key) + bytes(64 - len(key))
    inner = hashlib.sha256(bytes([b ^ 0x36 for b in k]) + bytes(data)).digest()
    return hashlib.sha256(bytes([b ^ 0x5C for b in k]) + inner).digest()


def key_of(seq, key=KEY0, base=1):
    for s in range(base, seq):
        key = hashlib.sha256(b"sicbo-key" + struct.pack("<I", s) + key).digest()
    return key


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def mac_ok(raw, key=KEY0, base=1):
    body = len(raw) - R.CRC_LEN - R.MAC_LEN
    return hmac256(key_of(u32(raw, R.OFF_SEQ), key, base), raw[:body])[:R.MAC_LEN] == bytes(
        raw[body:body + R.MAC_LEN])


def started_key_file(folder, seq=1):
    # A chain as if its J_PROVISION were the record before seq (the store's
    # own tests: startup takes real provisionings, test_chain_boot.py).
    with open(folder + "/" + KEY_NAME, "wb") as f:
        f.write(C.key_file(IDENT, 1, seq, 0, key_of(seq), bytes(R.CHAIN_LEN)))


def raw_records(folder):
    """Every CRC-valid record of the folder's segments, in order, as bytes."""
    out = []
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".log")):
        with open(folder + "/" + name, "rb") as f:
            data = f.read()
        for rec in journal.Scanner().scan(data):
            out.append(data[rec.offset:rec.offset + rec.length])
    return out


def check_journal(folder):
    """Every record has a MAC that verifies, the numbers go up by one."""
    recs = raw_records(folder)
    seqs = [u32(r, R.OFF_SEQ) for r in recs]
    for raw in recs:
        assert raw[R.OFF_FLAGS] & R.FLAG_MAC, u32(raw, R.OFF_SEQ)
        assert mac_ok(raw), u32(raw, R.OFF_SEQ)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs
    return seqs


def provision(folder, ident=IDENT, base=1, key=KEY0):
    """A provisioning file in folder, as `sicbo deploy --provision` leaves it
    for the next boot."""
    from journal_store import PROVISION_NAME

    with open(folder + "/" + PROVISION_NAME, "wb") as f:
        f.write(C.key_file(ident, 0, base, 0, key, bytes(R.CHAIN_LEN)))


def provisioned_table(*dice):
    """A table provisioned before its first boot (appkit.Table) that played
    one round of `dice`, closed."""
    from appkit import Table, fresh_folder

    f = fresh_folder()
    provision(f)
    t = Table(folder=f)
    t.play(*dice)
    t.close()
    return t
