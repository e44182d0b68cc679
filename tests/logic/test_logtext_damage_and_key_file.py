# A damage record's line names the damaged record's sequence number whole,
# to its top byte; a key file written without the chain it replaced says it
# replaced none.
from sicbo import chain as C
from sicbo import events as E
from sicbo import journal, logtext, texts
from sicbo import records as R


def _damage(code, rtype, seq):
    payload = bytes([code, rtype, seq & 0xFF, (seq >> 8) & 0xFF, (seq >> 16) & 0xFF,
                     (seq >> 24) & 0xFF, 0, 0])
    recs = list(journal.records(journal.encode(R.J_DAMAGE, 9, 3, 1, 0, None, payload)))
    assert len(recs) == 1
    return recs[0]


def test_a_damage_line_names_a_sequence_number_past_two_bytes_exactly():
    # Each byte of the number different, so that none read in place of
    # another gives the same number.
    for seq in (0x01020304, 70000, 0x00FF0000, 0xFFFFFFFF, 0x00030201):
        line = logtext.journal_line(_damage(E.BAD_SEQ, R.J_SUPERVISOR, seq))
        want = " seq %d (%s): %s" % (seq, texts.J_NAMES[R.J_SUPERVISOR],
                                     texts.DAMAGE_NAMES[E.BAD_SEQ])
        assert line.endswith(want), (seq, line)


def test_a_key_file_without_a_previous_provisioning_says_none():
    key = bytes(range(1, 1 + C.KEY_LEN))
    link = bytes(R.CHAIN_LEN)
    data = C.key_file(0x1234ABCD, 0, 5, 0, key, link)  # a provisioning file, as the host writes it
    assert C.parse(data)
    assert data[68:72] == bytes(4)  # the replaced provisioning's field: none
    ch = C.Chain(data)
    assert ch.previous == 0 and ch.ident == 0x1234ABCD and ch.first == 0 and ch.seq == 5
    assert bytes(ch.pack()) == data
    # The same file as one naming no previous chain explicitly.
    assert data == C.key_file(0x1234ABCD, 0, 5, 0, key, link, 0)
