"""A journal's MAC chain verified on the host (docs/tamper-evidence.md), with
the firmware's own chain (sicbo.chain: the same key steps, MACs and chain
hash) and the host's key store (host_tools/keystore.py).

`verify(items, stretches, store, head)` takes a whole journal as read
(`sicbo journal --verify`) and names each alteration it finds:

    modified         a record that does not verify where a record of its
                     number should be (its bytes altered, or its MAC flag
                     cleared), or bytes that no longer make a record there
    inserted         a record that does not verify beside the genuine record
                     of its number, a copy of a genuine record, bytes between
                     two consecutive records
    deleted          numbers missing between the journal's records
    reordered        a genuine record after one with a higher number
    renumbered       a genuine record whose number was changed (it verifies
                     under another number): the trace of an insertion or a
                     deletion hidden by renumbering the records after it
    replayed         a record that verifies under another chain of the key
                     store than the journal's: another table's, or another
                     provisioning of this table
    truncated        the journal ends before the head it is checked against
    rollback         the journal's chain hash at the head's number is not
                     the head's (an older copy put back, or the chain signed
                     again with keys read off the board), a number signed
                     twice with different bytes, a checkpoint whose head its
                     records do not give
    unauthenticated  records without a MAC before the chain's first: a journal
                     from before the chain (or a board never provisioned)
    unverifiable     no chain of the key store verifies any record
    unchecked        the head could not be checked (no chain hash known there)

`Stream` verifies records one at a time in sequence order, as the floor
service stores them.
"""

import bisect
from collections import Counter

from sicbo import chain as C
from sicbo import records as R
from sicbo.journal import u32

MARK = 1024  # a chain's key kept every MARK sequence numbers walked (going back is cheap)
RENUMBER = 16  # how far a changed sequence number is looked for
# The records a segment starts with: a boot's first (J_BOOT; J_PROVISION
# when it takes a provisioning), rotation's checkpoint (J_METERS), or what a
# technician's access journals on a stopped table, each session a segment of
# its own (sicbo.records.ACCESS, and the J_FAULT that clearing a fault
# journals through it: device/access.py, diag).
SEGMENT_STARTS = frozenset((R.J_BOOT, R.J_METERS, R.J_FAULT) + tuple(R.ACCESS))
FAILING = ("modified", "inserted", "deleted", "reordered", "renumbered", "replayed",
           "truncated", "rollback", "unauthenticated", "unverifiable", "unchecked")


class Keys:
    """The keys of one provisioning (keystore.Provisioning) at any sequence
    number from its base."""

    def __init__(self, prov):
        self.prov = prov
        self.marks = [prov.base]
        self.mark_keys = {prov.base: prov.key}
        self._ch = None

    def at(self, seq):
        """A sicbo.chain.Chain holding the key of seq, or None below the base."""
        if seq < self.prov.base:
            return None
        ch = self._ch
        if ch is None or ch.seq > seq:
            m = self.marks[bisect.bisect_right(self.marks, seq) - 1]
            ch = self._ch = C.Chain(C.key_file(self.prov.id, 0, m, 0, self.mark_keys[m],
                                               bytes(R.CHAIN_LEN)))
        while ch.seq < seq:
            ch.evolve()
            if ch.seq % MARK == 0 and ch.seq not in self.mark_keys:
                self.mark_keys[ch.seq] = bytes(ch.key)
                bisect.insort(self.marks, ch.seq)
        return ch

    def verifies(self, raw, seq=None):
        """True when the record raw (bytes, FLAG_MAC) carries the MAC of this
        chain's key for its sequence number (or for `seq`)."""
        ch = self.at(u32(raw, R.OFF_SEQ) if seq is None else seq)
        return ch is not None and ch.check(raw, 0)


def body_and_mac(raw):
    """What the chain hash takes of a record: its bytes before the CRC."""
    return raw[:len(raw) - R.CRC_LEN]


def fold(link, raw):
    """The chain hash after the record raw (sicbo.chain's rule)."""
    ch = C.Chain(C.key_file(0, 1, 1, 0, bytes(C.KEY_LEN), link))
    ch.fold(body_and_mac(raw))
    return bytes(ch.link)


def carried_head(raw):
    """(seq, chain hash) a meters checkpoint names (its chain tail), or None
    (no tail, or zeros: written without a chain)."""
    p = R.HEADER
    end = len(raw) - R.CRC_LEN - (R.MAC_LEN if raw[R.OFF_FLAGS] & R.FLAG_MAC else 0)
    if end < p + R.P_WINS:
        return None
    n = raw[p + R.P_CHANNELS] | raw[p + R.P_CHANNELS + 1] << 8
    c = p + R.P_WINS + 4 * n + R.METERS_CONFIG
    if c + R.METERS_CHAIN > end:
        return None
    seq = u32(raw, c + R.H_SEQ)
    if not seq:
        return None
    return seq, bytes(raw[c + R.H_HASH:c + R.H_HASH + R.CHAIN_LEN])


def parse_head(text):
    """(seq, hash bytes) of "SEQ:HASH" (sicbo.chain.head_text), ValueError if not."""
    seq, sep, h = text.strip().partition(":")
    if not sep or not seq.isdigit() or not 0 < int(seq) < 1 << 32:
        raise ValueError("a head is SEQ:HASH (e.g. 1234:%s), not %r" % ("0" * 32, text))
    try:
        raw = bytes.fromhex(h)
    except ValueError:
        raw = b""
    if len(raw) != R.CHAIN_LEN:
        raise ValueError("a head's hash is %d hex digits, not %r" % (2 * R.CHAIN_LEN, h))
    return int(seq), raw


class Item:
    """One CRC-valid record of the journal, where it was found."""

    def __init__(self, pos, segment, offset, raw):
        self.pos = pos  # its place in the journal (order of reading)
        self.segment = segment
        self.offset = offset
        self.raw = bytes(raw)
        self.seq = u32(raw, R.OFF_SEQ)
        self.type = raw[R.OFF_TYPE]
        self.round = u32(raw, R.OFF_ROUND)
        self.mac = bool(raw[R.OFF_FLAGS] & R.FLAG_MAC)
        self.chain = None  # the provisioning id whose key verifies it
        self.kind = None
        self.moved = 0  # renumbered: its number less its genuine one

    def declared(self):
        """The provisioning id a J_PROVISION names, else None."""
        if self.type != R.J_PROVISION or len(self.raw) < R.HEADER + 4:
            return None
        return u32(self.raw, R.HEADER + R.P_CHAIN)

    def where(self):
        return "%s @%d" % (self.segment, self.offset)


class Report:
    def __init__(self):
        self.findings = []
        self.notes = []  # what does not fail verification: torn tails, rotation
        self.records = 0
        self.authenticated = 0
        self.unauthenticated = 0
        self.chains = []
        self.head = None  # (seq, hash) the journal's own
        self.head_check = None

    def add(self, kind, text, item=None, **more):
        f = {"kind": kind, "seq": item.seq if item is not None else more.pop("seq", None),
             "segment": item.segment if item is not None else more.pop("segment", None),
             "offset": item.offset if item is not None else more.pop("offset", None),
             "text": text}
        f.update(more)
        self.findings.append(f)

    @property
    def verified(self):
        return not any(f["kind"] in FAILING for f in self.findings)


def _type_name(t):
    from sicbo import texts

    return texts.J_NAMES[t] if 0 < t < len(texts.J_NAMES) else "type%d" % t


def _what(it):
    return "record seq %d (%s, round %d, %s)" % (it.seq, _type_name(it.type), it.round,
                                                 it.where())


class Book:
    """Every chain of a key store, each record tried against them."""

    def __init__(self, store):
        self.store = store
        self.keys = {c.id: Keys(c) for c in store.chains}

    def table_of(self, ident):
        c = self.store.get(ident)
        return c.table if c is not None else None

    def name(self, ident):
        return "provisioning %d (table %s)" % (ident, self.table_of(ident))

    def find(self, raw, first=()):
        """The id of the chain whose key verifies raw (those in `first`
        tried first), or None."""
        tried = set()
        for ident in list(first) + list(self.keys):
            if ident is None or ident in tried or ident not in self.keys:
                continue
            tried.add(ident)
            if self.keys[ident].verifies(raw):
                return ident
        return None

    def renumbered(self, raw, ident):
        """How far raw's sequence number was moved from the one its MAC was
        made for under chain `ident` (0: it was not)."""
        k = self.keys.get(ident)
        if k is None:
            return 0
        seq = u32(raw, R.OFF_SEQ)
        b = bytearray(raw)
        for d in range(1, RENUMBER + 1):
            for moved in (d, -d):
                s = seq - moved
                if not 0 < s < 1 << 32:
                    continue
                b[R.OFF_SEQ:R.OFF_SEQ + 4] = s.to_bytes(4, "little")
                if k.verifies(bytes(b), s):
                    return moved
        return 0


def verify(found, stretches, store, head=None):
    """found: [(segment, offset, raw bytes)] of every CRC-valid record, in
    journal order; stretches: [(segment, offset, bytes, kind)] of what was
    not a record ("corrupt": between records, "torn": at a segment's end), in
    journal order with the records (pos = index in a merged order is not
    needed: each is placed by segment index and offset); store: a
    keystore.KeyStore; head: (seq, hash) or None. Returns a Report."""
    rep = Report()
    book = Book(store)
    seg_index = {}
    for seg, _off, _raw in found:
        seg_index.setdefault(seg, len(seg_index))
    for seg, _off, _n, _kind in stretches:
        seg_index.setdefault(seg, len(seg_index))
    items = [Item((seg_index[seg], off), seg, off, raw) for seg, off, raw in found]
    rep.records = len(items)
    for seg, off, n, kind in stretches:
        if kind == "torn":
            rep.notes.append("%s @%d: %d bytes of a record cut by a power cut: never used"
                             % (seg, off, n))
    if not items:
        rep.add("unverifiable", "the journal has no records")
        return rep
    # 1. Which chain's key verifies each authenticated record.
    last = None
    for it in items:
        if not it.mac:
            rep.unauthenticated += 1
            continue
        rep.authenticated += 1
        it.chain = book.find(it.raw, (it.declared(), last))
        if it.chain is not None:
            last = it.chain
    verified = [it for it in items if it.chain is not None]
    if not verified:
        if rep.authenticated:
            rep.add("unverifiable", "no chain of the key store %s verifies any of the %d "
                    "authenticated records: another site's key store, or not this table's "
                    "journal" % (store.path, rep.authenticated))
        else:
            rep.add("unauthenticated", "none of the %d records has a MAC: a journal from before "
                    "the chain, or of a board never provisioned" % len(items))
        return rep
    # 2. The journal's own chains: its table is the one most of its verified
    # records are of; its provisionings those of that table whose J_PROVISION
    # is here, and before the first of them the one most records are of.
    table = Counter(book.table_of(it.chain) for it in verified).most_common(1)[0][0]
    provs = sorted((it.seq, it.chain) for it in verified
                   if it.declared() == it.chain and book.table_of(it.chain) == table)
    before = provs[0][0] if provs else 1 << 32
    counts = Counter(it.chain for it in verified
                     if it.seq < before and book.table_of(it.chain) == table)
    pre = counts.most_common(1)[0][0] if counts else (provs[0][1] if provs else None)
    starts = [s for s, _c in provs]

    def own(seq):
        i = bisect.bisect_right(starts, seq)
        return provs[i - 1][1] if i else pre

    start = min(it.seq for it in verified if book.table_of(it.chain) == table)
    # 3. Each record.
    for it in items:
        if not it.mac:
            it.kind = "before" if it.seq < start else "failing"
        elif it.chain is None:
            it.moved = book.renumbered(it.raw, own(it.seq))
            it.kind = "renumbered" if it.moved else "failing"
        elif it.chain != own(it.seq):
            it.kind = "replayed"
        else:
            it.kind = "genuine"
    # 4. The genuine records: copies, numbers signed twice, order.
    seen = {}
    top = 0
    for it in items:
        if it.kind != "genuine":
            continue
        had = seen.get(it.seq)
        if had is not None:
            it.kind = "copy"
            if had.raw == it.raw:
                rep.add("inserted", "%s is a copy of the record of that number at %s"
                        % (_what(it), had.where()), it)
            else:
                rep.add("rollback", "%s and the record at %s both verify with other bytes: the "
                        "number was signed twice (the board's key file put back from a copy)"
                        % (_what(it), had.where()), it)
            continue
        if it.seq < top:
            rep.add("reordered", "%s comes after record seq %d" % (_what(it), top), it)
        seen[it.seq] = it
        top = max(top, it.seq)
    held = set(seen)
    top = max(seen) if seen else 0
    for it in items:
        if it.kind == "renumbered":
            held.add(it.seq - it.moved)
        elif it.kind == "replayed" and it.seq <= top:
            held.add(it.seq)  # in the place of one of this journal's records
    for it in items:
        if it.kind == "replayed":
            other = book.table_of(it.chain)
            where = ("table %s" % other if other != table else
                     "an earlier or later provisioning of this table")
            rep.add("replayed", "%s verifies under %s, not under this journal's %s: replayed "
                    "from %s" % (_what(it), book.name(it.chain),
                                 book.name(own(it.seq)) if own(it.seq) else "chain", where), it,
                    chain=it.chain, table=other)
        elif it.kind == "renumbered":
            rep.add("renumbered", "%s is the genuine record seq %d with its number changed "
                    "(by %+d): records were %s before it and the numbers after moved to hide "
                    "it" % (_what(it), it.seq - it.moved, it.moved,
                            "inserted" if it.moved > 0 else "deleted"), it,
                    genuine_seq=it.seq - it.moved)
        elif it.kind == "failing":
            why = "has no MAC (its flag cleared)" if not it.mac else "does not verify"
            if it.seq in held:
                rep.add("inserted", "%s %s beside the genuine record of its number: inserted"
                        % (_what(it), why), it)
            else:
                rep.add("modified", "%s %s: its bytes were altered" % (_what(it), why), it)
                held.add(it.seq)
    # 5. Numbers missing between the records: deleted, or unreadable where
    # they were (altered without mending the CRC).
    genuine_pos = {it.seq: it.pos for it in seen.values()}
    corrupt = [((seg_index[seg], off), seg, off, n) for seg, off, n, kind in stretches
               if kind == "corrupt"]
    explained = set()
    nums = sorted(s for s in held if s >= start)
    for a, b in zip(nums, nums[1:], strict=False):
        if b == a + 1:
            continue
        lo = genuine_pos.get(a)
        hi = genuine_pos.get(b)
        bad = [c for c in corrupt if lo is not None and hi is not None and lo < c[0] < hi]
        if bad:
            for c in bad:
                explained.add(c[0])
            rep.add("modified", "records seq %d..%d: unreadable bytes where they were (%s @%d, "
                    "%d bytes): altered without mending the CRC" % (a + 1, b - 1, bad[0][1],
                                                                    bad[0][2], bad[0][3]),
                    seq=a + 1, segment=bad[0][1], offset=bad[0][2], last_seq=b - 1)
        else:
            rep.add("deleted", "records seq %d..%d are missing (between seq %d and seq %d)"
                    % (a + 1, b - 1, a, b), seq=a + 1, last_seq=b - 1)
    for pos, seg, off, n in corrupt:
        if pos not in explained:
            rep.add("inserted", "%s @%d: %d bytes that are not a record between two records"
                    % (seg, off, n), seq=None, segment=seg, offset=off)
    # 6. Records without a MAC before the chain.
    before_chain = [it for it in items if it.kind == "before"]
    if before_chain:
        rep.add("unauthenticated", "%d records before the chain's first (seq %d) have no MAC "
                "(seq %d..%d): written before the board was provisioned"
                % (len(before_chain), start, before_chain[0].seq, before_chain[-1].seq),
                before_chain[0], count=len(before_chain))
    # 7. The chain hash in sequence order, from the journal's anchors (a
    # J_PROVISION: zeros; a checkpoint: the head it names).
    link = None
    lseq = 0
    links = {}
    holes = False
    for seq in sorted(seen):
        it = seen[seq]
        if link is not None and seq > lseq + 1:
            holes = True  # the board's chain took records that are not here
        if it.type == R.J_PROVISION and it.declared() == it.chain:
            link, lseq, holes = bytes(R.CHAIN_LEN), 0, False
        elif it.type == R.J_METERS:
            h = carried_head(it.raw)
            if h is not None:
                if link is not None and h[0] == lseq and h[1] != link and not holes:
                    rep.add("rollback", "%s names the head %s; the records before it give %s: "
                            "records before it were signed again" % (
                                _what(it), C.head_text(*h), C.head_text(lseq, link)), it)
                if link is None or h[0] != lseq or h[1] != link:
                    link, lseq, holes = h[1], h[0], False
        if link is not None:
            link = fold(link, it.raw)
            lseq = seq
            links[seq] = link
    last = max(seen)
    if last in links:
        rep.head = (last, links[last])
    for ident in sorted({it.chain for it in seen.values()}, key=lambda i: min(
            s for s, x in seen.items() if x.chain == i)):
        mine = [s for s, x in seen.items() if x.chain == ident]
        rep.chains.append({"id": ident, "table": book.table_of(ident),
                           "first_seq": min(mine), "last_seq": max(mine), "records": len(mine),
                           "provisioned_here": ident in {c for _s, c in provs}})
    first = min(it.seq for it in items)
    if first > 1:
        oldest = next(it for it in items if it.seq == first)
        if oldest.type in SEGMENT_STARTS:
            rep.notes.append("the journal starts at seq %d: older records were rotated away"
                             % first)
        else:
            # Rotation deletes whole segments, and a segment starts with a
            # boot, a checkpoint or a technician's access: records cut from
            # the front of the oldest one were deleted, not rotated away.
            rep.add("deleted", "the journal's oldest record, %s, does not start a segment (a "
                    "boot, a meters checkpoint or a technician's access does): records before "
                    "seq %d were deleted, not rotated away" % (_what(oldest), first), oldest,
                    last_seq=first - 1)
    # 8. Against a head taken earlier.
    if head is not None:
        hs, hh = head
        if hs > last:
            rep.head_check = "truncated"
            rep.add("truncated", "the journal's last authenticated record is seq %d; the head "
                    "%s says the table had written up to seq %d: records %d..%d are gone"
                    % (last, C.head_text(hs, hh), hs, last + 1, hs), seq=last + 1,
                    last_seq=hs)
        elif hs in links:
            if links[hs] == hh:
                rep.head_check = "ok"
            else:
                rep.head_check = "rollback"
                rep.add("rollback", "the journal's chain at seq %d is %s, the head says %s: "
                        "not the journal the head was taken from (an older copy put back, or "
                        "records signed again)" % (hs, C.head_text(hs, links[hs]),
                                                   C.head_text(hs, hh)), seq=hs)
        else:
            rep.head_check = "unchecked"
            rep.add("unchecked", "no chain hash is known at seq %d: its record is not in the "
                    "journal, or no checkpoint or provisioning before it is" % hs, seq=hs)
    return rep


def cut_short(data, off, n, next_seq):
    """True when the n bytes at data[off] that are not a record are one cut
    by a power cut: segments pulled into one file (sicbo diag
    --pull-journal) put a record torn at the end of its segment before the
    next segment's first record. They start as a record, stop short of its
    length, and its number (when it has one) is the next record's: the
    number was used again after the cut."""
    if n < 1 or data[off] != R.MAGIC:
        return False
    if n >= 4 and (data[off + 2] | data[off + 3] << 8) <= n:
        return False  # as long as it says it is: a whole record whose CRC fails
    return n < 8 or next_seq is None or u32(data, off + R.OFF_SEQ) == next_seq


class Stream:
    """One table's records verified one at a time in sequence order (the
    floor service): take(raw) returns [(kind, text)] of what is wrong with
    it. Keeps the chain hash along (links: the last ones, for heads)."""

    KEEP = 4096  # chain hashes kept, by sequence number

    def __init__(self, book, table):
        self.book = book
        self.table = table  # the table id the floor knows the records by
        self.own = None  # the provisioning id of the table's chain
        self.link = None
        self.lseq = 0
        self.links = {}
        self.verified = 0
        self.failed = 0
        self.unauthenticated = 0

    def take(self, raw, gap=False):
        """gap: records may be missing just before it (the chain hash is then
        known again only from the next anchor)."""
        raw = bytes(raw)
        seq = u32(raw, R.OFF_SEQ)
        t = raw[R.OFF_TYPE]
        out = []
        if gap:
            self.link = None
        if not raw[R.OFF_FLAGS] & R.FLAG_MAC:
            self.unauthenticated += 1
            if self.own is not None:
                self.failed += 1
                out.append(("modified", "record seq %d has no MAC, and the table's chain "
                            "started before it: altered or inserted" % seq))
            return out
        b = self.book
        it = Item((0, 0), None, 0, raw)
        found = b.find(raw, (it.declared(), self.own))
        if found is None:
            self.failed += 1
            moved = b.renumbered(raw, self.own) if self.own is not None else 0
            if moved:
                out.append(("renumbered", "record seq %d is the genuine record seq %d with its "
                            "number changed" % (seq, seq - moved)))
            elif self.own is None:
                out.append(("unverifiable", "record seq %d verifies under no chain of the key "
                            "store" % seq))
            else:
                out.append(("modified", "record seq %d does not verify under %s: altered or "
                            "forged" % (seq, b.name(self.own))))
            return out
        if t == R.J_PROVISION and it.declared() == found:
            if b.table_of(found) != self.table:
                out.append(("replayed", "record seq %d starts %s, a chain of another table"
                            % (seq, b.name(found))))
                self.failed += 1
                return out
            self.own = found
            self.link = bytes(R.CHAIN_LEN)
        elif self.own is None:
            if b.table_of(found) != self.table:
                self.failed += 1
                out.append(("replayed", "record seq %d verifies under %s, another table's"
                            % (seq, b.name(found))))
                return out
            self.own = found
        elif found != self.own:
            self.failed += 1
            other = b.table_of(found)
            out.append(("replayed", "record seq %d verifies under %s, not under the table's %s: "
                        "replayed from %s" % (seq, b.name(found), b.name(self.own),
                                              "table %s" % other if other != self.table else
                                              "another provisioning of this table")))
            return out
        if t == R.J_METERS:
            h = carried_head(raw)
            if h is not None:
                if self.link is not None and h[0] == self.lseq and h[1] != self.link:
                    out.append(("rollback", "record seq %d names the head %s; the records "
                                "before it give %s" % (seq, C.head_text(*h),
                                                       C.head_text(self.lseq, self.link))))
                self.link, self.lseq = h[1], h[0]
        self.verified += 1
        if self.link is not None:
            self.link = fold(self.link, raw)
            self.lseq = seq
            self.links[seq] = self.link
            if len(self.links) > self.KEEP:
                del self.links[next(iter(self.links))]  # the oldest: taken in order
        return out

    def head(self, seq):
        """The chain hash after record seq as this stream computed it, or None."""
        return self.links.get(seq)
