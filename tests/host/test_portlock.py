"""One port, one user (host_tools/portlock.py): while `sicbo console` holds a
board's serial port, `sicbo deploy` and `sicbo diag` refuse in one line that
names it, and the unmodified mpremote cannot open the port; a lock left by a
process that has ended is free; once the console stops, everything works."""

import os
import signal
import subprocess
import sys
import time

import pytest

from host_tools import REPO, heaps
from host_tools.portlock import PortBusy, PortLock, check_free, holder, lock_path
from host_tools.vboard import VirtualBoard

BOARD = os.path.join(REPO, "board_config", "boards", "virtual.json")
TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")
MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")
SICBO = [sys.executable, "-m", "host_tools"]
HOLD = ("import sys, time; sys.path.insert(0, %r)\n"
        "from host_tools.portlock import PortLock\n"
        "PortLock(sys.argv[1], 'sicbo console', sys.argv[2]).acquire()\n"
        "print('held', flush=True)\n"
        "time.sleep(600)\n" % REPO)


def wait_line(proc, text, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if text in line:
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError("no %r from the process (exit %s)" % (text, proc.poll()))


def holding(port, folder):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, port, folder], stdout=subprocess.PIPE,
                            text=True)
    wait_line(proc, "held")
    return proc


def test_a_lock_names_its_holder_and_dies_with_it(tmp_path):
    port = str(tmp_path / "ttyX")
    open(port, "w").close()
    link = str(tmp_path / "tty")
    os.symlink(port, link)
    folder = str(tmp_path)
    assert lock_path(port, folder) == lock_path(link, folder)  # one port, whatever names it
    assert holder(port, folder) is None
    proc = holding(port, folder)
    try:
        assert holder(link, folder) == (proc.pid, "sicbo console")
        with pytest.raises(PortBusy) as e:
            PortLock(link, "sicbo deploy", folder).acquire()
        assert str(e.value).startswith("%s is in use by sicbo console (pid %d)" % (link, proc.pid))
        with pytest.raises(PortBusy):
            check_free(port, folder)
    finally:
        proc.kill()  # as a crash: nothing is cleaned up
        proc.wait()
    # its file is still there, with its pid, but the lock died with it
    assert open(lock_path(port, folder)).read().startswith("%d " % proc.pid)
    assert holder(port, folder) is None
    with PortLock(port, "sicbo deploy", folder) as lock:
        assert holder(port, folder) == (os.getpid(), "sicbo deploy")
        # a second holder, even in this process, is refused
        with pytest.raises(PortBusy, match="in use by sicbo deploy"):
            PortLock(port, "sicbo diag", folder).acquire()
        assert lock.fd is not None
    assert holder(port, folder) is None


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    with VirtualBoard(str(tmp_path_factory.mktemp("vb-lock")), heap=heaps.HEAP_64_EQUIVALENT) as vb:
        yield vb


def test_the_console_holds_the_port(board):
    port = board.port
    console = subprocess.Popen(SICBO + ["console", "--port", port], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while holder(port) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert holder(port) == (console.pid, "sicbo console")
        for argv in (["diag", "--port", port, "status"],
                     ["deploy", "--port", port, "--board", BOARD, "--table", TABLE],
                     ["console", "--port", port]):
            r = subprocess.run(SICBO + argv, cwd=REPO, capture_output=True, text=True,
                               timeout=60)
            assert r.returncode == 2, (argv, r.stdout, r.stderr)
            assert r.stderr.strip() == (
                "sicbo %s: %s is in use by sicbo console (pid %d): stop it first (one program "
                "at a time on a serial port)" % (argv[0], port, console.pid)), r.stderr
            assert "Traceback" not in r.stdout + r.stderr
        assert console.poll() is None, console.communicate()  # the console still reads it
        # mpremote, unmodified, cannot open it (the console opened it exclusively)
        r = subprocess.run([MPREMOTE, "connect", port, "exec", "print(1)"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0 and "failed to access" in r.stdout + r.stderr, r
        assert console.poll() is None  # and the console goes on
    finally:
        console.send_signal(signal.SIGINT)
        out, err = console.communicate(timeout=30)
    assert console.returncode == 0, err
    assert holder(port) is None
    r = subprocess.run([MPREMOTE, "connect", port, "exec", "print(6 * 7)"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "42", r
