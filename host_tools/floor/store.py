"""The floor's store: one SQLite file (docs/floor.md, "The store").

Every journal record of every table once (table id and sequence number are
the key), its bytes as the table sent them and its decoded header for
queries; what the floor found (gaps closed as final, damage, duplicates,
conflicts, payloads that are not records), the tables' last status, the
rounds and alarms the records tell, and the meters checkpoints beside the
floor's own count. The service writes each batch in one transaction and
acknowledges only after it committed; readers (`sicbo floor records`, the
web page) open the file read-only beside it (WAL)."""

import os
import sqlite3

SCHEMA_VERSION = "1"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tables (
    table_id TEXT PRIMARY KEY,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    online INTEGER,
    status TEXT,
    status_at REAL,
    code TEXT,
    config TEXT,
    state TEXT,
    round INTEGER,
    boot INTEGER,
    oldest INTEGER NOT NULL DEFAULT 0,
    status_seq INTEGER NOT NULL DEFAULT 0,
    missing TEXT NOT NULL DEFAULT '[]',
    last_seq INTEGER NOT NULL DEFAULT 0,
    acked INTEGER NOT NULL DEFAULT 0,
    open_gaps INTEGER NOT NULL DEFAULT 0,
    records INTEGER NOT NULL DEFAULT 0,
    duplicates INTEGER NOT NULL DEFAULT 0,
    conflicts INTEGER NOT NULL DEFAULT 0,
    damaged INTEGER NOT NULL DEFAULT 0,
    rejected INTEGER NOT NULL DEFAULT 0,
    lost INTEGER NOT NULL DEFAULT 0,
    late INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS records (
    table_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type INTEGER NOT NULL,
    round INTEGER NOT NULL,
    boot INTEGER NOT NULL,
    ticks INTEGER NOT NULL,
    wall INTEGER,
    received REAL NOT NULL,
    checked INTEGER,
    raw BLOB NOT NULL,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS gaps (
    table_id TEXT NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    reason TEXT NOT NULL,
    closed REAL NOT NULL,
    PRIMARY KEY (table_id, first)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rounds (
    table_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    status TEXT NOT NULL,
    dice TEXT,
    total INTEGER,
    void_reason TEXT,
    corrections INTEGER NOT NULL,
    damaged INTEGER NOT NULL,
    started_wall INTEGER,
    ended_wall INTEGER,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    info TEXT NOT NULL,
    PRIMARY KEY (table_id, round)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS alarms (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    seq INTEGER,
    round INTEGER,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    code INTEGER,
    text TEXT NOT NULL,
    wall INTEGER,
    raised REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS alarms_by_table ON alarms (table_id, id);
CREATE TABLE IF NOT EXISTS meters (
    table_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    round INTEGER NOT NULL,
    wall INTEGER,
    checkpoint TEXT,
    counted TEXT,
    differs INTEGER,
    PRIMARY KEY (table_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rejects (
    id INTEGER PRIMARY KEY,
    table_id TEXT,
    topic TEXT NOT NULL,
    received REAL NOT NULL,
    reason TEXT NOT NULL,
    seq INTEGER,
    offset INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    raw BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS heads (
    table_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    received REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS status_log (
    id INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    received REAL NOT NULL,
    payload TEXT NOT NULL
);
"""

# The per-table counters the service keeps in memory and writes at each commit.
TABLE_COLUMNS = ("first_seen", "last_seen", "online", "status", "status_at", "code", "config",
                 "state", "round", "boot", "oldest", "status_seq", "missing", "last_seq",
                 "acked", "open_gaps", "records", "duplicates", "conflicts", "damaged",
                 "rejected", "lost", "late")


class StoreError(Exception):
    """The store cannot be opened or is not a floor store."""


def open_rw(path):
    """The service's connection: schema made if new, WAL, every commit
    synced (an acknowledged record survives a power cut of the floor)."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA busy_timeout=10000")
        conn.executescript(SCHEMA)
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None:
            conn.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise StoreError("%s has schema %s, this floor service writes %s"
                             % (path, row[0], SCHEMA_VERSION))
    except sqlite3.DatabaseError as e:
        raise StoreError("cannot open %s as the floor's store: %s" % (path, e)) from None
    return conn


def open_ro(path):
    """A reader's connection (never writes, never makes the file)."""
    if not os.path.exists(path):
        raise StoreError("no floor store at %s" % path)
    try:
        conn = sqlite3.connect("file:%s?mode=ro" % os.path.abspath(path), uri=True)
        conn.execute("PRAGMA busy_timeout=10000")
        row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    except sqlite3.DatabaseError as e:
        raise StoreError("cannot read %s as the floor's store: %s" % (path, e)) from None
    if row is None or row[0] != SCHEMA_VERSION:
        raise StoreError("%s is not a floor store of schema %s" % (path, SCHEMA_VERSION))
    return conn


def write(conn, batch, feeds):
    """One transaction: everything of a batch, then the touched tables' rows."""
    cur = conn.cursor()
    cur.execute("BEGIN IMMEDIATE")
    try:
        if batch.records:
            cur.executemany(
                "INSERT INTO records (table_id, seq, type, round, boot, ticks, wall, received,"
                " checked, raw) VALUES (?,?,?,?,?,?,?,?,?,?)", batch.records.values())
        if batch.updates:
            cur.executemany("UPDATE records SET checked=? WHERE table_id=? AND seq=?",
                            batch.updates)
        if batch.gaps:
            cur.executemany("INSERT OR REPLACE INTO gaps VALUES (?,?,?,?,?)", batch.gaps)
        if batch.rounds:
            cur.executemany(
                "INSERT INTO rounds VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT (table_id, round) DO UPDATE SET status=excluded.status,"
                " dice=excluded.dice, total=excluded.total, void_reason=excluded.void_reason,"
                " corrections=excluded.corrections, damaged=excluded.damaged,"
                " started_wall=excluded.started_wall, ended_wall=excluded.ended_wall,"
                " first_seq=MIN(first_seq, excluded.first_seq),"
                " last_seq=MAX(last_seq, excluded.last_seq), info=excluded.info",
                batch.rounds.values())
        if batch.alarms:
            cur.executemany(
                "INSERT INTO alarms (table_id, seq, round, source, kind, code, text, wall,"
                " raised) VALUES (?,?,?,?,?,?,?,?,?)", batch.alarms)
        if batch.meters:
            cur.executemany("INSERT OR REPLACE INTO meters VALUES (?,?,?,?,?,?,?)",
                            batch.meters)
        if batch.rejects:
            cur.executemany(
                "INSERT INTO rejects (table_id, topic, received, reason, seq, offset, bytes,"
                " raw) VALUES (?,?,?,?,?,?,?,?)", batch.rejects)
        if batch.heads:
            cur.executemany("INSERT OR REPLACE INTO heads VALUES (?,?,?,?)", batch.heads)
        if batch.status_log:
            cur.executemany("INSERT INTO status_log (table_id, received, payload)"
                            " VALUES (?,?,?)", batch.status_log)
        if batch.touched:
            cols = ", ".join(TABLE_COLUMNS)
            marks = ", ".join("?" * (len(TABLE_COLUMNS) + 1))
            sets = ", ".join("%s=excluded.%s" % (c, c) for c in TABLE_COLUMNS
                             if c != "first_seen")
            cur.executemany(
                "INSERT INTO tables (table_id, %s) VALUES (%s) ON CONFLICT (table_id)"
                " DO UPDATE SET %s" % (cols, marks, sets),
                [(tid,) + feeds[tid].row() for tid in batch.touched])
        cur.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            cur.execute("ROLLBACK")
        raise
