"""The host's key store of the tables' MAC chains (docs/tamper-evidence.md).

One JSON file per site (or per table), readable by its owner only (mode
0600: one that group or others may read is refused, as ssh refuses a key),
written atomically (a temporary file, then renamed), never copied to a board:

    {"format": "sicbo-chain-keys", "version": 1,
     "chains": [{"id": 2882400018, "table": "T01", "base": 1,
                 "key": "<64 hex digits>", "created": "2026-12-01T21:00:00Z"}, ...]}

Each chain is one provisioning (`sicbo deploy --provision KEYSTORE`): `id`
(u32, not 0, unique in the store) is the id its J_PROVISION record names;
`key` is K(base), the key of sequence number `base`, from which every later
key follows (sicbo/chain.py); `base` is at or below the sequence number of
the chain's first record (the board moves the key on to it when it takes the
provisioning). `table` is the table's id (docs/floor.md). Nothing in it is
the board's current key: the board's keys move on and the host's stays the
first.
"""

import datetime
import json
import os
import stat

from host_tools import jsonfile
from host_tools.cli import UsageError

FORMAT = "sicbo-chain-keys"
VERSION = 1
KEY_HEX = 64


class Provisioning:
    """One chain of the store."""

    def __init__(self, ident, table, base, key, created):
        self.id = ident
        self.table = table
        self.base = base
        self.key = key  # bytes: K(base)
        self.created = created

    def as_json(self):
        return {"id": self.id, "table": self.table, "base": self.base,
                "key": self.key.hex(), "created": self.created}

    def name(self):
        return "provisioning %d (table %s)" % (self.id, self.table)


class KeyStore:
    """A key store file (see the module doc); `chains` in the order made."""

    def __init__(self, path, chains=()):
        self.path = path
        self.chains = list(chains)

    def get(self, ident):
        for c in self.chains:
            if c.id == ident:
                return c
        return None

    def of_table(self, table):
        return [c for c in self.chains if c.table == table]

    def new_chain(self, table, base):
        """A new provisioning for `table` whose first key is that of sequence
        number `base` (at or below the chain's first record), added to the
        store (not yet saved)."""
        from host_tools.floor.site import check_table_id

        try:
            check_table_id("table", table)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if not isinstance(base, int) or not 1 <= base < 1 << 32:
            raise UsageError("the chain's first sequence number %r is not 1..2**32-1" % (base,))
        while True:
            ident = int.from_bytes(os.urandom(4), "little")
            if ident and self.get(ident) is None:
                break
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        c = Provisioning(ident, table, base, os.urandom(32),
                         now.isoformat().replace("+00:00", "Z"))
        self.chains.append(c)
        return c

    def provisioning_file(self, chain):
        """The bytes of the provisioning file a board takes (sicbo/chain.py's
        key file layout, its chain not yet started)."""
        from sicbo import chain as C

        return C.key_file(chain.id, 0, chain.base, 0, chain.key, bytes(16))

    def save(self):
        """Write the store atomically, mode 0600."""
        data = json.dumps({"format": FORMAT, "version": VERSION,
                           "chains": [c.as_json() for c in self.chains]}, indent=1) + "\n"
        if len(data.encode("utf-8")) > jsonfile.KEYSTORE_MAX:
            # Never a store that load() would then refuse: the keys stay as they were.
            raise UsageError("the key store %s would be larger than %d bytes, the most it may "
                             "be: start a new store for new provisionings"
                             % (self.path, jsonfile.KEYSTORE_MAX))
        folder = os.path.dirname(os.path.abspath(self.path))
        tmp = os.path.join(folder, ".%s.tmp" % os.path.basename(self.path))
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as e:
            raise UsageError("cannot write the key store %s: %s" % (self.path, e.strerror or e)) \
                from None


def load(path, create=False):
    """The key store at path (UsageError, one line, when it cannot be used);
    with create, an empty one when there is no file (saved later)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if create:
            return KeyStore(path)
        raise UsageError("no key store %s" % path) from None
    except OSError as e:
        raise UsageError("cannot read the key store %s: %s" % (path, e.strerror or e)) from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError("the key store %s is not a file" % path)
    if st.st_mode & 0o077:
        raise UsageError("the key store %s may be read by others (mode %03o): chmod 600 %s"
                         % (path, st.st_mode & 0o777, path))
    # Bounded, UTF-8, JSON with no key twice (host_tools/jsonfile.py).
    _, doc = jsonfile.load(path, jsonfile.KEYSTORE_MAX, "key store")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError("%s is not a sicbo key store (format %r)" % (path, FORMAT))
    if doc.get("version") != VERSION:
        raise UsageError("the key store %s has version %r, this sicbo reads %d"
                         % (path, doc.get("version"), VERSION))
    chains = doc.get("chains")
    if not isinstance(chains, list):
        raise UsageError("the key store %s has no list of chains" % path)
    out = []
    seen = set()
    for i, c in enumerate(chains):
        out.append(_chain(path, i, c, seen))
    return KeyStore(path, out)


def _chain(path, i, c, seen):
    def bad(why):
        return UsageError("the key store %s: chain %d: %s" % (path, i + 1, why))

    if not isinstance(c, dict):
        raise bad("not an object")
    ident = c.get("id")
    if not isinstance(ident, int) or isinstance(ident, bool) or not 0 < ident < 1 << 32:
        raise bad("id %r is not 1..2**32-1" % (ident,))
    if ident in seen:
        raise bad("id %d twice" % ident)
    seen.add(ident)
    table = c.get("table")
    if not isinstance(table, str) or not table:
        raise bad("no table")
    base = c.get("base")
    if not isinstance(base, int) or isinstance(base, bool) or not 0 < base < 1 << 32:
        raise bad("base %r is not 1..2**32-1" % (base,))
    key = c.get("key")
    try:
        raw = bytes.fromhex(key) if isinstance(key, str) and len(key) == KEY_HEX else None
    except ValueError:
        raw = None
    if raw is None:
        raise bad("key is not %d hex digits" % KEY_HEX)
    created = c.get("created")
    return Provisioning(ident, table, base, raw, created if isinstance(created, str) else None)
