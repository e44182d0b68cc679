# Runs the table's link (device/link/outbox.py) against a broker, on CPython
# or a MicroPython unix port, for the host tests and the bench:
#     python|micropython link_driver.py CONFIG.json
# A journal in memory (tests/logic/linkkit.MemorySource) gets `count`
# records, `every_ms` apart (0: all at once). Prints one JSON object per line:
# {"ev": "up"}, {"ev": "down", "code": N, "detail": N}, {"ev": "journaled",
# "seq": N} every 50 records, and at the end {"ev": "end", "stats": {...}}
# once the cursor is at the last record (or timeout_ms passed). Config keys:
# repo, host, port, site, table, count, every_ms, timeout_ms, linger_ms,
# keepalive_s, window, batch, ack_wait_ms, password, tls {ca, cert, key,
# hostname} (DER on MicroPython, PEM on CPython), pid (the first packet id
# - 1), cursor_path, backoff_ms, backoff_max_ms, connect_ms, payload (bytes
# per record payload, default 8), journal_dir (the source is then a real
# JournalStore there, provisioned: its records sealed by the MAC chain, its
# head in the end's stats).
import json
import sys

MICROPYTHON = sys.implementation.name == "micropython"
_HERE = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."


def _setup(cfg):
    repo = cfg["repo"]
    for p in (repo + "/tests/logic", repo + "/device"):
        if p not in sys.path:
            sys.path.insert(0, p)
    if not MICROPYTHON:
        sys.path.insert(0, repo)
        import host_tools  # noqa: F401  (the micropython shim)


def _emit(obj):
    print(json.dumps(obj))
    if hasattr(sys.stdout, "flush"):
        sys.stdout.flush()


def _tls(t):
    if t is None:
        return None
    if MICROPYTHON:
        from link.client import tls_context

        def read(p):
            with open(p, "rb") as f:
                return f.read()

        return tls_context(read(t["ca"]), read(t["cert"]), read(t["key"]))
    import ssl

    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=t["ca"])
    ctx.load_cert_chain(t["cert"], t["key"])
    return ctx


def _opener():
    if MICROPYTHON:
        return None  # the board's own (device/link/client.py)
    sys.path.insert(0, _HERE)
    from linkio import open_socket

    return open_socket


async def main(cfg):
    import asyncio
    import time

    import linkkit
    from link.outbox import Link

    if cfg.get("journal_dir"):
        import os

        from chainkit import started_key_file
        from link.source import OutboxStore as JournalStore  # a linked table's store

        os.mkdir(cfg["journal_dir"])
        started_key_file(cfg["journal_dir"])
        src = JournalStore(cfg["journal_dir"])
        src.boot(lambda piece: None)
    else:
        src = linkkit.MemorySource()
    tls = cfg.get("tls")
    events = []

    def up():
        events.append("up")
        _emit({"ev": "up", "t": time.ticks_ms()})

    def down(code, detail):
        events.append("down")
        _emit({"ev": "down", "code": code, "detail": detail, "t": time.ticks_ms()})

    alive = [0]

    def tick():
        alive[0] += 1

    count = cfg.get("count", 10)
    every = cfg.get("every_ms", 0)
    payload = b"\x00" * cfg.get("payload", 8)
    seq = 0
    if not every:  # a journal that holds them at boot
        while seq < count:
            seq += 1
            src.append(linkkit.record(seq, payload))
    link = Link(src, cfg.get("site", "S1"), cfg.get("table", "T01"), cfg["host"], cfg["port"],
                cfg["cursor_path"], ssl=_tls(tls),
                server_hostname=tls.get("hostname") if tls else None,
                password=cfg["password"].encode() if cfg.get("password") else None,
                up=up, down=down, alive=tick, keepalive_s=cfg.get("keepalive_s", 30),
                window=cfg.get("window", 4), batch=cfg.get("batch", 512),
                ack_wait_ms=cfg.get("ack_wait_ms", 30000),
                backoff_ms=cfg.get("backoff_ms", 200),
                backoff_max_ms=cfg.get("backoff_max_ms", 2000),
                connect_ms=cfg.get("connect_ms", 10000), save_ms=cfg.get("save_ms", 200),
                opener=_opener())
    if cfg.get("pid"):
        link.pid = cfg["pid"]
    task = asyncio.create_task(link.run())
    start = time.ticks_ms()
    timeout = cfg.get("timeout_ms", 60000)
    while time.ticks_diff(time.ticks_ms(), start) < timeout:
        if seq < count:
            if every:
                seq += 1
                src.append(linkkit.record(seq, payload))
            else:
                while seq < count:
                    seq += 1
                    src.append(linkkit.record(seq, payload))
            link.journaled()
            if seq % 50 == 0:
                _emit({"ev": "journaled", "seq": seq, "t": time.ticks_ms()})
        elif link.cursor >= count:
            break
        if every:
            await asyncio.sleep(every / 1000)
        else:
            await asyncio.sleep(0.02)
    linger = cfg.get("linger_ms", 0)
    if linger:
        await asyncio.sleep(linger / 1000)
    link.save()
    task.cancel()
    try:
        await task
    except BaseException:  # noqa: B036 - cancelled
        pass
    stats = linkkit.stats(link)
    stats["alive_calls"] = alive[0]
    stats["journaled"] = seq
    stats["pid"] = link.pid
    if cfg.get("journal_dir"):
        stats["head"] = src.head()
        src.close()
    _emit({"ev": "end", "stats": stats, "events": events})


def run(path):
    with open(path) as f:
        cfg = json.load(f)
    _setup(cfg)
    import asyncio

    asyncio.run(main(cfg))


if __name__ == "__main__":
    run(sys.argv[1])
