"""`sicbo floor`: the floor service and its store (docs/floor.md).

    sicbo floor --broker HOST:PORT --db FILE --site SITE   the service
    sicbo floor records --db FILE [--table ID] [--from SEQ] [--limit N] [--json]
    sicbo floor tables --db FILE [--json]
    sicbo floor access --db FILE [--table ID] [--json]      technician access
    sicbo floor certs --out FOLDER --site SITE --broker-host HOST --client ID ...
    sicbo floor broker-config --site SITE --out FOLDER ...  a site broker's files
    sicbo floor sim --broker HOST:PORT --site SITE ...      simulated tables
    sicbo floor ... --http HOST:PORT [--http-name NAME]     the service and its floor view
    sicbo floor web --db FILE --http HOST:PORT [--http-name NAME]   the view alone (a reader)
    sicbo floor users add NAME --db FILE [--password-file FILE]   a staff account
    sicbo floor users list|disable NAME|enable NAME --db FILE
    sicbo floor approve --db FILE --code HASH | --config ID [--revoke] [--note TEXT]
    sicbo floor approvals --db FILE [--json]
    sicbo floor audit --db FILE [--user NAME] [--action A] [--table ID] [--json|--csv]
    sicbo floor alarms --db FILE [--table ID] [--open|--acknowledged] [--json|--csv]
"""

import datetime
import json
import os
import re
import sqlite3
import sys

from host_tools.cli import UsageError

NAME = "floor"
HELP = "the floor service: every table's journal stored once, acknowledged; its store"
HTTP_NAME_HELP = ("a name the floor view is opened by (repeat for several; its addresses, "
                  "localhost and the machine's own names are always taken): a request "
                  "naming another is refused")
HOST_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9.])?$")
SEQ_MAX = (1 << 32) - 1  # a record's sequence number is a u32 (docs/journal.md)
LIMIT_MAX = 1 << 62  # `records --limit`: SQLite's LIMIT is a signed 64-bit integer
LINE_MAX = 4096  # bytes: the first line of a password file, at most


def add_arguments(p):
    p.add_argument("--broker", metavar="HOST:PORT", help="the site's MQTT broker")
    p.add_argument("--db", metavar="FILE", help="the store (SQLite; made if new)")
    p.add_argument("--site", help="the site id (topics sicbo/SITE/TABLE/...)")
    p.add_argument("--client-id", help="MQTT client id of the persistent session "
                                       "(default sicbo-floor-SITE)")
    p.add_argument("--username", help="username on a password listener (e.g. floor)")
    p.add_argument("--password-file", metavar="FILE", help="its password (first line)")
    p.add_argument("--cafile", metavar="PEM", help="the site CA (TLS)")
    p.add_argument("--cert", metavar="PEM", help="the floor's client certificate (CN floor)")
    p.add_argument("--key", metavar="PEM", help="its key")
    p.add_argument("--table-file", metavar="FILE",
                   help="the table configuration the meters' wins are counted with "
                        "(default: board_config/tables/macau-2004.json)")
    p.add_argument("--commit-ms", type=float, default=5.0,
                   help="longest wait for more messages before a commit (default 5)")
    p.add_argument("--batch", type=int, default=2000, help="records per commit, at most")
    p.add_argument("--protocol", choices=("5", "311"), default="5",
                   help="MQTT version of the floor's session (default 5)")
    p.add_argument("--keys", metavar="KEYSTORE", action="append", default=[],
                   help="a key store of the site's tables (sicbo deploy --provision; repeat "
                        "for several): every record verified against its table's MAC chain "
                        "as it is stored, failures raised as alarms")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="also serve the floor view (web page) here, e.g. 127.0.0.1:8080")
    p.add_argument("--http-name", metavar="NAME", action="append", default=[],
                   help=HTTP_NAME_HELP)
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    w = sub.add_parser("web", help="the floor view alone, beside a service of another "
                                   "process (reads the store; writes only its own tables)")
    w.add_argument("--db", metavar="FILE", required=True)
    w.add_argument("--http", metavar="HOST:PORT", required=True)
    w.add_argument("--http-name", metavar="NAME", action="append", default=[],
                   help=HTTP_NAME_HELP)
    w.add_argument("--table-file", metavar="FILE", help="table configuration (the layout)")
    u = sub.add_parser("users", help="staff accounts of the floor view")
    usub = u.add_subparsers(dest="users_action", metavar="USERS_ACTION")
    ua = usub.add_parser("add", help="a new account (its password asked twice, or read "
                                     "from --password-file)")
    ua.add_argument("name")
    ua.add_argument("--db", metavar="FILE", required=True)
    ua.add_argument("--password-file", metavar="FILE", help="the password (first line)")
    for name, what in (("list", "every account"), ("disable", "refuse an account's sign-in"),
                       ("enable", "allow it again")):
        x = usub.add_parser(name, help=what)
        if name != "list":
            x.add_argument("name")
        x.add_argument("--db", metavar="FILE", required=True)
    a = sub.add_parser("approve", help="approve (or --revoke) a code hash or configuration id: "
                                       "the grid marks every other")
    a.add_argument("--db", metavar="FILE", required=True)
    g = a.add_mutually_exclusive_group(required=True)
    g.add_argument("--code", metavar="HASH",
                   help="a code sha256 (64 hex digits as `sicbo deploy` prints it, or its "
                        "first 16 as tables report it: those 16 are stored)")
    g.add_argument("--config", metavar="ID",
                   help="a configuration id (12 hex digits, as the status has it)")
    a.add_argument("--revoke", action="store_true", help="withdraw the approval")
    a.add_argument("--note", default="", help="why (kept in the audit trail)")
    a.add_argument("--by", help="who approves (default: the login name)")
    ak = sub.add_parser("alarms", help="the alarms a store holds, newest first, each with who "
                                       "acknowledged it, when and the note")
    ak.add_argument("--db", metavar="FILE", required=True)
    ak.add_argument("--table", metavar="ID", help="one table's")
    state = ak.add_mutually_exclusive_group()
    state.add_argument("--open", action="store_true", help="only those still open")
    state.add_argument("--acknowledged", action="store_true", help="only those acknowledged")
    _limit_and_format(ak, "alarms", "alarms.csv")
    au = sub.add_parser("audit", help="the floor view's audit trail, newest first (sign-ins, "
                                      "acknowledgements, accounts, approvals, refusals)")
    au.add_argument("--db", metavar="FILE", required=True)
    au.add_argument("--user", metavar="NAME", help="one account's entries")
    au.add_argument("--action", dest="audit_action", metavar="ACTION",
                    help="one action's entries")
    au.add_argument("--table", metavar="ID", help="one table's entries")
    au.add_argument("--before", metavar="N", help="entries numbered below N")
    _limit_and_format(au, "entries", "audit.csv")
    al = sub.add_parser("approvals", help="the approvals, in order")
    al.add_argument("--db", metavar="FILE", required=True)
    al.add_argument("--json", action="store_true")
    r = sub.add_parser("records", help="the records a store holds")
    r.add_argument("--db", metavar="FILE", required=True)
    r.add_argument("--table", metavar="ID", help="one table's records")
    r.add_argument("--from", dest="from_seq", type=int, default=None, metavar="SEQ",
                   help="from this sequence number on (0 to %d)" % SEQ_MAX)
    r.add_argument("--limit", type=int, default=None, metavar="N",
                   help="at most N records (1 or more; -1: all, the default)")
    r.add_argument("--table-file", metavar="FILE", help="table configuration (wins)")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    a = sub.add_parser("access", help="technician access the tables journaled (the REPL, "
                                      "the clock, deploys, code checks, tests, recovery)")
    a.add_argument("--db", metavar="FILE", required=True)
    a.add_argument("--table", metavar="ID", help="one table's")
    a.add_argument("--json", action="store_true", help="machine-readable output")
    t = sub.add_parser("tables", help="every table a store knows")
    t.add_argument("--db", metavar="FILE", required=True)
    t.add_argument("--json", action="store_true", help="machine-readable output")
    c = sub.add_parser("certs", help="the site CA, the broker's and the clients' certificates "
                                     "(PEM for mosquitto and CPython, DER for the board)")
    c.add_argument("--out", metavar="FOLDER", required=True, help="the site's folder")
    c.add_argument("--site", help="the site id (a new site CA only)")
    c.add_argument("--broker-host", action="append", default=[], metavar="HOST",
                   help="a name or address of the broker (its certificate's SAN; a new "
                        "site CA only; repeat for several)")
    c.add_argument("--client", action="append", default=[], metavar="ID",
                   help="a client certificate for this table id, for floor (the floor "
                        "service) or for compliance (the site's read-only "
                        "account) (repeat)")
    b = sub.add_parser("broker-config", help="write a site broker's mosquitto.conf and ACL")
    b.add_argument("--site", required=True)
    b.add_argument("--out", metavar="FOLDER", required=True)
    b.add_argument("--cafile", metavar="PEM")
    b.add_argument("--cert", metavar="PEM", help="the broker's certificate")
    b.add_argument("--key", metavar="PEM", help="the broker's key")
    b.add_argument("--tls-port", type=int, default=8883)
    b.add_argument("--plain-port", type=int, default=None,
                   help="also a plain listener with passwords (boards without ssl)")
    b.add_argument("--password-file", metavar="FILE",
                   help="mosquitto_passwd file of the plain listener")
    b.add_argument("--bind", default="0.0.0.0")
    b.add_argument("--user", help="the account mosquitto runs as (default: its own)")
    s = sub.add_parser("sim", help="simulated tables publishing real journals")
    s.add_argument("--broker", required=True, metavar="HOST:PORT")
    s.add_argument("--site", required=True)
    s.add_argument("--tables", type=int, default=10)
    s.add_argument("--prefix", default="T")
    s.add_argument("--password", help="every table's password (username: its id)")
    s.add_argument("--rounds-per-s", type=float, default=1.0)
    s.add_argument("--backlog", type=int, default=0)


def http_names(names):
    """The --http-name values, each a host name."""
    for n in names:
        if not HOST_NAME_RE.match(n):
            raise UsageError("--http-name %r is not a host name" % n)
    return tuple(names)


def host_port(text, option="--broker", zero=False):
    host, sep, port = (text or "").rpartition(":")
    # isascii: str.isdigit takes '²', which int() refuses with a traceback
    if not sep or not host or not (port.isascii() and port.isdigit()) \
            or not (0 if zero else 1) <= int(port) < 65536:
        raise UsageError("%s %r is not HOST:PORT" % (option, text))
    return host.strip("[]"), int(port)


def _keys(paths):
    # Every key store given, as one (chain ids are random u32s: one taken
    # twice is refused).
    if not paths:
        return None
    from host_tools import keystore

    merged = keystore.KeyStore(", ".join(paths))
    for path in paths:
        for c in keystore.load(path).chains:
            if merged.get(c.id) is not None:
                raise UsageError("provisioning %d is in more than one of the key stores %s"
                                 % (c.id, ", ".join(paths)))
            merged.chains.append(c)
    return merged


def _table(path):
    from host_tools.rules import load_table

    return load_table(path)[1]


def run(args):
    action = args.action
    if action == "records":
        return _records(args)
    if action == "tables":
        return _tables(args)
    if action == "access":
        return _access(args)
    if action == "certs":
        return _certs(args)
    if action == "broker-config":
        return _broker_config(args)
    if action == "web":
        return _web(args)
    if action == "users":
        return _users(args)
    if action == "approve":
        return _approve(args)
    if action == "audit":
        return _audit(args)
    if action == "alarms":
        return _alarms(args)
    if action == "approvals":
        return _approvals(args)
    if action == "sim":
        from host_tools.floor import simtables

        argv = ["--broker", args.broker, "--site", args.site, "--tables", str(args.tables),
                "--prefix", args.prefix, "--rounds-per-s", str(args.rounds_per_s),
                "--backlog", str(args.backlog)]
        if args.password:
            argv += ["--password", args.password]
        return simtables.main(argv)
    return _serve(args)


def _serve(args):
    from host_tools.floor import service, site, store

    for name in ("broker", "db", "site"):
        if not getattr(args, name):
            raise UsageError("--%s is needed to run the service (or an ACTION: records, "
                             "tables, broker-config, sim)" % name)
    host, port = host_port(args.broker)
    try:
        site.check_id("site", args.site)
    except ValueError as e:
        raise UsageError(str(e)) from None
    password = None
    if args.password_file:
        password = first_line(args.password_file)
    if bool(args.cert) != bool(args.key) or (args.cert and not args.cafile):
        raise UsageError("TLS needs --cafile, --cert and --key together")
    for path in (args.cafile, args.cert, args.key):
        if path and not os.path.isfile(path):
            raise UsageError("no such file: %s" % path)
    http = host_port(args.http, "--http", zero=True) if args.http else None
    if args.http_name and not http:
        raise UsageError("--http-name names the floor view: it needs --http")
    names = http_names(args.http_name)
    cfg, table = _cfg_table(args.table_file)
    opts = service.Options(host, port, args.site, args.db, client_id=args.client_id,
                           username=args.username, password=password, cafile=args.cafile,
                           certfile=args.cert, keyfile=args.key,
                           table=table, commit_ms=args.commit_ms,
                           batch=args.batch, protocol=int(args.protocol), http=http, cfg=cfg,
                           http_names=names,
                           keys=_keys(args.keys))
    try:
        return service.serve(opts)
    except (store.StoreError, OSError) as e:
        raise UsageError(str(e)) from None


def _cfg_table(path):
    from host_tools.rules import load_table

    return load_table(path)


# ---- the floor view -----------------------------------------------------------------------


def _web(args):
    import signal
    import threading

    from host_tools.floor import store, web

    host, port = host_port(args.http, "--http", zero=True)
    names = http_names(args.http_name)
    cfg, table = _cfg_table(args.table_file)
    if not os.path.exists(args.db):
        raise UsageError("no floor store at %s" % args.db)
    try:
        view = web.FloorView(args.db, cfg, table, names=names,
                             log=lambda line: print("floor: " + line, flush=True))
        view.start(host, port)
    except (store.StoreError, OSError) as e:
        raise UsageError(str(e)) from None
    view.watch()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        view.stop()
    return 0


def _staff_db(path, make=False):
    """A writer's connection to the floor's store at path (the view's tables
    made in it on first use). An existing file must be a floor store
    (staff.check_store); a path where there is none is refused, unless make
    (`users add`, `approve`: docs/floor.md), which makes a new store there
    and says so on stderr in one line, since the floor service sees only the
    store it is given."""
    import sys

    from host_tools.floor import staff, store

    new = not os.path.lexists(path)
    if new and not make:
        raise UsageError(_NO_STORE % path)
    try:
        conn = staff.open_rw(path)
    except store.StoreError as e:
        raise UsageError(str(e)) from None
    if new:
        print("sicbo floor: no store was at %s: made a new floor store there (the floor "
              "service must be given it: sicbo floor --db %s)" % (path, path), file=sys.stderr)
    return conn


_NO_STORE = "--db %s does not exist: give the floor service's store (sicbo floor --db)"


def first_line(path, what="password file"):
    """The first line of a secret's file (UTF-8, at most LINE_MAX bytes),
    or UsageError in one line. The refusal never shows the file's bytes."""
    try:
        with open(path, "rb") as f:
            line = f.readline(LINE_MAX + 1)
    except OSError as e:
        raise UsageError("cannot read %s: %s" % (path, e.strerror or e)) from None
    if len(line) > LINE_MAX and not line.endswith(b"\n"):
        raise UsageError("%s %s: its first line is longer than %d bytes"
                         % (what, path, LINE_MAX))
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError("%s %s is not UTF-8 text (byte %d of its first line is not): "
                         "save it as UTF-8" % (what, path, e.start + 1)) from None
    return text.rstrip("\r\n")


def read_password(path, name):
    """The password of a new account: the first line of path, or asked
    twice on the terminal (never an argument: it would show in ps)."""
    import getpass
    import sys

    if path:
        return first_line(path)
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask the password on: give --password-file FILE")
    first = getpass.getpass("password for %s: " % name)
    if getpass.getpass("again: ") != first:
        raise UsageError("the two passwords differ")
    return first


def _users(args):
    from host_tools.floor import staff

    act = args.users_action
    if act is None:
        raise UsageError("users needs an action: add, list, disable, enable")
    if act == "add":
        try:
            staff.check_name(args.name)
        except staff.StaffError as e:
            raise UsageError(str(e)) from None
        password = read_password(args.password_file, args.name)
    conn = _staff_db(args.db, make=act == "add")
    try:
        if act == "add":
            staff.add_user(conn, args.name, password, by="cli:" + _login())
            print("account %s made" % args.name)
        elif act == "list":
            rows = staff.users(conn)
            for name, created, disabled in rows:
                print("%-32s made %s%s" % (name, _when(created), "  DISABLED" if disabled
                                            else ""))
            if not rows:
                print("no accounts")
        else:
            staff.set_disabled(conn, args.name, act == "disable", by="cli:" + _login())
            print("account %s %sd" % (args.name, act))
    except staff.StaffError as e:
        raise UsageError(str(e)) from None
    finally:
        conn.close()
    return 0


def _login():
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _approve(args):
    from host_tools.floor import staff

    kind = "code" if args.code is not None else "config"
    given = args.code if args.code is not None else args.config
    try:
        value = staff.check_hex(kind, given)  # refused before the store is opened
    except staff.StaffError as e:
        raise UsageError(str(e)) from None
    if args.revoke and not os.path.lexists(args.db):
        raise UsageError("%s %s is not approved: %s" % (kind, value, _NO_STORE % args.db))
    conn = _staff_db(args.db, make=True)
    try:
        value = staff.approve(conn, kind, given, args.by or "cli:" + _login(),
                              args.note, revoke=args.revoke)
    except staff.StaffError as e:
        raise UsageError(str(e)) from None
    finally:
        conn.close()
    line = "%s %s %s" % (kind, value, "revoked" if args.revoke else "approved")
    if kind == "code":
        line += " (the first %d hex digits of the code sha256, as tables report it)" % len(value)
    print(line)
    return 0


def _approvals(args):
    from host_tools.floor import staff

    conn = _open(args.db)
    try:
        rows = staff.approval_rows(conn)
        now = staff.approved(conn)
    except sqlite3.OperationalError as e:
        if "no such table" not in str(e):
            raise UsageError("cannot read the approvals of %s (%s)" % (args.db, e)) from None
        # The service's store before anything was approved (the view's
        # tables are made at the first approval or account): none yet.
        rows, now = [], {"code": set(), "config": set()}
    if args.json:
        print(json.dumps({"approved": {k: sorted(v) for k, v in now.items()}, "history": [
            dict(zip(("id", "kind", "value", "action", "by", "note", "at"), r, strict=True))
            for r in rows]}))
        return 0
    for kind in ("code", "config"):
        print("approved %s: %s" % (kind, ", ".join(sorted(now[kind])) or "none"))
    for i, kind, value, action, by, note, at in rows:
        print("%4d %s %-6s %-7s %s by %s%s" % (i, _when(at), kind, action, value, by,
                                              (": " + note) if note else ""))
    return 0


def _limit_and_format(p, what, csv_name):
    """A listing's --limit and its output (text, --json or --csv)."""
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="at most N %s (1 or more; the default: all)" % what)
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="machine-readable output")
    fmt.add_argument("--csv", action="store_true", help="CSV, as the floor view's " + csv_name)


def _check_limit(args):
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be 1 or more (without it: all)")


def _alarms(args):
    from host_tools.floor import site, views

    _check_limit(args)
    try:
        if args.table is not None:
            site.check_filter("--table ", args.table)
    except ValueError as e:
        raise UsageError(str(e)) from None
    conn = _open(args.db)
    try:
        rows = views.alarms(conn, args.table, open_only=args.open,
                            limit=None if args.csv else args.limit,
                            acknowledged=args.acknowledged)
    except sqlite3.Error as e:
        raise UsageError("cannot read the alarms of %s (%s)" % (args.db, e)) from None
    if args.csv:
        print(views.alarms_csv(rows), end="")
    elif args.json:
        print(json.dumps({"alarms": [
            {"id": a.id, "table": a.table_id, "seq": a.seq, "round": a.round,
             "source": a.source, "kind": a.kind, "code": a.code, "text": a.text,
             "raised": _when(a.raised), "open": a.open, "acknowledged_by": a.ack_user,
             "acknowledged": _when(a.ack_at), "note": a.ack_note} for a in rows]}))
    else:
        for a in rows:
            print("%6d %s %-10s %-9s %s [%s]" % (
                a.id, _when(a.raised), a.table_id, a.kind, a.text,
                "open" if a.open else "acknowledged by %s %s: %s" % (a.ack_user,
                                                                    _when(a.ack_at),
                                                                    a.ack_note)))
        if not rows:
            print("no %salarm%s" % ("open " if args.open else "acknowledged "
                                    if args.acknowledged else "",
                                    " of table %s" % args.table if args.table else ""))
    return 0


def _audit(args):
    from host_tools.floor import views

    _check_limit(args)
    try:
        query = views.AuditQuery(args.before, args.user, args.audit_action, args.table)
    except ValueError as e:
        raise UsageError("--" + str(e).replace("=", " ", 1)) from None  # "--user x is not ..."
    conn = _open(args.db)
    try:
        rows = query.rows(conn, None if args.csv else args.limit)
    except sqlite3.OperationalError as e:
        if "no such table" not in str(e):
            raise UsageError("cannot read the audit trail of %s (%s)" % (args.db, e)) from None
        # A store the floor view never wrote to (its tables are made at the
        # first account or approval): nothing audited yet.
        rows = []
    if args.csv:
        print(views.audit_csv(rows), end="")
    elif args.json:
        print(json.dumps({"audit": [
            {"id": r.id, "at": _when(r.at), "user": r.user, "action": r.action,
             "table": r.table_id, "alarm": r.alarm_id, "detail": r.detail, "from": r.remote}
            for r in rows]}))
    else:
        for r in rows:
            print("%6d %s %-17s %-12s %s%s%s" % (
                r.id, _when(r.at), r.action, r.user or "-",
                ("table %s: " % r.table_id) if r.table_id else "", r.detail or "",
                (" (from %s)" % r.remote) if r.remote else ""))
        if not rows:
            print("no audit entry" + (" matches" if query.filtered() else ""))
    return 0


# ---- reading a store ---------------------------------------------------------------------

VERDICTS = {None: "pending", 0: "applied", -1: "late"}


def _when(t):
    if t is None:
        return None
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ")[:-4] + "Z"


def _open(path):
    from host_tools.floor import store

    try:
        return store.open_ro(path)
    except store.StoreError as e:
        raise UsageError(str(e)) from None


def record_of(tid, raw, checked, received, table):
    """A stored record as `sicbo journal --json` lists one (its fields by
    name), with the floor's own: table, received, checked (applied,
    damaged, pending: above a missing record, late: after its gap was
    closed as final) and the record's bytes (hex)."""
    from host_tools.commands import journal as jcmd
    from sicbo import journal

    rec = journal.Record(raw, 0)
    code = checked if checked and checked > 0 else 0
    d = jcmd.record_dict(tid, rec, code, table)
    del d["segment"], d["offset"]
    d["table"] = tid
    d["received"] = _when(received)
    d["checked"] = "damaged" if code else VERDICTS.get(checked, str(checked))
    d["raw"] = bytes(raw).hex()
    return d


def _records(args):
    from host_tools.commands import journal as jcmd
    from sicbo import journal

    limit = args.limit
    if limit is not None and limit != -1 and not 1 <= limit <= LIMIT_MAX:
        raise UsageError("--limit %d: give 1 to %d records, or -1 for all" % (limit, LIMIT_MAX))
    if args.from_seq is not None and not 0 <= args.from_seq <= SEQ_MAX:
        raise UsageError("--from %d is no sequence number (0 to %d)" % (args.from_seq, SEQ_MAX))
    conn = _open(args.db)
    table = _table(args.table_file)
    q = "SELECT table_id, seq, checked, received, raw FROM records"
    where, params = [], []
    if args.table:
        where.append("table_id=?")
        params.append(args.table)
    if args.from_seq is not None:
        where.append("seq>=?")
        params.append(args.from_seq)
    if where:
        q += " WHERE " + " AND ".join(where)
    q += " ORDER BY table_id, seq"
    if limit is not None and limit != -1:
        q += " LIMIT ?"
        params.append(limit)
    rows = conn.execute(q, params).fetchall()
    # A table of another layout than the table file: its records' winning
    # areas and meters by area, named from the file, are not the table's.
    from host_tools.floor import views

    warnings = {}
    for tid in sorted({r[0] for r in rows}):
        why = views.layout_mismatch(conn, tid, table)
        if why is not None:
            warnings[tid] = why
    if args.json:
        out = [record_of(tid, bytes(raw), checked, received, table)
               for tid, _seq, checked, received, raw in rows]
        print(json.dumps({"records": out, "layout_warnings": warnings}))
        return 0
    for tid, why in warnings.items():
        print("sicbo floor: table %s: %s (give its table file with --table-file)" % (tid, why),
              file=sys.stderr)
    n = 0
    for tid, _seq, checked, _received, raw in rows:
        rec = journal.Record(bytes(raw), 0)
        code = checked if checked and checked > 0 else 0
        line = jcmd.record_line(rec, code, table)
        if checked is None:
            line += "  (pending: a record before it is missing)"
        elif checked == -1:
            line += "  (late: came after its gap was closed)"
        print("%-12s %s" % (tid, line))
        n += 1
    if not n:  # none matches: --limit is at least 1
        print("no records%s%s" % (" of table %s" % args.table if args.table else "",
                                  " from seq %d on" % args.from_seq
                                  if args.from_seq is not None else ""))
    return 0


def _access(args):
    """The access records the floor stored (alarms of kind "access"), oldest
    first, each with its record's fields by name (as `sicbo journal --json`)."""
    conn = _open(args.db)
    q = ("SELECT a.table_id, a.seq, a.text, a.raised, r.raw, r.checked, r.received"
         " FROM alarms a JOIN records r ON r.table_id = a.table_id AND r.seq = a.seq"
         " WHERE a.kind = 'access'")
    params = []
    if args.table:
        q += " AND a.table_id = ?"
        params.append(args.table)
    rows = conn.execute(q + " ORDER BY a.table_id, a.seq", params).fetchall()
    if args.json:
        out = []
        for tid, _seq, text, raised, raw, checked, received in rows:
            d = record_of(tid, bytes(raw), checked, received, None)
            d["text"] = text
            d["raised"] = _when(raised)
            out.append(d)
        print(json.dumps({"access": out}))
        return 0
    for tid, _seq, text, _raised, _raw, _checked, _received in rows:
        print("%-12s %s" % (tid, text))
    if not rows:
        print("no access%s" % (" by table %s" % args.table if args.table else ""))
    return 0


TABLE_FIELDS = ("table", "online", "last_seen", "state", "round", "last_seq", "acked",
                "open_gaps", "lost", "records", "damaged", "duplicates", "conflicts", "rejected",
                "late", "oldest", "code", "config")


def tables_of(conn):
    out = []
    for r in conn.execute(
            "SELECT table_id, online, last_seen, state, round, last_seq, acked, open_gaps, lost,"
            " records, damaged, duplicates, conflicts, rejected, late, oldest, code, config"
            " FROM tables ORDER BY table_id"):
        d = dict(zip(TABLE_FIELDS, r, strict=True))
        d["online"] = None if d["online"] is None else bool(d["online"])
        d["last_seen"] = _when(d["last_seen"])
        out.append(d)
    try:
        heads = {tid: "%d:%s" % (seq, h) for tid, seq, h in
                 conn.execute("SELECT table_id, seq, hash FROM heads")}
    except sqlite3.OperationalError:  # a store from before the chain's heads
        heads = {}
    for d in out:
        d["head"] = heads.get(d["table"])  # the highest chain head it published (SEQ:HASH)
    return out


def _tables(args):
    from host_tools.floor import liveness

    conn = _open(args.db)
    rows = tables_of(conn)
    h = liveness.health(args.db)  # whether what the store shows is live
    if args.json:
        print(json.dumps({"tables": rows, "floor": {"live": h.live, "state": h.state,
                                                     "text": h.text}}))
        return 0
    floor_line = "floor: live (the service is connected to the broker)" if h.live else (
        "floor: NOT live: " + h.text)
    if not rows:
        print("no tables")
        print(floor_line)
        return 0
    print("%-12s %-7s %-24s %-7s %7s %8s %8s %5s %5s %6s %4s %4s %4s" % (
        "table", "online", "last seen", "state", "round", "last seq", "acked", "gaps", "lost",
        "damage", "dup", "conf", "rej"))
    for d in rows:
        print("%-12s %-7s %-24s %-7s %7s %8d %8d %5d %5d %6d %4d %4d %4d" % (
            d["table"], {None: "?", True: "yes", False: "no"}[d["online"]], d["last_seen"],
            d["state"] or "?", d["round"] if d["round"] is not None else "?", d["last_seq"],
            d["acked"], d["open_gaps"], d["lost"], d["damaged"], d["duplicates"],
            d["conflicts"], d["rejected"]))
        if d["head"]:
            print("%-12s head %s" % ("", d["head"]))
    print(floor_line)
    return 0


def _certs(args):
    from host_tools import certs

    made = []
    try:
        if not os.path.exists(certs.SiteFiles(args.out).ca_key):
            if not args.site or not args.broker_host:
                raise UsageError("no site CA in %s: a new one needs --site and --broker-host"
                                 % args.out)
            f = certs.make_site(args.out, args.site, args.broker_host)
            made += [f.ca_pem, f.ca_der, f.broker_pem]
        elif args.site or args.broker_host:
            raise UsageError("%s holds a site CA already (a new one would invalidate every "
                             "certificate it signed): --site and --broker-host are for a new "
                             "site only" % args.out)
        for cn in args.client:
            c = certs.make_client(args.out, cn)
            made += [c.cert_pem, c.cert_der]
    except (ValueError, OSError) as e:
        raise UsageError(str(e)) from None
    if not made:
        raise UsageError("nothing to make: give --client ID (or a new site)")
    for path in made:
        print("wrote %s" % path)
    return 0


def _broker_config(args):
    from host_tools.floor import site

    if args.cafile and not (args.cert and args.key):
        raise UsageError("a TLS listener needs --cafile, --cert and --key")
    if not args.cafile and not args.plain_port:
        raise UsageError("no listener: give --cafile/--cert/--key (TLS) or --plain-port")
    try:
        text = site.broker_config(args.out, args.site, cafile=args.cafile, certfile=args.cert,
                                  keyfile=args.key, tls_port=args.tls_port,
                                  plain_port=args.plain_port, password_file=args.password_file,
                                  bind=args.bind, user=args.user)
    except ValueError as e:
        raise UsageError(str(e)) from None
    path = os.path.join(args.out, "mosquitto.conf")
    with open(path, "w") as f:
        f.write(text)
    print("wrote %s and %s" % (path, os.path.join(args.out, "acl")))
    return 0

