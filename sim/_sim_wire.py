# Part of the simulated `machine` (sim/machine.py): the table side of the
# wire, loaded at import when SICBO_SIM_WIRE is set. The protocol is described
# at the top of sim/machine.py and in docs/simulated-table.md.
import time

import machine as _m
from machine import _FLOAT, _MP, _NPINS, _VALID, _ext, _update, _wframe

_wbuf = b""
_wpoll = None


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
    elif kind == 67 and len(pl) == 1:  # 'C'
        _m._cause = pl[0]
    elif kind == 89:  # 'Y'
        return True
    return False


def _wpoll_in(wait_ms=0):
    # Read what the table sent; returns True once a 'Y' has been seen.
    global _wbuf
    synced = False
    while _m._wire is not None and _wpoll.poll(wait_ms):
        wait_ms = 0
        try:
            data = _m._wire.recv(4096)
        except OSError:
            data = b""
        if not data:
            _m._wire = None
            print("machine(sim): the simulated table closed the wire")
            break
        _wbuf = _wbuf + data
        while len(_wbuf) >= 3:
            n = (_wbuf[1] << 8) | _wbuf[2]
            if len(_wbuf) < 3 + n:
                break
            if _whandle(_wbuf[0], _wbuf[3:3 + n]):
                synced = True
            _wbuf = _wbuf[3 + n:]
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
