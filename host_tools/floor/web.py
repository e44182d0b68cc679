"""The floor view: a web page of every table, served beside the floor
service (`sicbo floor ... --http HOST:PORT`, docs/floor.md "The floor view").

Built on Bottle, served by the standard library's WSGI server with a
thread per connection. Bottle because it is one module with no
dependencies of its own (routing, forms, cookies, templates that escape
by default) and still maintained; the pages are a handful of screens on
the site's network, which a thread each serves well, and the live updates
are server-sent events (a long response per page, no other protocol).

Live: the service calls notify() once after each commit (Service._commit)
with the tables the batch touched; each open page's event stream wakes,
reads the store (read-only, WAL: beside the service's writer) and sends
the changed tiles, alarms and results as HTML rendered here. A standalone
view (`sicbo floor web`) watches the store's data_version instead.

What changes anything (sign-in, sign-out, an acknowledgement) is a POST
that must carry the session's own token (compared in constant time), come
with an Origin (or Referer) of this very site, and the session cookie is
HttpOnly and SameSite=Strict: a page of another origin can neither read
the token nor make the browser send the cookie across sites. Every request
must name the view by an address or by one of its own names (Host): a name
of another site rebound to the view's address (DNS rebinding) is refused.
Sign-in is throttled (staff.throttle) and event streams are limited per
client and in all."""

import collections
import contextlib
import hmac
import ipaddress
import json
import os
import re
import secrets
import socket
import socketserver
import sqlite3
import threading
import time
import urllib.parse
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import bottle

from host_tools.floor import liveness, site, staff, store, views

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "templates")
STATIC = os.path.join(HERE, "static")
COOKIE = "sicbo_floor"
SESSION_IDLE_S = 8 * 3600
SESSION_MAX_S = 12 * 3600
ANONYMOUS_MAX = 5000
KEEPALIVE_S = 15.0
HEALTH_S = 5.0  # each page's stream looks at the floor's liveness at least this often
TID = "<tid:re:[A-Za-z0-9_-]{1,32}>"
# Each event stream holds a thread and a store connection while it is open.
STREAMS_PER_CLIENT = 32  # open at once from one client address
STREAMS_MAX = 256  # open at once in all
STREAMS_RETRY_S = 5
HOST_RE = re.compile(r"^(\[[0-9a-f:.%a-z_-]+\]|[^:\[\]]+)(:[0-9]{1,5})?$")

# Every page: no framing by other sites, no scripts but ours, nothing sniffed.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
                               "style-src 'self'; script-src 'self'; frame-ancestors 'none'; "
                               "form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


# ---- notifications ------------------------------------------------------------------------


class Closed(Exception):
    pass


class Hub:
    """What changed, by version: the service's commits (notify) and the
    view's own writes. Each event stream keeps the version it has shown."""

    def __init__(self, keep=1024):
        self.cond = threading.Condition()
        self.version = 0
        self.log = collections.deque(maxlen=keep)  # (version, tables or None: all, flags)
        self.closed = False
        self.notified = 0

    def notify(self, tables=None, alarms=False, audit=False):
        flags = frozenset(f for f, on in (("alarms", alarms), ("audit", audit)) if on)
        with self.cond:
            self.version += 1
            self.notified += 1
            self.log.append((self.version, None if tables is None else frozenset(tables),
                             flags))
            self.cond.notify_all()

    def since(self, seen):
        """(version, tables changed since seen or None for all, flags)."""
        v = self.version
        if v == seen:
            return v, set(), set()
        if not self.log or self.log[0][0] > seen + 1:
            return v, None, {"alarms", "audit"}
        tables = set()
        flags = set()
        for ver, t, f in self.log:
            if ver > seen:
                if t is None:
                    tables = None
                elif tables is not None:
                    tables |= t
                flags |= f
        return v, tables, flags

    def wait(self, seen, timeout):
        with self.cond:
            if self.version == seen and not self.closed:
                self.cond.wait(timeout)
            if self.closed:
                raise Closed()
            return self.since(seen)

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()


# ---- sessions -----------------------------------------------------------------------------


class Session:
    def __init__(self, user=None):
        self.id = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.user = user
        self.created = self.seen = time.monotonic()


class Sessions:
    """In memory: a restart of the service signs everyone out."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_id = {}

    def get(self, sid):
        if not sid:
            return None
        now = time.monotonic()
        with self.lock:
            s = self.by_id.get(sid)
            if s is None:
                return None
            if now - s.seen > SESSION_IDLE_S or now - s.created > SESSION_MAX_S:
                del self.by_id[sid]
                return None
            s.seen = now
            return s

    def new(self, user=None):
        s = Session(user)
        with self.lock:
            if len(self.by_id) >= ANONYMOUS_MAX:
                old = sorted((x.seen, k) for k, x in self.by_id.items() if x.user is None)
                for _seen, k in old[:len(old) // 2 + 1]:
                    del self.by_id[k]
            self.by_id[s.id] = s
        return s

    def drop(self, sid):
        with self.lock:
            self.by_id.pop(sid, None)


# ---- the server ---------------------------------------------------------------------------


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64


class _Handler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the standard library's name)
        pass


def host_name(header):
    """The name or address a Host header gives, lower case, without its
    port, the brackets of an IPv6 address or a final dot; None when it is
    not one name (missing, malformed, two headers joined)."""
    m = HOST_RE.match((header or "").strip().lower())
    if m is None:
        return None
    name = m.group(1)
    return (name[1:-1] if name.startswith("[") else name.rstrip(".")) or None


def is_address(name):
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def own_names(names=()):
    """The names the view answers to: its machine's, and those given."""
    out = {"localhost"}
    for n in (socket.gethostname(), socket.getfqdn(), *names):
        n = (n or "").strip().lower().rstrip(".")
        if n:
            out.add(n)
    return frozenset(out)


class _Stream:
    """An event stream's iterator holding its slot, released once: when the
    stream ends or fails (Bottle drops a response whose first part failed
    without closing it), or when the server closes it (the client went
    away, a HEAD), even if it never started."""

    def __init__(self, gen, release):
        self.gen = gen
        self.release = release

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self.gen)
        except BaseException:  # its end (StopIteration) too
            self.close()
            raise

    def close(self):
        try:
            self.gen.close()
        finally:
            release, self.release = self.release, None
            if release is not None:
                release()


class Refused(Exception):
    def __init__(self, status, text):
        Exception.__init__(self, text)
        self.status = status
        self.text = text


class FloorView:
    """The web application over one store (see the module doc)."""

    def __init__(self, db, cfg, table, log=None, writable=True, names=(),
                 streams_per_client=STREAMS_PER_CLIENT, streams_max=STREAMS_MAX):
        self.db = db
        self.cfg = cfg
        self.table = table
        self.log = log or (lambda line: None)
        self.hub = Hub()
        self.sessions = Sessions()
        self.wlock = threading.Lock()
        self.wconn = None
        self.names = own_names(names)
        self.streams_per_client = streams_per_client
        self.streams_max = streams_max
        self.slock = threading.Lock()
        self.streams = collections.Counter()  # open event streams by client address
        if writable:
            self.wconn = staff.open_rw(db)
        else:
            staff.ensure(db)
        self.app = self._routes()
        self.server = None
        self.thread = None
        self.url = None
        self._watcher = None

    # ---- plumbing ----------------------------------------------------------------------

    @contextlib.contextmanager
    def reader(self):
        conn = store.open_ro(self.db)
        try:
            yield conn
        finally:
            conn.close()

    def write(self, fn, *args):
        with self.wlock:
            if self.wconn is None:
                self.wconn = staff.open_rw(self.db)
            return fn(self.wconn, *args)

    def render(self, name, **kw):
        if "page" in kw:  # a whole page: it says whether the floor is live
            kw.setdefault("health", liveness.health(self.db))
        kw.setdefault("v", views)
        kw.setdefault("die", die_svg)
        kw.setdefault("tpl", self.render)
        return bottle.template(name, template_lookup=[TEMPLATES], **kw)

    def session(self, create=True):
        s = self.sessions.get(bottle.request.get_cookie(COOKIE))
        if s is None and create:
            s = self.sessions.new()
            self._set_cookie(s)
        return s

    def _set_cookie(self, s):
        secure = bottle.request.urlparts.scheme == "https"
        bottle.response.set_cookie(COOKIE, s.id, path="/", httponly=True, samesite="strict",
                                   secure=secure)

    def remote(self):
        # The connection's own address: Bottle's remote_addr would take the
        # first of X-Forwarded-For, which the client writes as it likes.
        return bottle.request.environ.get("REMOTE_ADDR") or ""

    def check_host(self):
        """The request names this view (Host): an address, localhost, or
        one of its names. A page of another site whose name was rebound to
        this address (DNS rebinding) sends its own name, and is refused."""
        header = bottle.request.get_header("Host")
        name = host_name(header)
        if name is not None and (name in self.names or is_address(name)):
            return
        shown = header or "none"
        if len(shown) > 80:
            shown = shown[:80] + "..."
        raise bottle.HTTPResponse(
            "refused: this floor view does not answer to the name %s (Host header); open it "
            "by the machine's address or name, or give that name with --http-name\n" % shown,
            status=421, headers={"Content-Type": "text/plain; charset=utf-8"})

    def check_origin(self):
        """The request comes from a page of this site (Origin, else Referer)."""
        req = bottle.request
        host = req.get_header("Host")
        own = "%s://%s" % (req.urlparts.scheme, host)
        origin = req.get_header("Origin")
        if not origin:
            ref = req.get_header("Referer")
            if ref:
                p = urllib.parse.urlsplit(ref)
                origin = "%s://%s" % (p.scheme, p.netloc)
        if not origin or not host or origin != own:
            # Kept short in the audit trail (append-only): a header is the
            # sender's to make as long as it likes.
            shown = origin or "not given"
            if len(shown) > 80:
                shown = shown[:80] + "..."
            raise Refused(403, "refused: the request did not come from a page of this site "
                               "(origin %s)" % shown)

    def protected(self, need_user=False):
        """The session of a POST that may change something, or Refused."""
        try:
            self.check_origin()
            s = self.sessions.get(bottle.request.get_cookie(COOKIE))
            if s is None:
                raise Refused(403, "refused: no session (cookies are needed; sign in first)")
            try:
                token = bottle.request.forms.get("csrf") or ""
            except ValueError:  # a body Bottle cannot read (a bad Content-Length)
                raise Refused(400, "refused: the request's body could not be read") from None
            if not hmac.compare_digest(token.encode("utf-8", "replace"),
                                       s.csrf.encode("ascii")):
                raise Refused(403, "refused: the form's token does not match this session "
                                   "(reload the page)")
        except Refused as e:
            self.write(staff.audit, None, "request-refused", None, None,
                       "%s %s: %s" % (bottle.request.method, bottle.request.path, e.text),
                       self.remote())
            self.hub.notify((), audit=True)
            raise
        if need_user and s.user is None:
            raise Refused(403, "sign in to acknowledge an alarm: viewing is open, "
                               "acknowledging needs a staff account")
        return s

    def refusal(self, e):
        bottle.response.status = e.status
        # No new session here: a refused request from another site must not
        # replace (sign out) the one the browser has.
        s = self.session(create=False)
        return self.render("message.tpl", title="Refused", page="message",
                           user=s.user if s else None, csrf=s.csrf if s else "", path="/",
                           version=self.hub.version, text=e.text,
                           back=bottle.request.get_header("Referer") or "/")

    # ---- routes --------------------------------------------------------------------------

    def _routes(self):
        app = bottle.Bottle()
        app.config["catchall"] = True
        # Before anything else, on every route (and on none: no 404 either).
        app.add_hook("before_request", self.check_host)

        @app.hook("after_request")
        def _headers():
            for k, v in SECURITY_HEADERS.items():
                bottle.response.set_header(k, v)

        app.route("/", "GET", self.grid)
        app.route("/alarms", "GET", self.alarms_page)
        app.route("/alarms.csv", "GET", self.alarms_csv)
        app.route("/audit", "GET", self.audit_page)
        app.route("/audit.csv", "GET", self.audit_csv)
        app.route("/table/%s" % TID, "GET", self.table_page)
        app.route("/table/%s/display" % TID, "GET", self.display_page)
        # Numbers of at most 10 digits (a u32): a longer one is no page (404),
        # not an integer SQLite cannot take (500).
        app.route("/table/%s/round/<rid:re:[0-9]{1,10}>" % TID, "GET",
                  lambda tid, rid: self.round_page(tid, int(rid)))
        app.route("/table/%s/round/<rid:re:[0-9]{1,10}>.json" % TID, "GET",
                  lambda tid, rid: self.round_json(tid, int(rid)))
        app.route("/table/%s/report/<day>" % TID, "GET", self.report_page)
        app.route("/signin", "GET", self.signin_form)
        app.route("/signin", "POST", self.signin)
        app.route("/signout", "POST", self.signout)
        app.route("/alarms/<aid:re:[0-9]{1,10}>/ack", "POST",
                  lambda aid: self.ack(int(aid)))
        app.route("/events", "GET", self.events)
        app.route("/api/tables", "GET", self.api_tables)
        app.route("/static/<name:re:[a-z0-9_.-]+>", "GET",
                  lambda name: bottle.static_file(name, root=STATIC))

        @app.error(404)
        def _missing(err):
            return self.render("message.tpl", title="Not found", page="message", user=None,
                               csrf="", path="/", version=0, text="no such page", back="/")

        @app.error(400)
        @app.error(500)
        def _failed(err):
            # A request the view could not take (a malformed body, a store it
            # could not read): said in one line, with the pages' headers.
            for k, v in SECURITY_HEADERS.items():
                bottle.response.set_header(k, v)
            if err.status_code == 500:
                self.log("web: %s %s failed: %s" % (bottle.request.method, bottle.request.path,
                                                     err.exception))
            return self.render("message.tpl", title="Refused" if err.status_code == 400
                               else "Failed", page="message", user=None, csrf="", path="/",
                               version=0, text="the request could not be taken" if
                               err.status_code == 400 else "the page could not be made; the "
                               "floor service's log says why", back="/")

        return app

    def grid(self):
        with self.reader() as conn:
            tiles = views.tiles(conn)
            summary = views.floor_summary(conn)
            alarms = views.alarms(conn, limit=50)
        s = self.session()
        return self.render("grid.tpl", title="Floor", page="grid", user=s.user, csrf=s.csrf,
                           path="/", version=self.hub.version, tiles=tiles, summary=summary,
                           alarms=alarms)

    def _refused(self, text, back):
        """A request whose query the view cannot take: 400, saying why."""
        s = self.session()
        return bottle.HTTPResponse(self.render(
            "message.tpl", title="Refused", page="message", user=s.user, csrf=s.csrf,
            path=back, version=0, text=text, back=back), 400)

    def alarms_page(self):
        before = bottle.request.query.getunicode("before")
        if before is not None:
            if not views.is_number(before):
                raise self._refused("before=%s is not an alarm's number" % before[:20],
                                    "/alarms")
            before = int(before)
        with self.reader() as conn:
            open_ = views.alarms(conn)
            done = views.alarms(conn, open_only=False, acknowledged=True,
                                limit=views.ACKED_PAGE + 1, before=before)
        older = ("/alarms?before=%d" % done[views.ACKED_PAGE - 1].id
                 if len(done) > views.ACKED_PAGE else None)
        s = self.session()
        return self.render("alarms.tpl", title="Alarms", page="alarms", user=s.user,
                           csrf=s.csrf, path="/alarms", version=self.hub.version,
                           alarms=open_, done=done[:views.ACKED_PAGE], done_total=done.total,
                           before=before, older=older)

    def alarms_csv(self):
        q = bottle.request.query
        state, tid = q.getunicode("state"), q.getunicode("table")
        if state not in (None, "", "open", "acknowledged"):
            raise self._refused("state=%s is neither open nor acknowledged" % state[:40],
                                "/alarms")
        try:
            if tid:
                site.check_filter("table=", tid)
        except ValueError as e:
            raise self._refused(str(e), "/alarms") from None
        with self.reader() as conn:
            rows = views.alarms(conn, tid, open_only=state == "open", limit=None,
                                acknowledged=state == "acknowledged")
        bottle.response.content_type = "text/csv; charset=utf-8"
        bottle.response.set_header("Content-Disposition", 'attachment; filename="alarms.csv"')
        return views.alarms_csv(rows)

    def _audit_query(self):
        q = bottle.request.query
        try:
            return views.AuditQuery(*(q.getunicode(k) for k in ("before", "user", "action",
                                                                 "table")))
        except ValueError as e:
            raise self._refused(str(e), "/audit") from None

    def audit_page(self):
        query = self._audit_query()
        with self.reader() as conn:
            p = views.AuditPage(conn, query)
            approvals = staff.approval_rows(conn)
        s = self.session()
        return self.render("audit.tpl", title="Audit trail", page="audit", user=s.user,
                           csrf=s.csrf, path=query.href(before=query.before),
                           version=self.hub.version, p=p, actions=staff.AUDIT_ACTIONS,
                           approvals=approvals)

    def audit_csv(self):
        query = self._audit_query()
        with self.reader() as conn:
            text = views.audit_csv(query.rows(conn, None))
        bottle.response.content_type = "text/csv; charset=utf-8"
        bottle.response.set_header("Content-Disposition", 'attachment; filename="audit.csv"')
        return text

    def table_page(self, tid):
        with self.reader() as conn:
            t = views.table_row(conn, tid)
            if t is None:
                bottle.abort(404)
            alarms = views.alarms(conn, tid)
            meters = views.meters(conn, tid)
            rounds = views.recent_rounds(conn, tid)
            days = views.days(conn, tid)
            layout_warning = views.layout_mismatch(conn, tid, self.table)
        s = self.session()
        return self.render("table.tpl", title="Table %s" % tid, page="table", table_id=tid,
                           user=s.user, csrf=s.csrf, path=bottle.request.fullpath,
                           version=self.hub.version, t=t, alarms=alarms, meters=meters,
                           rounds=rounds, days=days, layout_warning=layout_warning)

    def display_data(self, conn, tid):
        t = views.table_row(conn, tid)
        if t is None:
            return None
        res = views.results(conn, tid)
        svg, latest, layout_warning = views.latest_svg(conn, tid, self.cfg, self.table)
        road = views.road_grid(views.road([r.outcome for r in reversed(res)
                                           if r.outcome]))
        return {"t": t, "shown": res[:views.RESULTS_SHOWN], "stats": views.hot_cold(res),
                "road": road, "svg": svg, "latest": latest, "layout_warning": layout_warning}

    def display_page(self, tid):
        with self.reader() as conn:
            d = self.display_data(conn, tid)
        if d is None:
            bottle.abort(404)
        s = self.session()
        return self.render("display.tpl", title="Results %s" % tid, page="display",
                           table_id=tid, user=s.user, csrf=s.csrf,
                           path=bottle.request.fullpath, version=self.hub.version,
                           body_class="display", bare=True, d=d)

    def round_page(self, tid, rid):
        with self.reader() as conn:
            r = views.RoundView(conn, tid, rid, self.cfg, self.table)
        if not r.found:
            bottle.abort(404)
        s = self.session()
        return self.render("round.tpl", title="Table %s round %d" % (tid, rid), page="round",
                           table_id=tid, user=s.user, csrf=s.csrf,
                           path=bottle.request.fullpath, version=self.hub.version, r=r)

    def round_json(self, tid, rid):
        with self.reader() as conn:
            r = views.RoundView(conn, tid, rid, self.cfg, self.table)
        if not r.found:
            bottle.abort(404)
        bottle.response.content_type = "application/json"
        return json.dumps(r.as_dict())

    def report_page(self, tid, day):
        csv_ = day.endswith(".csv")
        day = views.check_day(day[:-4] if csv_ else day)
        if day is None:
            bottle.abort(404)
        with self.reader() as conn:
            rep = views.Report(conn, tid, day, self.cfg)
        if csv_:
            bottle.response.content_type = "text/csv; charset=utf-8"
            bottle.response.set_header("Content-Disposition",
                                       'attachment; filename="%s-%s.csv"' % (tid, day))
            return rep.csv()
        s = self.session()
        return self.render("report.tpl", title="Table %s, %s" % (tid, day), page="report",
                           table_id=tid, user=s.user, csrf=s.csrf,
                           path=bottle.request.fullpath, version=self.hub.version, rep=rep)

    def api_tables(self):
        with self.reader() as conn:
            tiles = views.tiles(conn)
        h = liveness.health(self.db)
        bottle.response.content_type = "application/json"
        return json.dumps({"floor": {"live": h.live, "state": h.state, "text": h.text},
                           "tables": [{
            "table": t.id, "online": t.online, "last_seen": t.last_seen, "state": t.state,
            "round": t.round, "open_alarms": t.open_alarms, "code": t.code,
            "code_approved": t.code_ok, "config": t.config, "config_approved": t.config_ok,
            "last_result": None if t.last is None else {
                "round": t.last.round, "dice": t.last.dice, "void": t.last.void}}
                for t in tiles]})

    # ---- signing in, acknowledging --------------------------------------------------------

    def _next(self):
        nxt = bottle.request.forms.getunicode("next") or bottle.request.query.getunicode(
            "next") or "/"
        return nxt if nxt.startswith("/") and not nxt.startswith("//") else "/"

    def signin_form(self, error=None):
        s = self.session()
        return self.render("signin.tpl", title="Sign in", page="signin", user=s.user,
                           csrf=s.csrf, path="/signin", version=self.hub.version,
                           next=self._next(), error=error)

    def signin(self):
        try:
            s = self.protected()
        except Refused as e:
            return self.refusal(e)
        name = bottle.request.forms.getunicode("name") or ""
        password = bottle.request.forms.getunicode("password") or ""
        try:
            user = self.write(staff.sign_in, name, password, self.remote())
        except staff.Throttled as e:
            self.hub.notify((), audit=True)
            bottle.response.status = 429
            bottle.response.set_header("Retry-After", str(e.retry_after))
            return self.signin_form(error=e.text())
        self.hub.notify((), audit=True)
        if user is None:
            bottle.response.status = 403
            return self.signin_form(error="wrong name or password")
        self.sessions.drop(s.id)
        new = self.sessions.new(user)  # a new id at sign-in: a planted one is worthless
        self._set_cookie(new)
        bottle.redirect(self._next(), 303)

    def signout(self):
        try:
            s = self.protected()
        except Refused as e:
            return self.refusal(e)
        if s.user:
            self.write(staff.audit, s.user, "sign-out", None, None, "signed out",
                       self.remote())
            self.hub.notify((), audit=True)
        self.sessions.drop(s.id)
        bottle.response.delete_cookie(COOKIE, path="/")
        bottle.redirect("/", 303)

    def ack(self, aid):
        try:
            s = self.protected(need_user=True)
            note = bottle.request.forms.getunicode("note") or ""
            try:
                tid = self.write(staff.acknowledge, aid, s.user, note, self.remote())
            except staff.StaffError as e:
                raise Refused(409 if "already" in str(e) else 400, str(e)) from None
        except Refused as e:
            return self.refusal(e)
        self.hub.notify([tid], alarms=True, audit=True)
        bottle.redirect(self._next(), 303)

    # ---- the event stream ---------------------------------------------------------------

    def events(self):
        q = bottle.request.query
        page = q.get("page") or "grid"
        tid = q.get("table") or None
        try:
            seen = int(q.get("since") or self.hub.version)
        except ValueError:
            seen = self.hub.version
        s = self.session(create=False)
        remote = self.remote()
        # The slot is taken here, as the request is accepted, and given back
        # by _Stream.close (wsgiref closes every response it was handed).
        with self.slock:
            if self.streams[remote] >= self.streams_per_client:
                full = "from this address (at most %d)" % self.streams_per_client
            elif sum(self.streams.values()) >= self.streams_max:
                full = "in all (at most %d)" % self.streams_max
            else:
                full = None
                self.streams[remote] += 1
        if full is not None:
            bottle.response.status = 503
            bottle.response.set_header("Retry-After", str(STREAMS_RETRY_S))
            bottle.response.content_type = "text/plain; charset=utf-8"
            return "too many open event streams %s: try again later\n" % full
        bottle.response.content_type = "text/event-stream"
        bottle.response.set_header("Cache-Control", "no-store")
        return _Stream(self._stream(page, tid, seen, s), lambda: self._release(remote))

    def _release(self, remote):
        with self.slock:
            self.streams[remote] -= 1
            if self.streams[remote] <= 0:
                del self.streams[remote]

    def streams_open(self, remote=None):
        """Event streams open now: from one client address, or in all."""
        with self.slock:
            return self.streams[remote] if remote is not None else sum(self.streams.values())

    def _stream(self, page, tid, seen, s):
        csrf = s.csrf if s else ""
        user = s.user if s else None
        conn = store.open_ro(self.db)
        try:
            yield "retry: 1000\n\n"
            # What changed between the page's render and this stream; a page
            # of an earlier run of the service (a version ahead of this one's)
            # is brought up to date whole.
            if seen > self.hub.version:
                seen = -1
                pending = (self.hub.version, None, {"alarms", "audit"})
            else:
                pending = self.hub.since(seen)
            said = None  # the floor's liveness, said first thing (it may have changed)
            quiet = time.monotonic()
            while True:
                if pending is None:
                    try:
                        pending = self.hub.wait(seen, HEALTH_S)
                    except Closed:
                        return
                v, tables, flags = pending
                pending = None
                h = liveness.health(self.db)
                if h.key() != said:
                    said = h.key()
                    quiet = time.monotonic()
                    yield "event: health\ndata: %s\n\n" % json.dumps(
                        {"html": self.render("health.tpl", h=h)})
                if v == seen:
                    if time.monotonic() - quiet >= KEEPALIVE_S:
                        quiet = time.monotonic()
                        yield ": keepalive\n\n"
                    continue
                quiet = time.monotonic()
                seen = v
                try:
                    out = self._changes(conn, page, tid, tables, flags, csrf, user)
                except sqlite3.Error as e:
                    self.log("web: cannot read the store for a page: %s" % e)
                    continue
                for event, data in out:
                    yield "event: %s\ndata: %s\n\n" % (event, json.dumps(data))
        finally:
            conn.close()

    def _changes(self, conn, page, tid, tables, flags, csrf, user):
        out = []
        if page in ("grid", "table"):
            ids = [tid] if page == "table" else tables
            if page == "table" and tables is not None and tid not in tables:
                ids = []
            if ids is None or ids:
                tiles = views.tiles(conn, ids)
                out.append(("tiles", {
                    "tiles": {t.id: self.render("tile.tpl", t=t) for t in tiles},
                    "summary": self.render("summary.tpl", summary=views.floor_summary(conn))}))
            if "alarms" in flags and (page == "grid" or ids is None or ids):
                alarms = views.alarms(conn, tid if page == "table" else None, limit=50)
                out.append(("alarms", {"html": self.render(
                    "alarm_list.tpl", alarms=alarms, csrf=csrf, user=user,
                    path="/" if page == "grid" else "/table/%s" % tid)}))
        elif page == "alarms" and "alarms" in flags:
            out.append(("alarms", {"html": self.render(
                "alarm_list.tpl", alarms=views.alarms(conn), csrf=csrf, user=user,
                path="/alarms")}))
        elif page == "audit" and "audit" in flags:
            p = views.AuditPage(conn, views.AuditQuery())
            out.append(("audit", {"html": self.render("audit_rows.tpl", rows=p.rows),
                                  "older": p.older, "total": p.total}))
        elif page == "display" and tid and (tables is None or tid in tables):
            d = self.display_data(conn, tid)
            if d is not None:
                out.append(("display", {"html": self.render("display_body.tpl", d=d),
                                        "round": d["shown"][0].round if d["shown"] else None}))
        return out

    # ---- life ------------------------------------------------------------------------------

    def notify(self, tables, alarms=False):
        """The service's call after each commit: never raises into it."""
        try:
            self.hub.notify(tables, alarms=alarms)
        except Exception as e:  # noqa: BLE001
            self.log("web: notify failed: %s" % e)

    def start(self, host, port):
        try:
            self.server = make_server(host, port, self.app, server_class=_ThreadingServer,
                                      handler_class=_Handler)
        except OSError as e:
            raise OSError("cannot serve the floor view on %s:%d: %s"
                          % (host, port, e.strerror or e)) from None
        h, p = self.server.server_address[:2]
        self.url = "http://%s:%d/" % (h if ":" not in h else "[%s]" % h, p)
        self.thread = threading.Thread(target=self.server.serve_forever, name="floor-web",
                                       kwargs={"poll_interval": 0.2}, daemon=True)
        self.thread.start()
        self.log("floor view at %s" % self.url)
        return self

    def watch(self, every=0.2):
        """A view beside a service of another process: notify all on each
        commit that the store's data_version shows."""

        def run():
            conn = store.open_ro(self.db)
            last = conn.execute("PRAGMA data_version").fetchone()[0]
            while not self.hub.closed:
                time.sleep(every)
                try:
                    now = conn.execute("PRAGMA data_version").fetchone()[0]
                except sqlite3.Error:
                    continue
                if now != last:
                    last = now
                    self.hub.notify(None, alarms=True, audit=True)
            conn.close()

        self._watcher = threading.Thread(target=run, name="floor-web-watch", daemon=True)
        self._watcher.start()

    def stop(self):
        self.hub.close()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        if self.wconn is not None:
            with self.wlock:
                self.wconn.close()
                self.wconn = None


# ---- drawing --------------------------------------------------------------------------------


def die_svg(face, size=40):
    """One die as inline SVG, pips as on the layout (layout_svg)."""
    from host_tools import layout_svg

    pips = layout_svg._PIPS.get(face, ())
    colour = layout_svg.PIP_RED if face in (1, 4) else layout_svg.PIP
    r = 12 if face == 1 else 8.5
    dots = "".join('<circle cx="%g" cy="%g" r="%g" fill="%s"/>' % (x * 100, y * 100, r, colour)
                   for x, y in pips)
    return ('<svg class="die" data-face="%d" viewBox="0 0 100 100" width="%d" height="%d" '
            'role="img" aria-label="%d"><rect x="3" y="3" width="94" height="94" rx="18" '
            'fill="#fffdf6" stroke="#7a7260" stroke-width="3"/>%s</svg>'
            % (face, size, size, face, dots))
