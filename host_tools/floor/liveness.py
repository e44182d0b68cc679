"""Whether the floor is live: the service's own state, beside its store.

The floor view shows what the store holds. When the service has lost the
broker, or has died, the store stops changing and a page would go on saying
"online" for tables whose news no longer arrives: pit staff must be told.
So the service keeps a small file beside the store, FILE.service (one JSON
object, replaced whole: written to a temporary file, then renamed):

    {"state": "connecting" | "connected" | "no-broker" | "stopped",
     "since": when that state began, "beat": when the file was last written,
     "pid": the service's process id}

written at every change of state and at least every BEAT_S seconds. It is
not in the store itself: a beat every few seconds would change the store's
data_version, and every page of a standalone view (web.FloorView.watch)
would be redrawn for nothing. A view reads it at each page and at least
every few seconds of each page's event stream (health()): a beat older than
STALE_S means the service is gone (killed, hung, its machine down), whatever
its last state said."""

import json
import os
import time

from host_tools.floor import views

BEAT_S = 5.0  # the service writes its file at least this often
STALE_S = 3 * BEAT_S  # a beat older than this: the service is silent
STATES = ("connecting", "connected", "no-broker", "stopped")


def path_for(db):
    return str(db) + ".service"


class Beat:
    """The service's side: set(state) at each change, tick() from its loop."""

    def __init__(self, db, clock=time.time, log=None):
        self.path = path_for(db)
        self.clock = clock
        self.log = log or (lambda line: None)
        self.state = None
        self.since = None
        self.written = None
        self.failed = False

    def set(self, state):
        if state not in STATES:
            raise ValueError("unknown service state %r" % (state,))
        if state != self.state:
            self.state = state
            self.since = self.clock()
            self._write()

    def tick(self):
        if self.state is not None and self.clock() - self.written >= BEAT_S:
            self._write()

    def _write(self):
        now = self.clock()
        self.written = now
        tmp = self.path + ".tmp"
        try:
            with open(tmp, "w") as f:
                json.dump({"state": self.state, "since": self.since, "beat": now,
                           "pid": os.getpid()}, f)
            os.replace(tmp, self.path)
            if self.failed:
                self.failed = False
                self.log("the service's state file %s is written again" % self.path)
        except OSError as e:
            # The view then says the service is silent: true enough for pit
            # staff, and the store itself is not affected.
            if not self.failed:
                self.failed = True
                self.log("cannot write the service's state file %s: %s" % (self.path, e))


def read(db):
    """The service's file as a dict, or None when there is none or it cannot
    be read (then the view says no service reports on this store)."""
    try:
        with open(path_for(db)) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return None
    if (not isinstance(d, dict) or d.get("state") not in STATES
            or not all(isinstance(d.get(k), (int, float)) for k in ("since", "beat"))):
        return None
    return d


class Health:
    """What the floor view says of the floor's liveness: live (nothing to
    say), else a level ("warning", "alarm") and a sentence for pit staff."""

    def __init__(self, live, level, text, state=None):
        self.live = live
        self.level = level
        self.text = text
        self.state = state

    def key(self):
        return (self.live, self.level, self.text)


def health(db, now=None):
    now = time.time() if now is None else now
    d = read(db)
    if d is None:
        return Health(False, "alarm", "No floor service reports on this store: the tables' "
                      "news is not reaching it.")
    state, since, beat = d["state"], d["since"], d["beat"]
    stale = "what shows is what it stored until then."
    if state == "stopped":
        return Health(False, "alarm", "The floor service was stopped at %s: %s"
                      % (views.when(since), stale), state)
    if now - beat > STALE_S:
        return Health(False, "alarm", "The floor service has been silent since %s (stopped, "
                      "hung or its machine down): %s" % (views.when(beat), stale), state)
    if state == "no-broker":
        return Health(False, "alarm", "The floor service has not been connected to the broker "
                      "since %s: the tables' news is not reaching the floor, and each table "
                      "shows as it last said; %s" % (views.when(since), stale), state)
    if state == "connecting":
        return Health(False, "warning", "The floor service is connecting to the broker "
                      "(since %s)." % views.when(since), state)
    return Health(True, None, "", state)
