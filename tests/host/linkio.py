"""The link's socket on CPython (device/link/client.py's `opener`): a
non-blocking socket, TLS by the standard library's ssl, behind the
MicroPython socket calls the client uses (readinto -> None when nothing is
there yet, write(buf, off, n), close)."""

import asyncio
import socket
import ssl as _ssl

_WAIT = (BlockingIOError, InterruptedError, _ssl.SSLWantReadError, _ssl.SSLWantWriteError)


class HostSocket:
    def __init__(self, sock, tls):
        self.s = sock
        self.handshaken = not tls

    def _ready(self):
        if not self.handshaken:
            self.s.do_handshake()  # raises SSLWant* until done
            self.handshaken = True

    def readinto(self, buf):
        try:
            self._ready()
            return self.s.recv_into(buf)
        except _WAIT:
            return None

    def write(self, buf, off, n):
        try:
            self._ready()
            return self.s.send(memoryview(buf)[off:off + n])
        except _WAIT:
            return None

    def close(self):
        self.s.close()


async def open_socket(host, port, ctx, server_hostname):
    s = socket.socket()
    s.setblocking(False)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        await asyncio.get_running_loop().sock_connect(s, (host, port))
        if ctx is not None:
            s = ctx.wrap_socket(s, server_hostname=server_hostname,
                                do_handshake_on_connect=False)
    except BaseException:
        s.close()
        raise
    return HostSocket(s, ctx is not None)
