# The MAC chain (sicbo/chain.py) caught up with records of the journal that
# its key file does not know: a power cut came between an append's flush and
# the key file written after it (device/chainfile.py). Rare, so loaded only
# then and forgotten after. Pure.

from sicbo import records as R
from sicbo.journal import u32, valid_at


def follow(ch, b, o):
    """One record of the journal (CRC-valid, at b[o]). Its number's key is
    used up; one that verifies joins the chain hash; one that does not is
    counted (ch.bad) and left out. Records the chain knows, and those before
    its J_PROVISION, are passed over."""
    seq = u32(b, o + R.OFF_SEQ)
    if seq < ch.seq:
        return
    if not b[o + R.OFF_FLAGS] & R.FLAG_MAC:
        if ch.first:
            ch.to(seq + 1)  # a number used without a MAC: never signed now
        return
    if not ch.first and not ch.ours(b, o):
        return
    ch.to(seq)
    if not ch.check(b, o):
        ch.bad += 1
        ch.evolve()
        return
    if not ch.first:
        ch.start(seq)
    body = (b[o + R.OFF_LENGTH] | (b[o + R.OFF_LENGTH + 1] << 8)) - R.CRC_LEN
    mv = b if type(b) is memoryview else memoryview(b)
    ch.fold(mv[o:o + body])
    ch.head = seq
    ch.evolve()


def follow_all(ch, data):
    """follow() every valid record of a piece of the journal, in order."""
    n = len(data)
    off = 0
    while off < n:
        length = valid_at(data, off, n)
        if length:
            follow(ch, data, off)
            off += length
        else:
            off += 1
