"""A board's serial console read into lines by a thread, across power cuts.

The virtual board's console is a pty: nobody holding it means what the board
prints is dropped, as a UART with nothing attached drops it. So the watcher
opens the port once mpremote is done with it (reattach()), and again right
after each power-on, before the interpreter prints. A read of nothing means
the port went away (a power cut): the unfinished line is kept, the port is
closed until the next reattach(). Used by the board tests (tests/board) and
the power-cut campaign (bench/powercut_vboard.py).
"""

import errno
import os
import select
import threading
import time


class SerialWatch:
    """SerialWatch(port): lines so far (since(mark)), typing (write)."""

    def __init__(self, port):
        self.port = port
        self.fd = None
        self.lines = []
        self.partial = b""
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="serial-watch", daemon=True)
        self.thread.start()

    def reattach(self, timeout=60):
        """(Re)open the port; OSError if it does not come back in time."""
        deadline = time.monotonic() + timeout
        with self.lock:
            self._close()
            while time.monotonic() < deadline:
                try:
                    self.fd = os.open(self.port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
                    return
                except OSError:
                    time.sleep(0.002)
        raise OSError("the serial port %s did not come back" % self.port)

    def _close(self):
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None
        if self.partial:
            self.lines.append(self.partial.decode("utf-8", "replace"))
            self.partial = b""

    def _run(self):
        while not self.stopping:
            fd = self.fd
            if fd is None:
                time.sleep(0.005)
                continue
            try:
                r, _, _ = select.select([fd], [], [], 0.05)
            except (OSError, ValueError):
                time.sleep(0.005)
                continue
            if not r:
                continue
            with self.lock:
                if self.fd != fd:
                    continue
                try:
                    data = os.read(fd, 65536)
                except OSError as e:
                    if e.errno == errno.EAGAIN:
                        continue
                    data = b""
                if not data:  # the port went away (a power cut)
                    self._close()
                    continue
                *done, self.partial = (self.partial + data).split(b"\n")
                self.lines.extend(x.decode("utf-8", "replace").rstrip("\r") for x in done)

    def write(self, data):
        """Type on the console, as a technician at a terminal."""
        with self.lock:
            if self.fd is None:
                raise OSError("the serial port %s is not open" % self.port)
            os.write(self.fd, data)

    def mark(self):
        with self.lock:
            return len(self.lines)

    def since(self, mark=0):
        """The lines from mark on, the unfinished one last."""
        with self.lock:
            tail = [self.partial.decode("utf-8", "replace")] if self.partial else []
            return self.lines[mark:] + tail

    def close(self):
        self.stopping = True
        self.thread.join(2)
        with self.lock:
            self._close()
