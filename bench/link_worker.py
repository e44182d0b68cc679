# The link's figures on a MicroPython unix port (bench/bench_link.py runs it
# at the board's heap, with the link's .mpy from build/mpy, or frozen into
# the interpreter with SICBO_LINK_FROZEN=1):
#     micropython -X heapsize=H bench/link_worker.py HOST PORT PUBLISHES
# Prints one JSON line: the heap the link's code takes when imported, a
# connected link with its buffers, bytes allocated per publish (from the
# journal read to the floor's ack, gc off), the time of one publish's pass
# (read, encode, the write) and its round trip to PUBACK, and the writes per
# packet. The journal source copies a prepared batch (no allocation of its
# own), so what is counted is the link's and asyncio's.
import gc
import json
import os  # noqa: E402
import sys
import time

import benchkit

if os.getenv("SICBO_LINK_FROZEN") != "1":  # else: the frozen image's own
    sys.path.insert(0, benchkit.MPY + "/device")

import asyncio  # noqa: E402, F401  (the firmware has both loaded already)

from sicbo import journal  # noqa: E402, F401

gc.collect()
free0 = gc.mem_free()
from link import (  # noqa: E402, F401
    client,  # noqa: E402, F401
    mqtt,
    outbox,
    wifi,
)

gc.collect()
free1 = gc.mem_free()

from sicbo.journal import encode  # noqa: E402  (already loaded by the firmware)

_BATCH = 14  # records of 36 bytes in 512


class Source:
    """Records seq+1.. on demand: a prepared batch whose sequence numbers
    are patched in place."""

    def __init__(self):
        t = bytearray()
        for i in range(_BATCH):
            t += encode(10, i + 1, 1, 1, 0, 0, b"\x00" * 8)
        self.t = t
        self.last = 0

    def last_seq(self):
        return self.last

    def read_after(self, seq, buf, limit):
        if seq >= self.last:
            return 0
        n = self.last - seq
        if n > _BATCH:
            n = _BATCH
        t = self.t
        if n == _BATCH:
            buf[0:36 * n] = t  # the whole batch: no slice made
        else:
            buf[0:36 * n] = t[0:36 * n]
        for i in range(n):
            s = seq + 1 + i
            o = 36 * i + 4
            buf[o] = s & 0xFF
            buf[o + 1] = (s >> 8) & 0xFF
            buf[o + 2] = (s >> 16) & 0xFF
            buf[o + 3] = s >> 24
        return 36 * n


class Timed(outbox.Link):
    def __init__(self, *a, **k):
        outbox.Link.__init__(self, *a, **k)
        self.pass_us = []
        self.rtt_us = []
        self._sent_us = 0
        self.timing = False

    def _send_next(self, now):
        if not self.timing:
            return outbox.Link._send_next(self, now)
        t = time.ticks_us()
        n = self.packets
        outbox.Link._send_next(self, now)
        if self.packets != n:
            self.pass_us.append(time.ticks_diff(time.ticks_us(), t))
            self._sent_us = time.ticks_us()

    def got_puback(self, pid, now):
        if self.timing and self._sent_us:
            self.rtt_us.append(time.ticks_diff(time.ticks_us(), self._sent_us))
            self._sent_us = 0
        outbox.Link.got_puback(self, pid, now)


def _median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else None


async def main(host, port, count):
    import asyncio

    src = Source()
    gc.collect()
    free2 = gc.mem_free()
    link = Timed(src, "S1", "T01", host, port, "/tmp/sicbo-bench-link-cursor", window=1,
                 save_ms=1000000)
    task = asyncio.create_task(link.run())
    while not link.is_up or not link.subscribed:
        await asyncio.sleep_ms(10)
    gc.collect()
    free3 = gc.mem_free()

    async def batches(n):
        for _ in range(n):
            src.last += _BATCH
            link.journaled()
            while link.cursor < src.last:
                await asyncio.sleep_ms(1)

    await batches(20)  # warm up
    gc.collect()
    gc.disable()
    a0 = gc.mem_alloc()
    p0 = link.counts[0]
    await batches(count)
    a1 = gc.mem_alloc()
    gc.enable()
    publishes = link.counts[0] - p0
    link.timing = True
    await batches(count)
    task.cancel()
    print(json.dumps({
        "import_bytes": free0 - free1,
        "link_connected_bytes": free2 - free3,
        "alloc_per_publish": (a1 - a0) // publishes,
        "publishes": publishes,
        "pass_us_median": _median(link.pass_us),
        "rtt_us_median": _median(link.rtt_us),
        "writes": link.writes, "packets": link.packets,
        "failures": link.counts[8],
    }))


asyncio_main = main
if __name__ == "__main__":
    import asyncio

    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
