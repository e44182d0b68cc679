# Settlement benchmark on the MicroPython unix port (make bench):
#   python -c "from host_tools.mprun import compile_trees; compile_trees()"
#   micropython -X heapsize=110k bench/bench_settle.py
# Prints microseconds per settlement with the compact table and with per-area
# predicate evaluation, their ratio, the table's size and heap footprint, and
# the bytes allocated per settlement. The firmware is the one a board runs:
# compiled as deploy compiles it (build/mpy: constants folded, mpy-cross).
import gc
import sys
import time

sys.path.insert(0, "build/mpy/device")
sys.path.insert(0, "build/mpy/tests/logic")

from sicbo import areas, config, settle  # noqa: E402
from tables import table_dict  # noqa: E402

ROUNDS = 20


def by_predicates(cfg, d1, d2, d3, frame, area_channel):
    # What the firmware would do without the table: evaluate every offered
    # area's predicate and the triple rule, then light its channel.
    for i in range(len(frame)):
        frame[i] = 0
    triple = d1 == d2 == d3
    for area in cfg.offered:
        if areas.hits(area, d1, d2, d3) and not (triple and area in cfg.triple_kills):
            settle.set_channel(frame, area_channel[area], 1)


def timed_table(t):
    start = time.ticks_us()
    for _ in range(ROUNDS):
        for d1 in range(1, 7):
            for d2 in range(1, 7):
                for d3 in range(1, 7):
                    t.settle(d1, d2, d3)
    return time.ticks_diff(time.ticks_us(), start)


def timed_predicates(cfg, frame, area_channel):
    start = time.ticks_us()
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            for d3 in range(1, 7):
                by_predicates(cfg, d1, d2, d3, frame, area_channel)
    return time.ticks_diff(time.ticks_us(), start)


def alloc_per_settlement(t):
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            for d3 in range(1, 7):
                t.settle(d1, d2, d3)
    after = gc.mem_alloc()
    gc.enable()
    return (after - before) / 216


def main():
    cfg = config.parse_table(table_dict(2004))
    # The GC is conservative: garbage of the first build may still look alive
    # at this point. The heap held by one table is measured on a second build.
    t = settle.SettlementTable(cfg)
    gc.collect()
    before = gc.mem_alloc()
    t2 = settle.SettlementTable(cfg)
    gc.collect()
    heap = gc.mem_alloc() - before
    del t2
    frame = bytearray(t.row_bytes)
    us_table = timed_table(t) / (ROUNDS * 216)
    us_pred = timed_predicates(cfg, frame, t.area_channel) / 216
    # The two must agree, or the comparison means nothing.
    for d1 in range(1, 7):
        for d2 in range(1, 7):
            for d3 in range(1, 7):
                by_predicates(cfg, d1, d2, d3, frame, t.area_channel)
                assert bytes(frame) == bytes(t.settle(d1, d2, d3))
    print("settlement, 2004 table, %d areas + status lamps = %d channels" % (
        len(cfg.offered), t.channels))
    print("  table          %8.2f us per settlement" % us_table)
    print("  predicates     %8.2f us per settlement" % us_pred)
    print("  speed-up       %8.1f x  (target >= 20)" % (us_pred / us_table))
    print("  table size     %8d bytes (rows %d + odds %d; target <= 1024)" % (
        t.size_bytes(), len(t.rows), len(t.odds)))
    print("  heap held      %8d bytes by one SettlementTable (rows, odds, channel maps,"
          " 56 row views; %d-bit build)" % (heap, 64 if sys.maxsize > 2 ** 32 else 32))
    print("  allocated      %8.1f bytes per settlement (target 0)" % alloc_per_settlement(t))


main()
