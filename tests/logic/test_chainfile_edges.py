# The MAC chain caught up from a store that has not read its segments yet
# (diag.status's chain line: a fresh JournalStore, chainfile's catch_up):
# a key file a few boots behind the journal follows every record it missed,
# oldest first, so that its head is the one the up-to-date key file holds.
import os

from chainkit import check_journal, started_key_file
from folderkit import rmdir, tmpdir

from journal_store import KEY_NAME, JournalStore
from sicbo import chain as C
from sicbo import records as R
from sicbo.roundstate import RoundState


def _boot(folder, n):
    """A boot of the store on folder: replay, the chain caught up, n records
    more in its own segment (each boot opens one)."""
    st = JournalStore(folder)
    rs = RoundState()
    st.boot(rs.feed)
    st.chain_next(rs)
    for _ in range(n):
        st.append(rs.encode_next(R.J_BOOT, bytes(8), 5, None))
    st.close()


def _key_file(folder):
    with open(folder + "/" + KEY_NAME, "rb") as f:
        return f.read()


def test_a_key_file_boots_behind_is_caught_up_over_every_segment_in_order():
    d = tmpdir("chaincatchup")
    started_key_file(d)
    _boot(d, 2)
    stale = _key_file(d)  # the key file after the first boot's records
    _boot(d, 3)
    _boot(d, 2)
    seqs = check_journal(d)
    now = C.Chain(_key_file(d))
    assert now.head == seqs[-1] and now.seq == seqs[-1] + 1
    assert len([n for n in os.listdir(d) if n.endswith(".log")]) == 3
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(stale)  # behind the records of the last two segments
    st = JournalStore(d)  # as diag.status opens it: no segment read yet
    ch = st.open_chain()
    assert ch.head == seqs[1] and ch.head_text() != now.head_text()
    ch.catch_up(st)
    assert ch.bad == 0
    assert ch.seq == now.seq and ch.head == now.head
    assert bytes(ch.key) == bytes(now.key)
    # the chain hash over every record, oldest first: the head the floor checks
    assert ch.head_text() == now.head_text(), (ch.head_text(), now.head_text())
    st.close()
    rmdir(d)
