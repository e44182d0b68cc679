"""A journal's MAC chain verified on the host (docs/tamper-evidence.md), with
the firmware's own chain (sicbo.chain: the same key steps, MACs and chain
hash) and the host's key store (host_tools/keystore.py).

`verify(items, stretches, store, head, table)` takes a whole journal as read
(`sicbo journal --verify`) and names each alteration it finds:

    modified         a record that does not verify where a record of its
                     number should be (its bytes altered, or its MAC flag
                     cleared), bytes that no longer make a record there, or a
                     record numbered where no record of the table can be
                     (above sicbo.records.MAX_ID, or further past the
                     journal's records than the table's numbers ever jump)
    inserted         a record that does not verify beside the genuine record
                     of its number, a copy of a genuine record, bytes between
                     two consecutive records
    deleted          numbers missing between the journal's records, or cut
                     from the front of its oldest segment
    reordered        a genuine record after one with a higher number
    renumbered       a genuine record whose number was changed (it verifies
                     under another number): the trace of an insertion or a
                     deletion hidden by renumbering the records after it
    replayed         a record that verifies under another chain of the key
                     store than the one in force at its number: another
                     table's, another provisioning of this table, or an
                     earlier provisioning's key used after a later one took
                     over (a copied key); a provisioning that names another
                     chain as the one it replaced than the records before it
    truncated        the journal ends before the head it is checked against
    rollback         the journal's chain hash at the head's number is not
                     the head's (an older copy put back, or the chain signed
                     again with keys read off the board), a number signed
                     twice with different bytes, a checkpoint whose head its
                     records do not give
    unauthenticated  records without a MAC before the chain's first: a journal
                     from before the chain (or a board never provisioned)
    unverifiable     no chain of the key store verifies any record, or
                     records lie past where a chain's key may be walked to
    unchecked        the head could not be checked (no chain hash known there)

A key is walked one step per sequence number from its provisioning's first
(the key store's base), so how far it is walked is bounded (Keys, Book): never
past sicbo.records.MAX_ID, and never more than a reach past the last number
verified under its chain (its base before): FAR for the chain in force (a
record's own), NEAR for every other chain, tried only to recognise a replay.

`Stream` verifies records one at a time in sequence order, as the floor
service stores them, with the same rules.
"""

import bisect
from collections import Counter

from sicbo import chain as C
from sicbo import records as R
from sicbo.journal import u32

MARK = 512  # a chain's key kept every MARK sequence numbers walked (going back is cheap)
RENUMBER = 16  # how far a changed sequence number is looked for
# How far past the last number verified under a chain (its base before) its
# key is walked for a record. The chain in force at a record (its own) goes
# FAR: 2**25 key steps, about a minute on the host, more than six years of a
# table's records at 24 h a day. Any other chain, tried only to recognise a
# replay, goes NEAR: the furthest a table's numbers jump (sicbo.records
# MAX_SKIP, after damage), so that trying every chain of a key store costs
# little. A record past a chain's reach does not verify under it.
FAR = 1 << 25
NEAR = R.MAX_SKIP + 1
# The records a segment starts with: a boot's first (J_BOOT, after the
# J_PROVISION of a provisioning the boot takes and the J_FAULTs of earlier
# failed boots it journals late: starts_segment) and rotation's checkpoint
# (J_METERS). What a technician's access journals goes after the newest
# segment's last record, in a segment of its own only when that one is torn
# (device/access.py): never where the journal's oldest record may be.
SEGMENT_STARTS = frozenset((R.J_BOOT, R.J_METERS))
FAILING = ("modified", "inserted", "deleted", "reordered", "renumbered", "replayed",
           "truncated", "rollback", "unauthenticated", "unverifiable", "unchecked")


class Keys:
    """The keys of one provisioning (keystore.Provisioning) at any sequence
    number from its base, within reach (see FAR)."""

    def __init__(self, prov):
        self.prov = prov
        self.marks = bytearray(prov.key)  # the keys of base, base + MARK, ... walked to
        self._ch = None
        self.anchor = prov.base  # the highest number verified under it, its base before
        self.hits = 0  # records verified under it

    def reaches(self, seq, reach=None):
        """True when the key of seq may be walked to: from the base, up to
        MAX_ID, at most `reach` (None: FAR) numbers past the anchor."""
        return self.prov.base <= seq <= R.MAX_ID and seq - self.anchor <= (
            FAR if reach is None else reach)

    def at(self, seq, reach=None):
        """A sicbo.chain.Chain holding the key of seq, or None out of reach."""
        if not self.reaches(seq, reach):
            return None
        base = self.prov.base
        n = len(self.marks) // C.KEY_LEN
        i = min((seq - base) // MARK, n - 1)
        ch = self._ch
        if ch is None or ch.seq > seq or ch.seq < base + i * MARK:
            key = self.marks[i * C.KEY_LEN:(i + 1) * C.KEY_LEN]
            ch = self._ch = C.Chain(C.key_file(self.prov.id, 0, base + i * MARK, 0, key,
                                               bytes(R.CHAIN_LEN)))
        while ch.seq < seq:
            ch.evolve()
            if ch.seq == base + n * MARK:
                self.marks += ch.key
                n += 1
        return ch

    def verifies(self, raw, seq=None, reach=None):
        """True when the record raw (bytes, FLAG_MAC) carries the MAC of this
        chain's key for its sequence number (or for `seq`)."""
        s = u32(raw, R.OFF_SEQ) if seq is None else seq
        ch = self.at(s, reach)
        if ch is None or not ch.check(raw, 0):
            return False
        self.hits += 1
        self.anchor = max(self.anchor, s)
        return True


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
    if not sep or not (seq.isascii() and seq.isdigit()) or not 0 < int(seq) < 1 << 32:
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
        self.missed = []  # Book.missed: the chains in force it lies past the reach of
        self.start = False  # its chain's J_PROVISION, taken as the chain's start
        self.bound = None  # replayed: the provisioning made before it (Book.successor)

    def declared(self):
        """The provisioning id a J_PROVISION names, else None."""
        if self.type != R.J_PROVISION or len(self.raw) < R.HEADER + 4:
            return None
        return u32(self.raw, R.HEADER + R.P_CHAIN)

    def previous(self):
        """The provisioning a J_PROVISION says it replaced (0: none), else None."""
        if self.type != R.J_PROVISION or len(self.raw) < R.HEADER + R.P_PREVIOUS + 4:
            return None
        return u32(self.raw, R.HEADER + R.P_PREVIOUS)

    def late(self):
        """True for a J_FAULT of an earlier boot, journaled by a later one."""
        return self.type == R.J_FAULT and len(self.raw) > R.HEADER + R.P_LATE and bool(
            self.raw[R.HEADER + R.P_LATE])

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
        self.table = None  # the table whose chains the journal is checked against
        self.table_given = False  # named by the caller (--table-id), not found
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
    """Every chain of a key store, each record tried against them; a table's
    provisionings in the order made (by base, then creation)."""

    def __init__(self, store):
        self.store = store
        self.keys = {c.id: Keys(c) for c in store.chains}
        lines = {}
        for i, c in enumerate(store.chains):
            lines.setdefault(c.table, []).append((c.base, c.created or "", i, c))
        self.lines = {t: [x[3] for x in sorted(v, key=lambda x: x[:3])]
                      for t, v in lines.items()}
        self.rank = {c.id: r for v in self.lines.values() for r, c in enumerate(v)}
        self.missed = []  # find()'s: [(id, anchor, reach, verified)] the record lay past

    def table_of(self, ident):
        c = self.store.get(ident)
        return c.table if c is not None else None

    def name(self, ident):
        return "provisioning %d (table %s)" % (ident, self.table_of(ident))

    def tables(self):
        return sorted(self.lines)

    def in_force(self, table, seq):
        """The id of the table's latest provisioning whose first key is at or
        below seq (the one a table that took each signs seq with), or None."""
        best = None
        for c in self.lines.get(table, ()):
            if c.base <= seq:
                best = c.id
        return best

    def successor(self, ident):
        """The provisioning of the same table made after `ident` (a higher
        base, created no earlier), its first key the next after ident's: the
        board takes a provisioning before it writes its next record, so
        ident's key signs nothing from its base on. None if there is none."""
        p = self.store.get(ident)
        if p is None:
            return None
        for c in self.lines.get(p.table, ()):
            if c.base > p.base and (c.created is None or p.created is None
                                    or c.created >= p.created):
                return c
        return None

    def find(self, raw, first=(), declared=None):
        """The id of the chain whose key verifies raw, or None. first:
        [(id, reach)] of the chains in force, tried first with their reach;
        then `declared` (a J_PROVISION's) and every other chain, with NEAR.
        Sets self.missed: [(id, anchor, reach, whether a record verified
        under it)] of the chains in force raw lies past the reach of."""
        seq = u32(raw, R.OFF_SEQ)
        self.missed = []
        tried = set()
        first = list(first)
        rest = [(declared, NEAR)] + [(i, NEAR) for i in self.keys]
        for n, (ident, reach) in enumerate(first + rest):
            if ident is None or ident in tried or ident not in self.keys:
                continue
            tried.add(ident)
            k = self.keys[ident]
            if not k.reaches(seq, reach):
                if n < len(first) and k.prov.base <= seq <= R.MAX_ID:
                    self.missed.append((ident, k.anchor, reach, k.hits > 0))
                continue
            if k.verifies(raw, seq, reach):
                return ident
        return None

    def renumbered(self, raw, ident):
        """How far raw's sequence number was moved from the one its MAC was
        made for under chain `ident` (0: it was not); the smallest move, up
        first. The numbers are tried upwards: the key walks on."""
        k = self.keys.get(ident)
        if k is None:
            return 0
        seq = u32(raw, R.OFF_SEQ)
        b = bytearray(raw)
        found = []
        for s in range(seq - RENUMBER, seq + RENUMBER + 1):
            if s == seq or not k.reaches(s):
                continue
            b[R.OFF_SEQ:R.OFF_SEQ + 4] = s.to_bytes(4, "little")
            if k.verifies(bytes(b), s):
                found.append(seq - s)
        return min(found, key=lambda m: (abs(m), -m)) if found else 0


def _reach_text(seq, name, anchor, reach):
    return ("seq %d lies %d numbers past seq %d, where %s could be walked to (the limit is %d "
            "numbers past seq %d, the last record verified under it or its first key)"
            % (seq, seq - anchor - reach, anchor + reach, name, reach, anchor))


def _far(book, it, table_known):
    """The text of a record that lies past the reach of the chain in force."""
    ident, anchor, reach, _hit = it.missed[0]
    text = _reach_text(it.seq, book.name(ident), anchor, reach)
    if reach < FAR and not table_known:
        text += ("; without --table-id the chains of the key store's %d tables share that "
                 "limit: --table-id ID walks that table's chain up to %d" % (
                     len(book.tables()), FAR))
    return text


def _astray(book, it):
    """The text of a record numbered further past the chain's last verified
    record than the table's numbers ever jump."""
    ident, anchor, _reach, _hit = it.missed[0]
    return ("%s lies %d numbers past seq %d, the last record verified under %s before it: a "
            "table's numbers never jump more than %d, so its number was altered (not tried: a "
            "key is walked at most %d numbers past its last record verified)"
            % (_what(it), it.seq - anchor, anchor, book.name(ident), R.MAX_SKIP, FAR))


def _beyond(what):
    return ("%s: its number is beyond any the board writes (above 0x%08X, sicbo.records "
            "MAX_ID): altered" % (what, R.MAX_ID))


def _bound_text(book, what, chain, succ):
    return ("%s verifies under %s, whose key signs nothing from seq %d on: %s was made for "
            "that number, and a board takes a provisioning before its next record, so this "
            "record was signed with the key of an earlier provisioning of this table after "
            "that: its key was copied (or %s was never taken: a deploy --provision that "
            "failed, or a board given this table's id later)"
            % (what, book.name(chain), succ.base, succ.name(), succ.name()))


def starts_segment(oldest, by_seq):
    """True when the journal's oldest record may be the first of a segment:
    J_BOOT or J_METERS, or a boot's records before its J_BOOT (the J_PROVISION
    of a provisioning the boot takes, then the J_FAULTs of failed boots it
    journals late: device/resumption.py)."""
    if oldest.type in SEGMENT_STARTS:
        return True
    it = oldest
    if it.type == R.J_PROVISION:
        if not it.start:
            return False
        it = by_seq.get(it.seq + 1)
    while it is not None and it.late():
        it = by_seq.get(it.seq + 1)
    return it is not oldest and it is not None and it.type == R.J_BOOT


def verify(found, stretches, store, head=None, table=None):
    """found: [(segment, offset, raw bytes)] of every CRC-valid record, in
    journal order; stretches: [(segment, offset, bytes, kind)] of what was
    not a record ("corrupt": between records, "torn": at a segment's end), in
    journal order with the records (pos = index in a merged order is not
    needed: each is placed by segment index and offset); store: a
    keystore.KeyStore; head: (seq, hash) or None; table: the table id the
    journal is to be of (--table-id), None: the one most of its records
    verify under. Returns a Report."""
    rep = Report()
    book = Book(store)
    rep.table_given = table is not None
    rep.table = table
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
    # 1. Which chain's key verifies each authenticated record. In number
    # order, so that each chain's key walks on (a journal's records are
    # consecutive); the chain in force is the one the record before verified
    # under, and before any did, the latest provisioning of the table (of
    # each table, sharing FAR, when the table is not given).
    auth = [it for it in items if it.mac]
    rep.authenticated = len(auth)
    rep.unauthenticated = len(items) - len(auth)
    last = None
    for it in sorted(auth, key=lambda i: (i.seq, i.pos)):
        first = []
        if last is not None:
            first.append((last, FAR))
        else:
            guess = [book.in_force(t, it.seq) for t in
                     ([table] if table is not None else book.tables())]
            guess = [c for c in guess if c is not None]
            first += [(c, max(NEAR, FAR // len(guess))) for c in guess]
        it.chain = book.find(it.raw, first, it.declared())
        if it.chain is None:
            it.missed = book.missed
        elif table is not None:
            if book.table_of(it.chain) == table:
                last = it.chain
        elif any(c == it.chain for c, _r in first) or it.chain == it.declared():
            last = it.chain
    verified = [it for it in items if it.chain is not None]
    if not verified:
        far = [it for it in auth if it.missed]
        if far:
            rep.add("unverifiable", "%d of the journal's %d authenticated records, from seq %d, "
                    "lie past the reach of the chains in force: %s: not verified"
                    % (len(far), rep.authenticated, far[0].seq,
                       _far(book, min(far, key=lambda i: i.seq), rep.table_given)),
                    min(far, key=lambda i: i.seq), count=len(far))
        elif rep.authenticated:
            rep.add("unverifiable", "no chain of the key store %s verifies any of the %d "
                    "authenticated records: another site's key store, or not this table's "
                    "journal" % (store.path, rep.authenticated))
        else:
            rep.add("unauthenticated", "none of the %d records has a MAC: a journal from before "
                    "the chain, or of a board never provisioned" % len(items))
        return rep
    # 2. The journal's table: the one given, else the one most of its
    # verified records are of.
    if table is None:
        table = Counter(book.table_of(it.chain) for it in verified).most_common(1)[0][0]
    rep.table = table
    mine = sorted((it for it in verified if book.table_of(it.chain) == table),
                  key=lambda i: (i.seq, i.pos))
    if not mine:
        theirs = Counter(book.table_of(it.chain) for it in verified).most_common()
        rep.add("replayed", "no record of the journal verifies under a chain of table %s: its "
                "%d verified records are %s's: another table's journal"
                % (table, len(verified), ", ".join("table %s (%d)" % tc for tc in theirs)))
        return rep
    # Its provisionings' starts: a J_PROVISION under the chain it names, the
    # first of that chain, after records of earlier provisionings of the
    # table only (by base: a chain never takes over from a later one).
    starts = []
    started = set()
    top = -1
    for it in mine:
        r = book.rank[it.chain]
        if (it.type == R.J_PROVISION and it.declared() == it.chain and it.chain not in started
                and r > top):
            it.start = True
            starts.append(it)
            started.add(it.chain)
        top = max(top, r)
    # Before the first start, the chain it says it replaced, else the one
    # most records before it are of.
    s0 = starts[0].seq if starts else 1 << 32
    q0 = starts[0].previous() if starts else None
    if q0 and book.table_of(q0) == table:
        pre = q0
    else:
        counts = Counter(it.chain for it in mine if it.seq < s0)
        pre = max(counts, key=lambda c: (counts[c], book.rank[c])) if counts else None
    sseq = [s.seq for s in starts]

    def own(seq):
        i = bisect.bisect_right(sseq, seq)
        return starts[i - 1].chain if i else pre

    def took_over(chain):
        s = next((x for x in starts if x.chain == chain), None)
        return s.seq if s is not None else min(x.seq for x in mine if x.chain == chain)

    # A chain's key signs nothing from its successor's base on (Book.successor),
    # unless the journal shows where the board replaced it: the successor's
    # J_PROVISION, or a later one's naming it as the chain replaced.
    replaced = {s.previous() for s in starts}
    succ = {}
    for c in {it.chain for it in mine}:
        n = book.successor(c)
        if n is not None and c not in replaced and n.id not in started:
            succ[c] = n
    start = mine[0].seq
    # 3. Each record.
    for it in items:
        if not it.mac:
            it.kind = "before" if it.seq < start else "failing"
        elif it.chain is None:
            if it.seq > R.MAX_ID:
                it.kind = "beyond"
            elif it.missed:
                it.kind = "astray" if any(m[3] for m in it.missed) else "far"
            else:
                it.moved = book.renumbered(it.raw, own(it.seq))
                it.kind = "renumbered" if it.moved else "failing"
        elif it.chain != own(it.seq):
            it.kind = "replayed"
        elif it.chain in succ and it.seq >= succ[it.chain].base:
            it.kind = "replayed"
            it.bound = succ[it.chain]
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
    # A provisioning that names another chain as the one it replaced than the
    # one in force before it.
    for a, b in zip(starts, starts[1:], strict=False):
        q = b.previous()
        if q and q != a.chain:
            rep.add("replayed", "%s starts %s, which replaced %s; the records before it are "
                    "under %s (from seq %d): not the chain the table had in force there "
                    "(records of %s deleted, or signed with a copied key)"
                    % (_what(b), book.name(b.chain), book.name(q), book.name(a.chain), a.seq,
                       book.name(q)), b, chain=b.chain, table=table)
    far = []
    for it in items:
        if it.kind == "replayed":
            other = book.table_of(it.chain)
            mine_c = own(it.seq)
            if it.bound is not None:
                text = _bound_text(book, _what(it), it.chain, it.bound)
            elif other != table:
                text = ("%s verifies under %s, not under this journal's %s: replayed from table "
                        "%s" % (_what(it), book.name(it.chain),
                                book.name(mine_c) if mine_c else "chain", other))
            elif mine_c is not None and book.rank[it.chain] < book.rank[mine_c]:
                text = ("%s verifies under %s: signed with the key of an earlier provisioning "
                        "of this table after provisioning %d took over at seq %d: its key was "
                        "copied" % (_what(it), book.name(it.chain), mine_c, took_over(mine_c)))
            else:
                text = ("%s verifies under %s, not under this journal's %s: replayed from an "
                        "earlier or later provisioning of this table"
                        % (_what(it), book.name(it.chain),
                           book.name(mine_c) if mine_c else "chain"))
            rep.add("replayed", text, it, chain=it.chain, table=other)
        elif it.kind == "renumbered":
            rep.add("renumbered", "%s is the genuine record seq %d with its number changed "
                    "(by %+d): records were %s before it and the numbers after moved to hide "
                    "it" % (_what(it), it.seq - it.moved, it.moved,
                            "inserted" if it.moved > 0 else "deleted"), it,
                    genuine_seq=it.seq - it.moved)
        elif it.kind == "beyond":
            rep.add("modified", _beyond(_what(it)), it)
        elif it.kind == "astray":
            rep.add("modified", _astray(book, it), it)
        elif it.kind == "far":
            far.append(it)
        elif it.kind == "failing":
            why = "has no MAC (its flag cleared)" if not it.mac else "does not verify"
            if it.seq in held:
                rep.add("inserted", "%s %s beside the genuine record of its number: inserted"
                        % (_what(it), why), it)
            else:
                rep.add("modified", "%s %s: its bytes were altered" % (_what(it), why), it)
                if it.seq <= top + NEAR:
                    held.add(it.seq)
    if far:
        f0 = min(far, key=lambda i: i.seq)
        rep.add("unverifiable", "%d record(s) from seq %d (%s) lie past the reach of the chain "
                "in force: %s: not verified" % (len(far), f0.seq, _type_name(f0.type),
                                               _far(book, f0, rep.table_given)),
                f0, count=len(far))
    if not seen:
        return rep  # no record of the chain in force: each is named above
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
        if it.start:
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
        nums = [s for s, x in seen.items() if x.chain == ident]
        rep.chains.append({"id": ident, "table": book.table_of(ident),
                           "first_seq": min(nums), "last_seq": max(nums), "records": len(nums),
                           "provisioned_here": ident in started})
    first = min(it.seq for it in items)
    if first > 1:
        by_seq = {}
        for it in items:
            by_seq.setdefault(it.seq, it)
        oldest = by_seq[first]
        if starts_segment(oldest, by_seq):
            rep.notes.append("the journal starts at seq %d: older records were rotated away"
                             % first)
        else:
            # Rotation deletes whole segments, and a segment starts with a
            # boot or a checkpoint: records cut from the front of the oldest
            # one were deleted, not rotated away.
            rep.add("deleted", "the journal's oldest record, %s, does not start a segment (a "
                    "boot's first records or rotation's meters checkpoint do; a technician's "
                    "access opens a segment of its own only after a torn one): records before "
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
    it. Keeps the chain hash along (links: the last ones, for heads). The
    same rules as verify(): the chain in force walks FAR, the others NEAR; a
    provisioning takes over only from an earlier one of the table, once; a
    chain's key signs nothing from its successor's base on."""

    KEEP = 4096  # chain hashes kept, by sequence number

    def __init__(self, book, table):
        self.book = book
        self.table = table  # the table id the floor knows the records by
        self.own = None  # the provisioning id of the table's chain
        self.own_start = None  # the number of its J_PROVISION, when taken here
        self.started = set()  # the provisionings whose J_PROVISION was taken
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
        if seq > R.MAX_ID:
            self.failed += 1
            out.append(("modified", _beyond("record seq %d" % seq)))
            return out
        first = [(self.own if self.own is not None else b.in_force(self.table, seq), FAR)]
        found = b.find(raw, first, it.declared())
        if found is None:
            self.failed += 1
            if b.missed:
                ident, anchor, reach, hit = b.missed[0]
                if hit:
                    out.append(("modified", "record seq %d lies %d numbers past seq %d, the last "
                                "record verified under %s: a table's numbers never jump more "
                                "than %d, so its number was altered (not tried)"
                                % (seq, seq - anchor, anchor, b.name(ident), R.MAX_SKIP)))
                else:
                    out.append(("unverifiable", "record %s: not verified"
                                % _reach_text(seq, b.name(ident), anchor, reach)))
                return out
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
        other = b.table_of(found)
        if other != self.table:
            self.failed += 1
            if t == R.J_PROVISION and it.declared() == found:
                out.append(("replayed", "record seq %d starts %s, a chain of another table"
                            % (seq, b.name(found))))
            else:
                out.append(("replayed", "record seq %d verifies under %s, another table's"
                            % (seq, b.name(found))))
            return out
        if (t == R.J_PROVISION and it.declared() == found and found not in self.started
                and (self.own is None or b.rank[found] > b.rank[self.own])):
            q = it.previous()
            if self.own is not None and q and q != self.own:
                self.failed += 1
                out.append(("replayed", "record seq %d starts %s, which replaced provisioning "
                            "%d; the table's records before it are under %s: not the chain "
                            "the table had in force there" % (seq, b.name(found), q,
                                                              b.name(self.own))))
            self.own = found
            self.own_start = seq
            self.started.add(found)
            self.link = bytes(R.CHAIN_LEN)
        elif self.own is None or (gap and found != self.own
                                  and b.rank[found] > b.rank[self.own]):
            self.own = found  # in force from before (a later one: taken in the gap)
            self.own_start = None
        elif found != self.own:
            self.failed += 1
            if b.rank[found] < b.rank[self.own]:
                out.append(("replayed", "record seq %d verifies under %s: signed with the key of "
                            "an earlier provisioning of this table after provisioning %d took "
                            "over%s: its key was copied" % (
                                seq, b.name(found), self.own,
                                " at seq %d" % self.own_start if self.own_start else "")))
            else:
                out.append(("replayed", "record seq %d verifies under %s, not under the table's "
                            "%s: replayed from another provisioning of this table (its "
                            "J_PROVISION not taken before it)" % (seq, b.name(found),
                                                                  b.name(self.own))))
            return out
        n = b.successor(self.own)
        if n is not None and seq >= n.base:
            self.failed += 1
            out.append(("replayed", _bound_text(b, "record seq %d" % seq, self.own, n)))
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
