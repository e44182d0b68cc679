"""The floor view's own tables in the floor's store: staff accounts, the
audit trail, the acknowledgements of alarms and the approved code hashes
and configuration ids (docs/floor.md, "The floor view").

The audit trail, the acknowledgements and the approvals are append-only:
SQLite triggers refuse every UPDATE and DELETE of them, so that no path of
this code or of another client of the file can edit what was done; an
approval is withdrawn by a later `revoke` row, never by editing the first.
Passwords are stored as scrypt (hashlib.scrypt: a standard memory-hard key
derivation function) of the password with a random salt of their own; the
password itself is never stored.

The service's ingest writes to the same file in its own transactions (WAL);
these writes are small and wait their turn (busy_timeout)."""

import hashlib
import hmac
import math
import os
import pathlib
import re
import sqlite3
import time

from host_tools.floor import store

WEB_SCHEMA_VERSION = "1"

WEB_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    name TEXT PRIMARY KEY,
    kdf TEXT NOT NULL,
    created REAL NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    user TEXT,
    action TEXT NOT NULL,
    table_id TEXT,
    alarm_id INTEGER,
    detail TEXT NOT NULL,
    remote TEXT
);
CREATE TABLE IF NOT EXISTS acks (
    alarm_id INTEGER PRIMARY KEY,
    user TEXT NOT NULL,
    note TEXT NOT NULL,
    at REAL NOT NULL,
    audit_id INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS approvals (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('code', 'config')),
    value TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('approve', 'revoke')),
    by TEXT NOT NULL,
    note TEXT NOT NULL,
    at REAL NOT NULL
);
-- The sign-in throttle counts recent failures: without it each attempt
-- would read the whole (append-only, ever longer) trail.
CREATE INDEX IF NOT EXISTS audit_action_at ON audit (action, at);
"""

APPEND_ONLY = ("audit", "acks", "approvals")

_TRIGGERS = "".join(
    "CREATE TRIGGER IF NOT EXISTS %s_no_%s BEFORE %s ON %s BEGIN"
    " SELECT RAISE(ABORT, '%s is append-only'); END;\n" % (t, op.lower(), op, t, t)
    for t in APPEND_ONLY for op in ("UPDATE", "DELETE"))

NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
HEX_RE = re.compile(r"^[0-9a-f]*$")
# What an approval names, as the tables' status gives it (docs/floor.md):
# the code hash is the first 16 hex digits of the code's sha256
# (device/link/plan.py `_code_hash`); the full 64 that `sicbo deploy` prints
# are taken too and stored as those 16. A configuration id is the 6 bytes of
# J_CONFIG (sicbo.records CONFIG_ID_LEN), 12 hex digits.
CODE_HEX = 16
CODE_SHA256_HEX = 64
CONFIG_HEX = 12
NOTE_MAX = 500

# scrypt with N=2**14, r=8, p=1 (16 MiB, about 50 ms here): the parameters
# are stored with each hash, so they can be raised for new passwords later.
SCRYPT_N = 1 << 14
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
KEY_BYTES = 32


# Sign-in throttling (docs/floor.md): counted from the audit trail's
# sign-in-failed rows, so that a restart of the service forgets nothing.
# Within any SIGNIN_WINDOW_S: SIGNIN_FAILS_ACCOUNT failures of one account
# since its last sign-in lock that account; SIGNIN_FAILS_ADDRESS from one
# address (whatever the names, known or not) lock that address. A lock
# lifts when the oldest of those failures is SIGNIN_WINDOW_S old.
SIGNIN_WINDOW_S = 15 * 60
SIGNIN_FAILS_ACCOUNT = 5
SIGNIN_FAILS_ADDRESS = 20


class StaffError(ValueError):
    """A refusal for people (one line)."""


class Throttled(Exception):
    """A sign-in refused unchecked: too many failures of the account
    (scope "account") or from the address ("address") within the window;
    retry_after: whole seconds until one is taken again."""

    def __init__(self, scope, retry_after):
        Exception.__init__(self, scope, retry_after)
        self.scope = scope
        self.retry_after = retry_after

    def text(self):
        minutes = max(1, math.ceil(self.retry_after / 60))
        return "too many failed sign-ins %s: try again in %d minute%s" % (
            "for this account" if self.scope == "account" else "from this address",
            minutes, "" if minutes == 1 else "s")


def prepare(conn):
    """Make the view's tables and triggers in a store (idempotent)."""
    conn.executescript(WEB_SCHEMA + _TRIGGERS)
    conn.execute("INSERT OR IGNORE INTO meta VALUES ('web_schema', ?)", (WEB_SCHEMA_VERSION,))


def check_store(path):
    """StoreError unless the existing file at path is a floor store (its
    `meta` table names the floor's schema): an unrelated SQLite file, an
    empty file or one that is no database is refused, never written to."""
    if os.path.isdir(path):
        raise store.StoreError("%s is a folder, not a floor store: give the floor service's "
                               "store (sicbo floor --db)" % path)
    try:
        uri = pathlib.Path(os.path.abspath(path)).as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True)
        try:
            conn.execute("PRAGMA busy_timeout=10000")
            meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table'"
                                " AND name='meta'").fetchone()
            row = meta and conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        raise store.StoreError("cannot open %s as the floor's store: %s" % (path, e)) from None
    if not row:
        raise store.StoreError("%s is not a floor store (no floor schema in it): give the "
                               "floor service's store (sicbo floor --db)" % path)


def open_rw(path):
    """A writer's connection to the store, the view's tables ready. A file
    that exists must be a floor store already (check_store); a path where
    none is is made a new one with the floor's schema, as the service makes
    it."""
    if os.path.lexists(path):
        check_store(path)
    conn = store.open_rw(path)
    prepare(conn)
    return conn


def ensure(path):
    """Make the view's tables in the store at path, then close."""
    open_rw(path).close()


# ---- passwords ----------------------------------------------------------------------


def hash_password(password, salt=None, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P):
    """The stored form: scrypt$N$r$p$salt$key (hex)."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=KEY_BYTES,
                         maxmem=64 * 1024 * 1024)
    return "scrypt$%d$%d$%d$%s$%s" % (n, r, p, salt.hex(), key.hex())


def check_password(password, kdf):
    try:
        name, n, r, p, salt, key = kdf.split("$")
        if name != "scrypt":
            return False
        got = hashlib.scrypt(password.encode("utf-8"), salt=bytes.fromhex(salt), n=int(n),
                             r=int(r), p=int(p), dklen=len(key) // 2,
                             maxmem=64 * 1024 * 1024)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got.hex(), key)


# An unknown name costs the same as a known one: the time of a refusal does
# not tell which names exist.
_DUMMY = hash_password("not a password", salt=b"\0" * SALT_BYTES)


def check_name(name):
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise StaffError("user name %r is not 1 to 32 characters of A-Z a-z 0-9 _ . -" % (name,))
    return name


def add_user(conn, name, password, by="cli"):
    check_name(name)
    if len(password) < 8:
        raise StaffError("a password needs at least 8 characters")
    kdf = hash_password(password)
    now = time.time()
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO users (name, kdf, created) VALUES (?,?,?)", (name, kdf, now))
        _audit(conn, now, by, "user-add", None, None, "account %s made" % name, None)
        conn.execute("COMMIT")
    except sqlite3.IntegrityError:
        conn.execute("ROLLBACK")
        raise StaffError("user %s exists already" % name) from None


def set_disabled(conn, name, disabled, by="cli"):
    now = time.time()
    conn.execute("BEGIN IMMEDIATE")
    cur = conn.execute("UPDATE users SET disabled=? WHERE name=?", (int(disabled), name))
    if cur.rowcount != 1:
        conn.execute("ROLLBACK")
        raise StaffError("no user %s" % name)
    _audit(conn, now, by, "user-disable" if disabled else "user-enable", None, None,
           "account %s %s" % (name, "disabled" if disabled else "enabled"), None)
    conn.execute("COMMIT")


def users(conn):
    return conn.execute("SELECT name, created, disabled FROM users ORDER BY name").fetchall()


def throttle(conn, account, remote, now):
    """(scope, seconds to wait) when the account (a known name, or None) or
    the address remote has failed too often to sign in within the window
    ending at now, else None. The longer wait wins when both have."""
    since = now - SIGNIN_WINDOW_S
    waits = []
    if account is not None:
        # Only failures after the account's last sign-in count.
        last = conn.execute("SELECT MAX(id) FROM audit WHERE action='sign-in' AND at>?"
                            " AND user=?", (since, account)).fetchone()[0] or 0
        row = conn.execute("SELECT at FROM audit WHERE action='sign-in-failed' AND at>?"
                           " AND user=? AND id>? ORDER BY at DESC LIMIT 1 OFFSET ?",
                           (since, account, last, SIGNIN_FAILS_ACCOUNT - 1)).fetchone()
        if row is not None:
            waits.append((row[0] + SIGNIN_WINDOW_S - now, "account"))
    if remote:
        row = conn.execute("SELECT at FROM audit WHERE action='sign-in-failed' AND at>?"
                           " AND remote=? ORDER BY at DESC LIMIT 1 OFFSET ?",
                           (since, remote, SIGNIN_FAILS_ADDRESS - 1)).fetchone()
        if row is not None:
            waits.append((row[0] + SIGNIN_WINDOW_S - now, "address"))
    if not waits:
        return None
    wait, scope = max(waits)
    return scope, max(1, math.ceil(wait))


def sign_in(conn, name, password, remote):
    """The user's name when the password is right and the account enabled,
    else None; both are kept in the audit trail. Throttled (kept in the
    trail as sign-in-throttled, no failure) when the account or the address
    has failed too often: the password is then not even checked."""
    row = None
    if isinstance(name, str) and NAME_RE.match(name):
        row = conn.execute("SELECT kdf, disabled FROM users WHERE name=?", (name,)).fetchone()
    # A name that is no account is not kept: it is often the password typed
    # in the wrong field, and the audit trail is open to every viewer.
    shown = name if row is not None else None
    held = throttle(conn, shown, remote, time.time())
    if held is not None:
        scope, wait = held
        audit(conn, shown, "sign-in-throttled", None, None,
              "too many failed sign-ins %s (%d within %d minutes): refused unchecked for %d s"
              % ("of this account" if scope == "account" else "from this address",
                 SIGNIN_FAILS_ACCOUNT if scope == "account" else SIGNIN_FAILS_ADDRESS,
                 SIGNIN_WINDOW_S // 60, wait), remote)
        raise Throttled(scope, wait)
    ok = check_password(password, row[0] if row else _DUMMY) and row is not None and not row[1]
    why = ("signed in" if ok else "no such account" if row is None
           else "account disabled" if row[1] else "wrong password")
    audit(conn, shown, "sign-in" if ok else "sign-in-failed", None, None, why, remote)
    return name if ok else None


# ---- the audit trail ----------------------------------------------------------------


# Every action the audit trail holds (docs/floor.md, the `audit` table): a
# row of any other is refused, so that a filter by action finds them all.
AUDIT_ACTIONS = ("sign-in", "sign-in-failed", "sign-in-throttled", "sign-out", "acknowledge",
                 "request-refused", "user-add", "user-disable", "user-enable", "approve",
                 "revoke")


def _audit(conn, now, user, action, table_id, alarm_id, detail, remote):
    if action not in AUDIT_ACTIONS:
        raise ValueError("no audit action %r" % (action,))
    cur = conn.execute(
        "INSERT INTO audit (at, user, action, table_id, alarm_id, detail, remote)"
        " VALUES (?,?,?,?,?,?,?)", (now, user, action, table_id, alarm_id, detail, remote))
    return cur.lastrowid


def audit(conn, user, action, table_id, alarm_id, detail, remote):
    conn.execute("BEGIN IMMEDIATE")
    try:
        i = _audit(conn, time.time(), user, action, table_id, alarm_id, detail, remote)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return i


def _audit_where(before, user, action, table_id):
    where = []
    args = []
    for column, value in (("id<", before), ("user=", user), ("action=", action),
                          ("table_id=", table_id)):
        if value is not None:
            where.append(column + "?")
            args.append(value)
    return (" WHERE " + " AND ".join(where) if where else ""), args


def audit_rows(conn, limit=500, before=None, user=None, action=None, table_id=None):
    """The audit trail, newest first: at most limit rows (None: all), those
    with ids below before, of one user, one action or one table when given."""
    where, args = _audit_where(before, user, action, table_id)
    return conn.execute("SELECT id, at, user, action, table_id, alarm_id, detail, remote"
                        " FROM audit" + where + " ORDER BY id DESC LIMIT ?",
                        args + [-1 if limit is None else limit]).fetchall()


def audit_count(conn, user=None, action=None, table_id=None):
    where, args = _audit_where(None, user, action, table_id)
    return conn.execute("SELECT COUNT(*) FROM audit" + where, args).fetchone()[0]


# ---- acknowledgements ---------------------------------------------------------------


def acknowledge(conn, alarm_id, user, note, remote):
    """The alarm acknowledged by user with a note (kept with it and in the
    audit trail); StaffError when it is unknown or acknowledged already.
    Returns its table id."""
    note = (note or "").strip()
    if not note:
        raise StaffError("an acknowledgement needs a note: what was found, what was done")
    if len(note) > NOTE_MAX:
        raise StaffError("the note is longer than %d characters" % NOTE_MAX)
    now = time.time()
    conn.execute("BEGIN IMMEDIATE")
    try:
        # The account as it is now, in the same transaction: a session signed
        # in before `users disable` (another process) acknowledges nothing.
        acct = conn.execute("SELECT disabled FROM users WHERE name=?", (user,)).fetchone()
        if acct is None or acct[0]:
            raise StaffError("the account %s is disabled or gone: sign in again" % user)
        row = conn.execute("SELECT table_id, kind, text FROM alarms WHERE id=?",
                           (alarm_id,)).fetchone()
        if row is None:
            raise StaffError("no alarm %s" % alarm_id)
        done = conn.execute("SELECT user FROM acks WHERE alarm_id=?", (alarm_id,)).fetchone()
        if done is not None:
            raise StaffError("alarm %d was acknowledged already by %s" % (alarm_id, done[0]))
        tid, kind, text = row
        a = _audit(conn, now, user, "acknowledge", tid, alarm_id,
                   "alarm %d (%s: %s): %s" % (alarm_id, kind, text[:200], note), remote)
        conn.execute("INSERT INTO acks VALUES (?,?,?,?,?)", (alarm_id, user, note, now, a))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return tid


# ---- approvals ----------------------------------------------------------------------


def check_hex(kind, value):
    """The value an approval of kind stores, as the tables' status gives it
    (lower case): a code hash of 16 hex digits, or the full sha256 of 64 cut
    to its first 16; a configuration id of 12. Anything else is refused: it
    could never match a table."""
    v = (value or "").strip().lower()
    if not v or not HEX_RE.match(v):
        shown = value if value is None or len(value) <= 80 else value[:80] + "..."
        raise StaffError("%s %r is not hex (the code sha256 as `sicbo deploy` prints it, the "
                         "configuration id as the table's status gives it)" % (kind, shown))
    shown = v if len(v) <= 80 else v[:80] + "..."
    if kind == "code":
        if len(v) not in (CODE_HEX, CODE_SHA256_HEX):
            raise StaffError("code %s is %d hex digits: give the code sha256 as `sicbo deploy` "
                             "prints it (%d) or its first %d, as tables report it"
                             % (shown, len(v), CODE_SHA256_HEX, CODE_HEX))
        return v[:CODE_HEX]
    if len(v) != CONFIG_HEX:
        raise StaffError("config %s is %d hex digits: a configuration id is %d (the 6 bytes "
                         "of J_CONFIG, as the table's status gives it)"
                         % (shown, len(v), CONFIG_HEX))
    return v


def approve(conn, kind, value, by, note="", revoke=False):
    value = check_hex(kind, value)
    now = time.time()
    action = "revoke" if revoke else "approve"
    conn.execute("BEGIN IMMEDIATE")
    try:
        if revoke and value not in _approved(conn, kind):
            raise StaffError("%s %s is not approved" % (kind, value))
        conn.execute("INSERT INTO approvals (kind, value, action, by, note, at)"
                     " VALUES (?,?,?,?,?,?)", (kind, value, action, by, note, now))
        _audit(conn, now, by, action, None, None, "%s %s %s%s" % (
            kind, value, "approved" if not revoke else "revoked",
            (": " + note) if note else ""), None)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return value


def _approved(conn, kind):
    # The last word on each value counts. A code approved as its full
    # sha256 (before approvals were cut to the tables' 16 digits) counts as
    # those 16.
    out = set()
    for value, action in conn.execute(
            "SELECT value, action FROM approvals WHERE kind=? ORDER BY id", (kind,)):
        if kind == "code":
            value = value[:CODE_HEX]
        if action == "approve":
            out.add(value)
        else:
            out.discard(value)
    return out


def approved(conn):
    """{'code': set of hashes, 'config': set of ids} approved now."""
    try:
        return {"code": _approved(conn, "code"), "config": _approved(conn, "config")}
    except sqlite3.OperationalError:
        return {"code": set(), "config": set()}  # a store without the view's tables yet


def approval_rows(conn):
    return conn.execute("SELECT id, kind, value, action, by, note, at FROM approvals"
                        " ORDER BY id").fetchall()
