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
            _ext[p] = _FLOAT if v == 2 else (1 if v else 0)
            _update(p)
    elif kind == 85 and len(pl) >= 1:  # 'U'
        import _sim_uart
        for uid in list(_sim_uart._uart_rxpin):
            if _sim_uart._uart_rxpin[uid] == pl[0]:
                _sim_uart._uart_feed(uid, bytes(pl[1:]))
    elif kind == 65 or kind == 75:  # 'A', 'K': the 74HC165 chain of the keys
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
    deadline = time.ticks_add(time.ticks_ms(), 3000)
    while _m._wire is not None:
        left = time.ticks_diff(deadline, time.ticks_ms())
        if left <= 0:
            raise OSError("machine(sim): no initial state from the table at " + path)
        if _wpoll_in(left):
            break
