"""The floor service's figures on loopback (printed; the exit status is 1 when
a run's store does not hold every record it was sent, once, since its rate is
then no figure):

1. ingest: 200 simulated tables, each with a backlog of rounds journaled by
   the firmware's round machine, connect and publish at once; records/s from
   the first publish until every table has its last record acknowledged (the
   floor acknowledges only what it committed), for several records per
   publish, each --repeat times (a fresh broker, store and service each
   run) and their median; and the service's own CPU time a record (what it
   could take on a core of its own: here the broker and the tables share
   the machine's cores with it);
2. latency: tables playing live (a round each per period, the tables spread
   over it), each record published alone; from its publish to the
   acknowledgement that covers it (published by the floor after the commit:
   stored), p50 and p99.

A real mosquitto (host_tools/broker.py) with the site's ACL and passwords;
the service as its own process (`python -m host_tools floor`); the tables in
`--procs` processes of their own.

    .venv/bin/python bench/bench_floor.py [--tables 200] [--rounds 30] [--procs 2] [--repeat 3]
"""

import argparse
import multiprocessing as mp
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from host_tools.broker import Broker  # noqa: E402
from host_tools.floor import site  # noqa: E402
from host_tools.floor.simtables import SimTables, password_auth  # noqa: E402

SITE = "bench"
# More broker configuration lines: the site configuration's
# (host_tools/floor/site.py) TCP_NODELAY, and --broker-line.
EXTRA = ["set_tcp_nodelay true"]


class BenchBroker(Broker):
    def _config(self):
        return Broker._config(self) + "".join(line + "\n" for line in EXTRA)


def _worker(conn, port, passwords, ids, rounds, batch, live_s, live_rounds, seed):
    sim = SimTables("127.0.0.1", port, SITE, ids, auth=password_auth(passwords), seed=seed,
                    batch=batch, window=512, resend_s=30.0, backlog=rounds, track=True)
    made = sim.total_records()
    conn.send(("ready", made))
    conn.recv()  # go
    t0 = time.time()
    sim.start()
    if live_s:
        # Live: a round per table every live_s seconds, the tables spread over
        # the period (each its own dealer), each record published alone.
        n = len(ids)
        for i in range(live_rounds * n):
            wait = t0 + (i + 1) * live_s / n - time.time()
            if wait > 0:
                time.sleep(wait)
            sim.play(1, tables=[ids[i % n]])
    deadline = time.monotonic() + 600
    while not sim.all_acked() and time.monotonic() < deadline:
        time.sleep(0.005)
    t1 = time.time()
    ok = sim.all_acked()
    with sim.lock:
        lat = list(sim.latencies)
        first = min((t.first_publish for t in sim.tables if t.first_publish), default=t0)
        total = sim.total_records()
    sim.stop()
    conn.send(("done", ok, first, t1, total, lat))


def _pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def _start_floor(args, log):
    svc = subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=log)
    deadline = time.monotonic() + 300
    start = log.tell()
    while True:
        with open(log.name, "rb") as f:
            f.seek(start)
            text = f.read()
        if b"subscribed" in text:
            return svc, text.decode("utf-8", "replace")
        if time.monotonic() > deadline or svc.poll() is not None:
            raise RuntimeError("the floor service did not start: %s" % text[-2000:])
        time.sleep(0.02)


def _cpu_s(pid):
    """The CPU seconds (user and system) a process has used so far (Linux's
    /proc), or None where there is none."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_once(tmp, ids, rounds, batch, procs, live_s=0.0, live_rounds=0, protocol="5",
             reload=False):
    passwords = {site.FLOOR_USER: "floor-pw"}
    passwords.update({t: "pw-" + t for t in ids})
    folder = tempfile.mkdtemp(dir=tmp)
    b = BenchBroker(os.path.join(folder, "mq"), acl=site.acl_text(SITE), passwords=passwords,
               plain_acl=True).start()
    db = os.path.join(folder, "floor.db")
    pw = os.path.join(folder, "floor.pw")
    with open(pw, "w") as f:
        f.write("floor-pw\n")
    log = open(os.path.join(folder, "floor.log"), "ab")
    argv = [sys.executable, "-m", "host_tools", "floor", "--broker", "127.0.0.1:%d" % b.port,
            "--db", db, "--site", SITE, "--username", "floor", "--password-file", pw,
            "--protocol", protocol]
    svc, _text = _start_floor(argv, log)
    try:
        pipes, workers = [], []
        for k in range(procs):
            a, c = mp.Pipe()
            part = ids[k::procs]
            w = mp.Process(target=_worker, args=(c, b.port, passwords, part, rounds, batch,
                                                 live_s, live_rounds, 1 + k))
            w.start()
            pipes.append(a)
            workers.append(w)
        made = sum(p.recv()[1] for p in pipes)
        cpu0 = _cpu_s(svc.pid)
        for p in pipes:
            p.send("go")
        res = [p.recv() for p in pipes]
        cpu1 = _cpu_s(svc.pid)
        for w in workers:
            w.join(60)
        ok = all(r[1] for r in res)
        first = min(r[2] for r in res)
        last = max(r[3] for r in res)
        total = sum(r[4] for r in res)
        lat = [x for r in res for x in r[5]]
        conn = sqlite3.connect(db)
        stored, dup = conn.execute("SELECT SUM(records), SUM(duplicates) FROM tables").fetchone()
        rfirst, rlast = conn.execute("SELECT MIN(received), MAX(received) FROM records").fetchone()
        conn.close()
        restart = None
        if reload:
            # A restart of the service on this store: its reload (every
            # table's records replayed), as the service logs it.
            svc.terminate()
            svc.wait(60)
            svc, text = _start_floor(argv, log)
            restart = text.split("reloaded in ")[1].split(" s")[0]
        return {"restart": restart, "ok": ok and stored == total, "records": total,
                "made": made, "stored": stored,
                "duplicates": dup, "seconds": last - first, "rate": total / (last - first),
                "floor_rate": stored / max(rlast - rfirst, 1e-9), "latencies": lat,
                "cpu_us": (cpu1 - cpu0) / max(total, 1) * 1e6
                if cpu0 is not None and cpu1 is not None else None}
    finally:
        svc.terminate()
        svc.wait(60)
        b.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=200)
    p.add_argument("--rounds", type=int, default=30, help="backlog rounds per table (ingest)")
    p.add_argument("--procs", type=int, default=2, help="processes of simulated tables")
    p.add_argument("--batches", default="1,8,32", help="records per publish (ingest)")
    p.add_argument("--live-tables", type=int, default=200)
    p.add_argument("--live-every", type=float, default=1.0, help="s between rounds (latency)")
    p.add_argument("--live-rounds", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3, help="ingest runs per batch size (median)")
    p.add_argument("--protocol", choices=("5", "311"), default="5")
    p.add_argument("--broker-line", action="append", default=[],
                   help="a line added to the broker's configuration")
    args = p.parse_args()
    for name in ("tables", "rounds", "procs", "live_tables", "live_rounds", "repeat"):
        if getattr(args, name) < 1:
            p.error("--%s must be 1 or more" % name.replace("_", "-"))
    if not args.live_every > 0:
        p.error("--live-every must be above 0")
    try:
        batches = [int(x) for x in args.batches.split(",")]
    except ValueError:
        batches = []
    if not batches or min(batches) < 1:
        p.error("--batches must be records per publish, 1 or more each, separated by commas")
    from host_tools.broker import require_mosquitto

    why = require_mosquitto()
    if why:
        print("bench_floor: SKIPPED: %s" % why)
        return 0
    EXTRA.extend(args.broker_line)
    tmp = tempfile.mkdtemp(prefix="bench_floor_")
    ids = ["T%03d" % i for i in range(1, args.tables + 1)]
    print("floor ingest: %d tables, %d rounds of backlog each, %d process(es) of tables, "
          "MQTT %s floor session" % (args.tables, args.rounds, args.procs, args.protocol))
    failed = 0  # runs after which the store did not hold every record once
    for batch in batches:
        rates, cpus = [], []
        for k in range(args.repeat):
            # A loaded machine moves one run's figure by a tenth or more:
            # several runs, each on a fresh broker, store and service.
            r = run_once(tmp, ids, args.rounds, batch, args.procs, protocol=args.protocol,
                         reload=batch == batches[-1] and k == args.repeat - 1)
            rates.append(r["rate"])
            failed += not r["ok"]
            cpu = r["cpu_us"]
            cpus.append(cpu)
            print("  %2d records/publish: %7d records in %6.2f s = %8.0f records/s "
                  "(stored %d once, %d duplicates%s; the floor's own rate %8.0f records/s%s)"
                  % (batch, r["records"], r["seconds"], r["rate"], r["stored"],
                     r["duplicates"], "" if r["ok"] else ", NOT ALL STORED", r["floor_rate"],
                     "" if cpu is None else "; the service's CPU %.0f us a record" % cpu))
            if r["restart"]:
                print("  a restart of the service on that store (%d records): reloaded in %s s"
                      % (r["stored"], r["restart"]))
        if args.repeat > 1:
            print("  %2d records/publish: median %.0f records/s of %d runs (%s)"
                  % (batch, statistics.median(rates), len(rates),
                     ", ".join("%.0f" % x for x in rates)))
        if None not in cpus:
            # What the service alone could take on one core of this machine,
            # beside the broker and the simulated tables sharing its cores.
            us = statistics.median(cpus)
            print("  %2d records/publish: the service's CPU, median %.0f us a record: %.0f "
                  "records/s a core" % (batch, us, 1e6 / us))
    lids = ["T%03d" % i for i in range(1, args.live_tables + 1)]
    r = run_once(tmp, lids, 0, 1, args.procs, live_s=args.live_every,
                 live_rounds=args.live_rounds, protocol=args.protocol)
    lat = [x * 1000 for x in r["latencies"]]
    print("floor latency: %d tables each playing a round every %.1f s (spread over it), each "
          "record published alone (%d records, %.0f records/s):"
          % (args.live_tables, args.live_every, r["records"], r["records"] / r["seconds"]))
    print("  publish -> acknowledged after commit: p50 %.1f ms, p99 %.1f ms, max %.1f ms%s"
          % (_pct(lat, 50), _pct(lat, 99), max(lat) if lat else float("nan"),
             "" if r["ok"] else " (NOT ALL STORED)"))
    failed += not r["ok"]
    shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        # A rate of a floor that lost or did not store records is no figure.
        print("bench_floor: FAILED: %d run(s) did not store every record once" % failed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
