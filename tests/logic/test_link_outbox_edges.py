# Edges of the floor link's outbox (device/link/outbox.py) and of the
# journal as its source (device/link/source.py): the status and the chain's
# head published again only when what they say changes (the head read only
# when the journal moved, not at every pass), a status's packet id free
# again once the broker has it, and the backlog judged at start-up from
# what the oldest segments hold. Portable.
import linkkit
from folderkit import rmdir, tmpdir
from link.outbox import Link
from link.source import OutboxStore

from sicbo import journal
from sicbo import records as R

STATUS = b"sicbo/S1/T01/status"
HEAD = b"sicbo/S1/T01/head"


class Rig(linkkit.made_rig(Link)):
    """A Link whose packets go to a list; connected when the test says so."""

    def __init__(self, source, name, **kw):
        self.sent = []
        self.downs = []
        self.folder = tmpdir("lo_" + name)
        Link.__init__(self, source, "S1", "T01", "127.0.0.1", 1, self.folder + "/cursor",
                      down=lambda code, detail: self.downs.append((code, detail)),
                      ticks_ms=lambda: 0, **kw)

    def publishes(self, topic=None):
        """(pid, topic, payload) of the PUBLISH packets sent (on topic)."""
        out = [linkkit.publish_parts(pkt) for pkt in self.sent if pkt[0] >> 4 == 3]
        return [x for x in out if topic is None or x[1] == topic]

    def journal_seqs(self):
        out = []
        for _pid, t, payload in self.publishes():
            if t.endswith(b"journal"):
                out += linkkit.seqs_of(payload)
        return out


def _puback(pid):
    return b"\x40\x02" + pid.to_bytes(2, "big")


def _source(n):
    s = linkkit.MemorySource()
    s.add(1, n)
    return s


# ---- the status -------------------------------------------------------------


def test_the_status_goes_again_only_when_the_round_or_its_state_changes():
    src = _source(3)
    link = Rig(src, "said", window=8)
    link.connack(0)
    # Without a table: the journal's last record and the floor's cursor.
    assert link.publishes(STATUS) == [(link.publishes(STATUS)[0][0], STATUS,
                                       b'{"online": true, "seq": 3, "acked": 0}')]
    said = 7 << 3 | 2  # round 7, betting open
    src.add(4, 4)
    link.journaled(said)
    link.tick(1)
    assert len(link.publishes(STATUS)) == 2
    for now in (2, 3, 4):  # more records of the same round and state
        src.add(now + 3, now + 3)
        link.journaled(said)
        link.tick(now)
    assert len(link.publishes(STATUS)) == 2
    assert link.journal_seqs() == list(range(1, 8))
    link.journaled(7 << 3 | 3)  # the round closed
    link.tick(5)
    assert len(link.publishes(STATUS)) == 3


def test_a_status_puback_frees_its_packet_id_and_no_other():
    link = Rig(linkkit.MemorySource(), "status_pid")
    link.pid = 65533  # SUBSCRIBE 65534, the status 65535, then round to 1
    link.connack(0)
    assert [p[0] for p in link.publishes(STATUS)] == [65535]
    link.deliver(_puback(65535), 1)
    assert linkkit.stats(link)["stray_pubacks"] == 0
    link.deliver(_puback(1), 2)  # no publish has id 1: a stray
    assert linkkit.stats(link)["stray_pubacks"] == 1
    link.source.add(1, 3)
    link.journaled()
    link.tick(3)
    assert [(p[0], linkkit.seqs_of(p[2])) for p in link.publishes(b"sicbo/S1/T01/journal")] == [
        (1, [1, 2, 3])]


# ---- the chain's head ---------------------------------------------------------


class Chained(linkkit.MemorySource):
    """A provisioned journal: its chain's head as the store gives it."""

    def __init__(self):
        linkkit.MemorySource.__init__(self)
        self.head_text = None

    def head(self):
        return self.head_text


def test_the_head_goes_once_per_change_and_not_before_the_first_record():
    src = Chained()
    link = Rig(src, "head")
    link.connack(0)
    assert link.publishes(HEAD) == [] and link.is_up and link.downs == []
    src.add(1, 1)
    src.head_text = "1:aa11"
    link.journaled()
    link.tick(1)
    for now in (2, 3, 4):  # journaled again, the head where it was
        link.journaled()
        link.tick(now)
    src.add(2, 2)
    src.head_text = "2:bb22"
    link.journaled()
    link.tick(5)
    assert [p[2] for p in link.publishes(HEAD)] == [b"1:aa11", b"2:bb22"]
    assert link.journal_seqs() == [1, 2] and link.downs == []



class Counted(Chained):
    """A Chained journal that counts the reads of its head."""

    def __init__(self):
        Chained.__init__(self)
        self.asked = 0

    def head(self):
        self.asked += 1
        return self.head_text


def test_the_head_is_read_when_the_journal_moves_not_at_every_pass():
    # The store's head() opens the chain and makes its "SEQ:HASH" text: read
    # at every pass (50 a second), it would make garbage for nothing.
    src = Counted()
    link = Rig(src, "head_reads")
    link.connack(0)  # read at the connection: no head yet (no record)
    assert src.asked == 1 and link.publishes(HEAD) == []
    for now in range(1, 6):
        link.tick(now)
    assert src.asked == 1  # nothing journaled: not read again
    src.add(1, 1)
    src.head_text = "1:aa11"
    link.journaled()
    link.tick(6)
    assert src.asked == 2 and [p[2] for p in link.publishes(HEAD)] == [b"1:aa11"]
    link.journaled()  # journaled again, the head where it was
    link.tick(7)
    assert src.asked == 3
    for now in range(8, 12):
        link.tick(now)
    assert src.asked == 3 and len(link.publishes(HEAD)) == 1

def test_the_head_s_puback_is_the_head_s_not_a_stray():
    # The head is a QoS 1 publish of its own: its PUBACK must be matched to
    # it (its packet id in use until then), not counted as one for nothing.
    src = Chained()
    link = Rig(src, "head_pid")
    link.connack(0)
    src.add(1, 1)
    src.head_text = "1:aa11"
    link.journaled()
    link.tick(1)
    (head_pid, _t, _p), = link.publishes(HEAD)
    (rec_pid, _t, _p), = link.publishes(b"sicbo/S1/T01/journal")
    assert head_pid != rec_pid
    link.deliver(_puback(head_pid), 2)
    assert linkkit.stats(link)["stray_pubacks"] == 0
    link.deliver(_puback(head_pid), 3)  # once more: now it is a stray
    assert linkkit.stats(link)["stray_pubacks"] == 1


def test_a_link_over_an_unprovisioned_journal_sends_its_records_and_no_head():
    d = tmpdir("lo_store_nohead")
    st = OutboxStore(d, segment_bytes=4000)
    st.boot(lambda piece: None)
    for seq in range(1, 6):
        st.append(linkkit.record(seq))
    assert st.head() is None
    link = Rig(st, "nohead")
    link.connack(0)
    link.journaled()
    link.tick(1)
    assert link.is_up and link.downs == [] and linkkit.stats(link)["failures"] == 0
    assert link.journal_seqs() == [1, 2, 3, 4, 5] and link.publishes(HEAD) == []
    st.close()
    rmdir(d)


# ---- the backlog judged at start-up (OutboxStore.judge_full) ------------------

REC = R.REC_LEN


def _rec(seq):
    return journal.encode(R.J_BOOT, seq, 0, 1, 0, None, bytes(8))


def _held(st):
    buf = bytearray(R.MAX_LEN)
    out = []
    seq = 0
    while True:
        n = st.read_after(seq, buf, len(buf))
        if not n:
            return out
        for r in journal.records(bytes(buf[:n])):
            out.append(r.seq)
            seq = r.seq


def _reopened(d, segment_bytes, budget, keep, acked):
    st = OutboxStore(d, segment_bytes=segment_bytes, max_segments=2, backlog_bytes=budget,
                     keep_when_full=keep)
    st.boot(lambda piece: None)
    st.acked = acked
    st.judge_full()
    return st


def test_a_reboot_with_the_whole_backlog_in_one_segment_is_full():
    # A backlog budget smaller than a segment (backlog_rounds 10: 2560 bytes
    # against 4096): the only segment with records is past it, nothing
    # acknowledged, and the boot opened an empty one after it.
    for keep in (True, False):
        d = tmpdir("lo_one_segment")
        st = OutboxStore(d, segment_bytes=40 * REC, max_segments=2, backlog_bytes=10 * REC,
                         keep_when_full=keep)
        st.boot(lambda piece: None)
        for seq in range(1, 21):
            st.append(_rec(seq))
        st.close()
        st = _reopened(d, 40 * REC, 10 * REC, keep, 0)
        assert [s[1] for s in st.segs] == [1, 0], st.segs
        assert st.full, keep
        assert st.deleted == 0 and _held(st) == list(range(1, 21))
        st.close()
        rmdir(d)


def test_a_reboot_with_the_oldest_segment_acknowledged_is_not_full():
    # Rotation can make room by deleting what the floor has: the stop policy
    # does not stop the table for it.
    d = tmpdir("lo_oldest_acked")
    seg = 4 * REC
    st = OutboxStore(d, segment_bytes=seg, max_segments=2, backlog_bytes=10 * seg,
                     keep_when_full=True)
    st.boot(lambda piece: None)
    for seq in range(1, 45):
        st.append(_rec(seq))
    assert st.full and st.oldest() == 1
    st.close()
    st = _reopened(d, seg, 10 * seg, True, 3)  # record 4 not yet: the oldest segment stays
    assert st.full and st.oldest() == 1
    st.close()
    st = _reopened(d, seg, 10 * seg, True, 4)  # the floor has 1..4, the oldest segment
    assert not st.full and st.total_bytes() > 10 * seg
    st.rotate()
    assert not st.full and st.oldest() == 5 and _held(st) == list(range(5, 45))
    st.close()
    rmdir(d)
