# Part of the simulated `machine` (sim/machine.py): the table side of the
# wire, loaded at import when SICBO_SIM_WIRE is set. The protocol is described
# at the top of sim/machine.py and in docs/simulated-table.md.
import time

import machine as _m
from machine import _FLOAT, _MP, _NPINS, _VALID, _ext, _update, _wframe

# Bytes received but not yet handled, in a preallocated buffer (a new string
# per receive fragmented the app's heap on the virtual board).
_wbuf = bytearray(1024)
_wlen = 0
_wpoll = None
_RECV = 256  # small reads: a large one needs a large free block


# Keys pressed for the board's attention ('Q' pin, 'L' key on a 74HC165
# chain): the key stays pressed until the board has read it twice at least
# ms after its first read of it pressed, then released until it has read it
# so twice more; then 'E' tells the table. A board starved between two reads
# (a loaded host runs the interpreter late) sees every press and, before the
# next press of that key, its release, as an ESP32 always sees a dealer's. A
# level set for the board's attention is a 'Q' whose release level is the
# level set: 'E' once the board has read it so (the board has taken it: a
# key pressed after it comes after it). A hold: [release level, ms, t, late
# reads, phase]; phase 0 pressed, 1 pressed and read, 2 to be released at the
# next read, 3 released and read. Read twice late: the debouncer's clock is
# its poll's, taken before the read.
def _advance(h):
    ph = h[4]
    now = time.ticks_ms()
    if ph == 0 or ph == 2:
        h[2] = now
        h[3] = 0
        h[4] = ph + 1
        return ph == 2  # release now: this read sees it released
    if time.ticks_diff(now, h[2]) >= h[1]:
        h[3] += 1
        if h[3] >= 2:
            if ph == 3:
                return None  # done
            h[4] = 2
    return False


def _held_read(p):
    # machine.Pin.value() reads held pin p (sim/machine.py)
    h = _m._held[p]
    r = _advance(h)
    if r and _ext[p] != h[0]:
        _ext[p] = h[0]
        _update(p)
    elif r is not False:  # done, or a level set that stays
        del _m._held[p]
        _m._wframe(b"E", bytes((p,)))


def _hold(pl):
    # 'Q' pin press release ms16
    p = pl[0]
    if p < _NPINS and _VALID[p]:
        _ext[p] = _FLOAT if pl[1] == 2 else pl[1]
        _update(p)
        _m._held[p] = [_FLOAT if pl[2] == 2 else pl[2], (pl[3] << 8) | pl[4], 0, 0, 0]


# 'W' timeout_ms (4 bytes BE): the WDT was armed or fed (see _sim_time.py).
_wdtf = bytearray(b"W\x00\x04\x00\x00\x00\x00")


def _wdt(ms):
    b = _wdtf
    b[3] = (ms >> 24) & 255
    b[4] = (ms >> 16) & 255
    b[5] = (ms >> 8) & 255
    b[6] = ms & 255
    _m._wsend(b)


def _whandle(kind, pl):
    if kind == 73 and len(pl) == 2:  # 'I'
        p, v = pl[0], pl[1]
        if p < _NPINS and _VALID[p]:
            _m._held.pop(p, None)  # set or released by the table: no longer held
            _ext[p] = _FLOAT if v == 2 else (1 if v else 0)
            _update(p)
    elif kind == 81 and len(pl) == 5:  # 'Q'
        _hold(pl)
    elif kind == 85 and len(pl) >= 1:  # 'U'
        import _sim_uart
        for uid in list(_sim_uart._uart_rxpin):
            if _sim_uart._uart_rxpin[uid] == pl[0]:
                _sim_uart._uart_feed(uid, bytes(pl[1:]))
    elif kind == 65 or kind == 75 or kind == 76:  # 'A', 'K', 'L': the keys' 74HC165 chain
        __import__("_sim_hc165")._wire_in(kind, pl)
    elif kind == 67 and len(pl) == 1:  # 'C'
        _m._cause = pl[0]
    elif kind == 89:  # 'Y'
        return True
    return False


def _wpoll_in(wait_ms=0):
    # Read what the table sent; returns True once a 'Y' has been seen.
    global _wbuf, _wlen
    synced = False
    while _m._wire is not None and _wpoll.poll(wait_ms):
        wait_ms = 0
        try:
            data = _m._wire.recv(_RECV)
        except OSError:
            data = b""
        if not data:
            _m._wire = None
            print("machine(sim): the simulated table closed the wire")
            break
        k = len(data)
        if _wlen + k > len(_wbuf):  # a frame longer than the buffer: grow once
            _wbuf = _wbuf[:_wlen] + bytearray(_wlen + k)
        _wbuf[_wlen:_wlen + k] = data
        _wlen += k
        i = 0
        while _wlen - i >= 3:
            n = (_wbuf[i + 1] << 8) | _wbuf[i + 2]
            if _wlen - i < 3 + n:
                break
            if _whandle(_wbuf[i], bytes(_wbuf[i + 3:i + 3 + n])):
                synced = True
            i += 3 + n
        if i:
            _wbuf[0:_wlen - i] = _wbuf[i:_wlen]
            _wlen -= i
    return synced


def _connect(path):
    global _wpoll
    import select
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if _MP:
        import struct
        s.connect(struct.pack("H", socket.AF_UNIX) + path.encode() + b"\x00")
    else:
        s.connect(path)
    _m._wire = s
    _wpoll = select.poll()
    _wpoll.register(s, select.POLLIN)
    _wframe(b"H", b"sicbo-sim 1")
    # The table answers at once; a loaded host can make that late.
    deadline = time.ticks_add(time.ticks_ms(), 60000)
    while _m._wire is not None:
        left = time.ticks_diff(deadline, time.ticks_ms())
        if left <= 0:
            raise OSError("machine(sim): no initial state from the table at " + path)
        if _wpoll_in(left):
            break
