# The journal's MAC chain (sicbo/chain.py) on the MicroPython unix port, from
# the .mpy tree that host_tools.mprun compiles (build/mpy), as the board runs it:
#   python -c "from host_tools.mprun import compile_trees; compile_trees()"
#   build/vm32/sim/micropython -X heapsize=111936 bench/bench_chain.py [records]
# Prints, per record and per append (a round's event writes 1 to 6 records in
# one append), microseconds and bytes allocated (gc.mem_alloc with the
# collector off; the sha256 objects and their digests are most of it):
#   the chain's parts: HMAC-SHA256 (pads in preallocated blocks), the key
#     step, the chain hash, a whole record sealed (copy, MAC, hash, key, CRC);
#   JournalStore.append on /tmp without a chain and with one (the records
#     sealed, the segment written and flushed, then the key file written to a
#     temporary file and renamed): the file operations and bytes written per
#     append;
#   catching up at boot: following records the key file does not know yet.
# Times are the VM's on this machine (x86), not the ESP32's: the ESP32 must
# be measured on the ESP32 (its sha256 is mbedtls' in hardware).
import gc
import sys
import time

from benchkit import firmware_path, fresh_folder, remove_folder

firmware_path()

from journal_store import KEY_NAME, JournalStore  # noqa: E402
from sicbo import chain as C  # noqa: E402
from sicbo import journal  # noqa: E402
from sicbo import records as R  # noqa: E402
from sicbo.roundstate import RoundState  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
KEY = bytes(range(32))


def measure(label, fn, n, per=1):
    """fn() n times: microseconds and bytes allocated per unit (per calls)."""
    gc.collect()
    gc.disable()
    a0 = gc.mem_alloc()
    t0 = time.ticks_us()
    k = 0
    for _ in range(n):
        fn()
        k += 1
        if gc.mem_free() < 8192:  # the heap would run out: collect, keep counting
            a = gc.mem_alloc()
            gc.collect()
            a0 -= a - gc.mem_alloc()
    dt = time.ticks_diff(time.ticks_us(), t0)
    used = gc.mem_alloc() - a0
    gc.enable()
    print("  %-52s %8.1f us %7.0f bytes" % (label, dt / (n * per), used / (n * per)))
    return dt / (n * per), used / (n * per)


def plain_records(k, first_seq):
    buf = bytearray()
    for i in range(k):
        buf.extend(journal.encode(R.J_REFUSED, first_seq + i, 3, 1, 1000 + i, None,
                                  bytes((40, 1, 0, 0, 0, 0, 0, 0))))
    return bytes(buf)


def append_bench(chain, label, k):
    d = fresh_folder("bench-chain")
    if chain:
        with open(d + "/" + KEY_NAME, "wb") as f:
            f.write(C.key_file(1, 1, 1, 0, KEY, bytes(16)))
    st = JournalStore(d, segment_bytes=1 << 30)
    st.boot(RoundState().feed)
    seq = [1]
    batch = plain_records(k, 1)

    def app():
        # numbered on: the chain signs each sequence number once
        b = bytearray(batch)
        for i in range(k):
            o = i * R.REC_LEN + R.OFF_SEQ
            s = seq[0] + i
            b[o] = s & 0xFF
            b[o + 1] = (s >> 8) & 0xFF
            b[o + 2] = (s >> 16) & 0xFF
        journal.seal(b, len(b))
        st.append(b)
        seq[0] += k

    measure("%s, %d record%s an append, per append" % (label, k, "" if k == 1 else "s"), app,
            N // (4 * k) or 1)
    print("  %-52s %8d bytes of journal, %d key file writes (%d bytes) and renames"
          % ("  per append:", st.bytes_written // st.appends, st.key_saves // st.appends,
             C.FILE_LEN if chain else 0))
    st.close()
    remove_folder(d)


def main():
    print("bench_chain: %s, %d records; heap %d bytes" % (
        sys.implementation._machine, N, gc.mem_free() + gc.mem_alloc()))
    c = C.Chain(C.key_file(1, 1, 1, 0, KEY, bytes(16)))
    body = memoryview(plain_records(1, 1))[0:R.REC_LEN - R.CRC_LEN]
    print("the chain's parts (a 36-byte record: 32 bytes before its MAC):")
    import hashlib

    data45 = bytes(45)
    measure("(for scale: hashlib.sha256(45 bytes).digest())",
            lambda: hashlib.sha256(data45).digest(), N)
    measure("HMAC-SHA256, truncated to 8 bytes", lambda: c.hmac(body), N)
    measure("key step K(s+1) = SHA-256(label | s | K(s))", c.evolve, N)
    mac_body = memoryview(bytes(40))
    measure("chain hash H = SHA-256(H | record | MAC)[:16]", lambda: c.fold(mac_body), N)
    one = plain_records(1, 1)

    c2 = C.Chain(C.key_file(1, 1, 1, 0, KEY, bytes(16)))
    hdr = bytearray(one[0:R.HEADER])
    hdr[R.OFF_FLAGS] |= R.FLAG_MAC
    pay = memoryview(bytearray(one[R.HEADER:R.REC_LEN - R.CRC_LEN]))

    def sign1():
        c2.seq = 1
        c2.sign(hdr, pay)

    measure("one record signed (Chain.sign: MAC, chain hash, key)", sign1, N)
    print("JournalStore.append on /tmp (write, flush; with the chain: the key file):")
    for chain, label in ((False, "without a chain"), (True, "with the chain")):
        for k in (1, 6):
            append_bench(chain, label, k)
    # Catching up: a key file behind the journal by one append of six records.
    d = fresh_folder("bench-chain")
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(C.key_file(1, 1, 1, 0, KEY, bytes(16)))
    st = JournalStore(d)
    st.boot(RoundState().feed)
    st.append(plain_records(6, 1))
    st.close()
    with open(d + "/" + KEY_NAME, "wb") as f:
        f.write(C.key_file(1, 1, 1, 0, KEY, bytes(16)))  # as after a cut before its write
    buf = bytearray(2048)

    def boot():
        s2 = JournalStore(d)
        rs = RoundState()
        s2.boot(rs.feed, buf)
        s2.chain_next(rs)  # as the boot's stage_chain does, after the replay
        assert s2.chain.seq == 7 and s2.chain.bad == 0
        s2.f.close()
        import os

        os.remove(s2.path(s2.segs[-1][0]))

    measure("a boot that follows 6 records the key file missed", boot, 50)
    remove_folder(d)


main()
