"""The virtual board, driven by the real, unmodified mpremote CLI."""

import os
import signal
import subprocess
import sys
import time

import pytest
from prockit import command_lines

from host_tools import REPO, heaps
from host_tools.vboard import RESET_EXIT, VirtualBoard
from host_tools.vboard_shell import HOST_STALL, MUTE_DEATHS

MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")

# How long a test waits for what it needs (a boot, a reset, a file): long
# enough for a busy machine; the wait ends as soon as the event comes.
WAIT = 60

MAIN_PY = "f = open('/runs.txt', 'a')\nf.write('main\\n')\nf.close()\n"
CAUSE_MAIN = ("import machine\nf = open('/causes.txt', 'a')\n"
              "f.write('%d\\n' % machine.reset_cause())\nf.close()\n")
BOOT_PY = "f = open('/boots.txt', 'a')\nf.write('boot\\n')\nf.close()\n"


def mpr(vb, *args, check=True, timeout=120):
    r = subprocess.run([MPREMOTE, "connect", vb.port, *args], capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode:
        raise AssertionError("mpremote %s: %s%s" % (args, r.stdout, r.stderr))
    return r


def lines(vb, name):
    try:
        with open(os.path.join(vb.fs, name)) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def wait_for(pred, timeout=WAIT):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


@pytest.fixture(scope="module")
def vb(tmp_path_factory):
    board = VirtualBoard(str(tmp_path_factory.mktemp("vboard")))
    with board:
        yield board


def clean(vb):
    for name in ("main.py", "boot.py", "runs.txt", "boots.txt"):
        try:
            os.remove(os.path.join(vb.fs, name))
        except FileNotFoundError:
            pass


def test_exec_path_heap_and_filesystem_root(vb):
    out = mpr(vb, "exec", "import sys, os, gc; gc.collect(); "
                          "print(sys.path, os.getcwd(), sys.argv, sys.implementation.name, "
                          "gc.mem_free() + gc.mem_alloc())").stdout
    path = "['', '.frozen', '/lib']" if vb.frozen_in else "['', '.frozen', '/lib', '/.frozen']"
    assert path + " / [] micropython" in out
    total = int(out.split()[-1])
    heap = int(vb.heap[:-1]) * 1024 if vb.heap.endswith("k") else int(vb.heap)
    assert heap - 8000 < total <= heap
    assert os.path.realpath(vb.port) == vb.pty


def test_fs_cp_ls_cat_and_sha256(vb, tmp_path):
    src = tmp_path / "hello.txt"
    src.write_text("hello\nboard\n")
    mpr(vb, "fs", "mkdir", ":lib")
    mpr(vb, "fs", "cp", str(src), ":lib/hello.txt")
    assert (open(os.path.join(vb.fs, "lib", "hello.txt")).read()) == "hello\nboard\n"
    assert "hello.txt" in mpr(vb, "fs", "ls", ":lib").stdout
    assert mpr(vb, "fs", "cat", ":lib/hello.txt").stdout.replace("\r", "") == "hello\nboard\n"
    back = tmp_path / "back.txt"
    mpr(vb, "fs", "cp", ":lib/hello.txt", str(back))
    assert back.read_text() == "hello\nboard\n"
    # a module on /lib imports as on the board
    (tmp_path / "mod_x.py").write_text("V = 42\n")
    mpr(vb, "fs", "cp", str(tmp_path / "mod_x.py"), ":lib/mod_x.py")
    assert mpr(vb, "exec", "import mod_x; print(mod_x.V * 2)").stdout.strip() == "84"
    # rename with absolute paths, as the firmware does (the unix port's own fails)
    mpr(vb, "exec", "import os; os.rename('/lib/hello.txt', '/lib/hi.txt'); os.chdir('/lib'); "
                    "os.rename('/lib/hi.txt', '/hello.txt'); os.chdir('/')")
    assert open(os.path.join(vb.fs, "hello.txt")).read() == "hello\nboard\n"
    os.remove(os.path.join(vb.fs, "hello.txt"))
    mpr(vb, "fs", "rm", "-r", ":lib")
    assert not os.path.exists(os.path.join(vb.fs, "lib"))


def test_sim_is_importable_but_not_writable(vb):
    if not os.path.exists(os.path.join(REPO, "sim", "machine.py")):
        pytest.skip("sim/machine.py not written yet")
    out = mpr(vb, "exec", "import machine; print(machine.__file__)").stdout
    if vb.frozen_in:  # the interpreter has sim/ frozen in: nothing served
        out = mpr(vb, "exec", "import machine; print(machine.__file__, "
                              "hasattr(machine, 'sim_wire_connected'))").stdout
        assert out.split() == ["machine.py", "True"]  # the frozen sim, not a file
        assert not os.path.exists(os.path.join(vb.folder, "frozen"))
        return
    assert "/.frozen/machine.mpy" in out  # precompiled, as frozen code is
    r = mpr(vb, "exec", "open('/.frozen/x.py', 'w')", check=False)
    assert r.returncode != 0 and "OSError" in r.stdout + r.stderr


def test_soft_reset_runs_boot_but_not_main(vb, tmp_path):
    clean(vb)
    (tmp_path / "main.py").write_text(MAIN_PY)
    (tmp_path / "boot.py").write_text(BOOT_PY)
    mpr(vb, "fs", "cp", str(tmp_path / "boot.py"), ":boot.py")
    mpr(vb, "fs", "cp", str(tmp_path / "main.py"), ":main.py")
    boots = len(lines(vb, "boots.txt"))
    mpr(vb, "soft-reset")
    mpr(vb, "exec", "print(1)")
    assert lines(vb, "runs.txt") == []
    assert len(lines(vb, "boots.txt")) >= boots + 2  # boot.py on every start
    clean(vb)


def test_hard_reset_runs_main(vb, tmp_path):
    clean(vb)
    (tmp_path / "main.py").write_text(MAIN_PY)
    mpr(vb, "fs", "cp", str(tmp_path / "main.py"), ":main.py")
    assert lines(vb, "runs.txt") == []
    # the relay's contract: exit status RESET_EXIT is machine.reset()
    mpr(vb, "exec", "--no-follow", "import sys; sys.exit(%d)" % RESET_EXIT)
    assert wait_for(lambda: lines(vb, "runs.txt") == ["main"])
    assert vb.wait_ready(WAIT)
    mpr(vb, "exec", "print(1)")  # mpremote gets in again
    assert lines(vb, "runs.txt") == ["main"]
    clean(vb)


def test_mpremote_reset_runs_main(vb, tmp_path):
    machine_py = os.path.join(REPO, "sim", "machine.py")
    if not os.path.exists(machine_py) or "SICBO_VBOARD_RESET_EXIT" not in open(machine_py).read():
        pytest.skip("TODO(sim): machine.reset() does not end the interpreter with "
                    "$SICBO_VBOARD_RESET_EXIT yet")
    clean(vb)
    (tmp_path / "main.py").write_text(MAIN_PY)
    mpr(vb, "fs", "cp", str(tmp_path / "main.py"), ":main.py")
    mpr(vb, "reset")
    assert wait_for(lambda: lines(vb, "runs.txt") == ["main"])
    clean(vb)


def test_running_main_is_interrupted_by_mpremote(vb, tmp_path):
    clean(vb)
    (tmp_path / "main.py").write_text(MAIN_PY + "import time\nwhile True:\n    time.sleep_ms(10)\n")
    mpr(vb, "fs", "cp", str(tmp_path / "main.py"), ":main.py")
    vb.restart(timeout=0)  # power cycle: main.py starts and never returns
    assert wait_for(lambda: lines(vb, "runs.txt") == ["main"])
    assert not vb.wait_ready(0.3)
    assert mpr(vb, "exec", "print(6 * 7)").stdout.strip() == "42"
    clean(vb)


def test_power_cut_and_restart(vb, tmp_path):
    clean(vb)
    pid = vb.pid
    assert pid
    vb.power_cut()
    assert vb.pid is None
    assert not os.path.exists("/proc/%d" % pid) or _zombie(pid)
    assert not os.path.lexists(vb.port)  # the port is gone, as a USB board's
    r = mpr(vb, "exec", "print(1)", check=False)
    assert r.returncode != 0 and "failed to access" in r.stderr + r.stdout
    with open(os.path.join(vb.fs, "main.py"), "w") as f:
        f.write(MAIN_PY)
    vb.power_on(timeout=0)
    assert wait_for(lambda: lines(vb, "runs.txt") == ["main"])
    assert vb.pid and vb.pid != pid
    assert mpr(vb, "exec", "print(2)").stdout.strip() == "2"
    clean(vb)


def _zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split()[2] == "Z"
    except FileNotFoundError:
        return True


def _interpreters(folder):
    return [pid for pid, argv in command_lines()
            if any("vboard_boot.py" in a for a in argv)
            and any(a.endswith(folder + "/fs") for a in argv) and not _zombie(pid)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_cli_stops_cleanly(tmp_path, sig):
    folder = str(tmp_path / "vb")
    proc = subprocess.Popen([sys.executable, "-m", "host_tools", "vboard", "--folder", folder],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: os.path.islink(os.path.join(folder, "tty"))
                        and _interpreters(folder))
        r = subprocess.run([MPREMOTE, "connect", os.path.join(folder, "tty"), "exec", "print(5)"],
                           capture_output=True, text=True, timeout=600)
        assert r.stdout.strip() == "5"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "mpremote connect" in out
    assert _interpreters(folder) == []
    assert not os.path.lexists(os.path.join(folder, "tty"))


def test_api_stop_leaves_no_process(tmp_path):
    vb = VirtualBoard(str(tmp_path / "vb2"))
    with vb:
        pid = vb.pid
        assert pid and os.path.exists("/proc/%d" % pid)
    assert _interpreters(vb.folder) == []
    assert not os.path.lexists(vb.link)


def test_simulated_table_is_attached(vb):
    if vb.control is None:
        pytest.skip("host_tools.simtable not available")
    import json
    import socket
    assert os.path.exists(vb.control) and os.path.exists(vb.wire)
    out = mpr(vb, "exec", "import os; print(os.getenv('SICBO_SIM_WIRE'))").stdout.strip()
    assert out == vb.wire
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(vb.control)
    s.sendall(b'{"op": "ping"}\n')
    reply = b""
    while not reply.endswith(b"\n"):
        reply += s.recv(4096)
    s.close()
    assert json.loads(reply)["protocol"].startswith("sicbo-sim")
    if os.path.exists(os.path.join(REPO, "sim", "machine.py")):
        # the simulated machine module reaches the table through the wire
        out = mpr(vb, "exec", "import machine; p = machine.Pin(25, machine.Pin.OUT); "
                              "p.value(1); print(p.value())").stdout.strip()
        assert out == "1"


def test_sicbo_test_on_the_virtual_board(vb):
    # a source left by hand beside a compiled module would shadow it: removed
    os.makedirs(os.path.join(vb.fs, "t", "tests", "logic"), exist_ok=True)
    with open(os.path.join(vb.fs, "t", "tests", "logic", "test_dates.py"), "w") as f:
        f.write("raise ImportError('stale source')\n")
    r = subprocess.run([sys.executable, "-m", "host_tools", "test", "--on", vb.port,
                        "test_areas.py", "test_dates.py", "test_board.py", "test_faults.py"],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    last = r.stdout.strip().splitlines()[-1]
    passed, failed = int(last.split()[0]), int(last.split()[2])
    assert passed > 0 and failed == 0 and r.returncode == 0, r.stdout + r.stderr
    # test_board.py reads the shipped board files (copied beside the tests)
    row = [ln for ln in r.stdout.splitlines() if ln.strip().startswith("test_board.py ")]
    assert len(row) == 1 and " 0 failed" in row[0], r.stdout
    assert os.path.exists(os.path.join(vb.fs, "t", "board_config", "boards", "virtual.json"))
    # the controller's tests need more heap than this board's: not run, and said so
    assert vb.heap == "240k"
    assert ("1 controller test file(s) not run: this board's heap of " in r.stdout
            and "under the %d they need on a 64-bit board" % heaps.CONTROLLER_BOARD_USABLE_64
            in r.stdout), r.stdout
    assert not [ln for ln in r.stdout.splitlines() if ln.strip().startswith("test_faults.py")]
    assert os.path.exists(os.path.join(vb.fs, "t", "tests", "mp_runner.py"))
    assert os.path.exists(os.path.join(vb.fs, "t", "device", "sicbo", "settle.mpy"))
    assert not os.path.exists(os.path.join(vb.fs, "t", "tests", "logic", "test_dates.py"))
    assert "test_dates.py" in r.stdout
    # a second run writes nothing
    r = subprocess.run([sys.executable, "-m", "host_tools", "test", "--on", vb.port,
                        "test_areas.py"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert "(0 of" in r.stdout and r.returncode == 0, r.stdout + r.stderr


def test_friendly_repl_ctrl_d_runs_main(vb, tmp_path):
    import serial

    clean(vb)
    with open(os.path.join(vb.fs, "main.py"), "w") as f:
        f.write(MAIN_PY)
    with serial.Serial(vb.port, 115200, timeout=0.2) as s:
        s.write(b"\r\x03\r\x02")  # to the friendly REPL, as a terminal user is
        got = b""
        end = time.monotonic() + WAIT
        while b"help()" not in got and time.monotonic() < end:  # its banner
            got += s.read(1000)
            if got.endswith(b"raw REPL; CTRL-B to exit\r\n>"):
                # The last tool's soft reset ended in the raw REPL after
                # that Ctrl-B: pressed again, as the user would.
                s.write(b"\x02")
                got = b""
        assert b"help()" in got, got
        s.write(b"\x04")  # Ctrl-D: soft reset, which runs main.py from the friendly REPL
        got = b""
        end = time.monotonic() + WAIT
        while b">>> " not in got.split(b"soft reboot", 1)[-1] and time.monotonic() < end:
            got += s.read(1000)
    assert b"MPY: soft reboot\r\n" in got
    assert lines(vb, "runs.txt") == ["main"]
    assert b"\n" not in got.replace(b"\r\n", b"")  # every newline is \r\n, as on a board
    clean(vb)


def test_killed_vboard_leaves_no_interpreter(tmp_path):
    folder = str(tmp_path / "vb")
    proc = subprocess.Popen([sys.executable, "-m", "host_tools", "vboard", "--folder", folder],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: _interpreters(folder))
    finally:
        proc.kill()  # SIGKILL: no clean-up code runs
        proc.wait()
    # the interpreter's terminal hangs up with its master: it ends too
    assert wait_for(lambda: _interpreters(folder) == [])


def test_an_interpreter_that_cannot_run_is_reported(tmp_path):
    vb = VirtualBoard(str(tmp_path / "vb3"), command=["/bin/false"], table=False)
    with pytest.raises(RuntimeError, match="keeps dying"):
        vb.start(timeout=WAIT)
    assert vb.boots == MUTE_DEATHS + 1  # it gave up, however slow the host
    vb = VirtualBoard(str(tmp_path / "vb4"), command=[str(tmp_path / "none")], table=False)
    with pytest.raises(RuntimeError, match="cannot start the interpreter"):
        vb.start()
    assert not os.path.lexists(vb.link)


@pytest.mark.parametrize("where", ["cpython", "micropython"])
def test_sicbo_test_locally(where):
    r = subprocess.run([sys.executable, "-m", "host_tools", "test", "--on", where,
                        "test_areas.py", "test_dates.py"],
                       cwd=REPO, capture_output=True, text=True, timeout=600)
    last = r.stdout.strip().splitlines()[-1].split()
    assert last[1:] == ["passed,", "0", "failed"] and int(last[0]) > 0, r.stdout + r.stderr
    assert r.returncode == 0
    r = subprocess.run([sys.executable, "-m", "host_tools", "test", "--on", where,
                        "test_nothing_here.py"], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 2 and "no test file" in r.stderr


def test_mpremote_mount_is_binary_safe(vb, tmp_path):
    (tmp_path / "mm.py").write_text("X = 5\n")
    out = mpr(vb, "mount", str(tmp_path), "exec",
              "import mm; f = open('out.bin', 'wb'); f.write(bytes(range(256)) + b'a\\nb\\n'); "
              "f.close(); print(mm.X)").stdout
    assert out.strip().splitlines()[-1] == "5"
    assert (tmp_path / "out.bin").read_bytes() == bytes(range(256)) + b"a\nb\n"


def test_output_nobody_reads_is_dropped_and_a_reader_gets_everything(vb):
    import serial

    clean(vb)
    with open(os.path.join(vb.fs, "main.py"), "w") as f:
        f.write("for i in range(20000):\n    print('journal line %d ......................' % i)\n"
                "open('/printed.txt', 'w').close()\n")
    vb.restart(timeout=0)  # main.py prints ~900 KB with nobody connected, then returns
    assert wait_for(lambda: os.path.exists(os.path.join(vb.fs, "printed.txt")))
    assert vb.wait_ready(WAIT)
    # A terminal opened now gets what the board prints from now on, not the
    # 900 KB printed before (at most what was on its way: the relay's backlog
    # and a pty's buffer)
    with serial.Serial(vb.port, 115200, timeout=0.2) as s:
        s.write(b"\r")
        got = b""
        end = time.monotonic() + WAIT
        while not got.endswith(b">>> ") and time.monotonic() < end:
            got += s.read(65536)
    assert got.endswith(b">>> "), got[-200:]
    assert len(got) < 200_000, len(got)
    assert mpr(vb, "exec", "print(7)").stdout.strip().endswith("7")
    out = mpr(vb, "exec", "for i in range(5000): print('%06d ' % i + '.' * 60)").stdout
    got = [line for line in out.splitlines() if line.strip()]
    assert len(got) == 5000 and got[-1].startswith("004999")  # flow control, no loss
    os.remove(os.path.join(vb.fs, "printed.txt"))
    clean(vb)


CHATTY_MAIN_PY = """
import time
t0 = last = time.ticks_ms()
n = gap = 0
while time.ticks_diff(last, t0) < 2500:
    for k in range(20):
        print('journal %6d round 1 ..........................................' % n)
    n += 1
    time.sleep_ms(2)
    now = time.ticks_ms()
    gap = max(gap, time.ticks_diff(now, last))
    last = now
f = open('/chatty.txt', 'w')
f.write('%d %d' % (n, gap))
f.close()
while True:
    print('tick %d' % n)
    n += 1
    time.sleep_ms(20)
"""


def test_a_board_printing_with_its_port_closed_never_stalls(vb):
    # A UART never blocks: with nobody holding the port open, what the board
    # prints (here ~400 KB/s, far more than the ptys buffer) is lost at once
    # and the app runs on, as after a deploy the firmware does; a terminal
    # opened later shows what the board prints from then on.
    import serial

    clean(vb)
    with open(os.path.join(vb.fs, "main.py"), "w") as f:
        f.write(CHATTY_MAIN_PY)
    mpr(vb, "exec", "print(1)")  # a tool came and went, as deploy's do
    vb.restart(timeout=0)

    def chatty():
        try:
            with open(os.path.join(vb.fs, "chatty.txt")) as f:
                return [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            return None
    assert wait_for(lambda: chatty() and len(chatty()) == 2)
    n, gap = chatty()
    # Held output would hold the board until a reader came (for ever) or,
    # for a port held open, for HOST_STALL: the longest gap between two
    # rounds of printing stays below that (the rest is the host's load).
    assert gap < HOST_STALL * 1000, "the board stalled %d ms printing to a closed port" % gap
    assert n > 100
    with serial.Serial(vb.port, 115200, timeout=0.2) as s:  # a terminal that only reads
        got = b""
        end = time.monotonic() + WAIT
        while got.count(b"tick") < 5 and time.monotonic() < end:
            got += s.read(1000)
    assert got.count(b"tick") >= 5, got[-300:]
    assert mpr(vb, "exec", "print(6 * 7)").stdout.strip() == "42"
    os.remove(os.path.join(vb.fs, "chatty.txt"))
    clean(vb)


def test_ctrl_c_interrupts_code_sent_in_raw_paste_mode(vb):
    # mpremote sends all code in raw-paste mode; the next connection's Ctrl-C
    # must stop it, as on a board
    spin = os.path.join(vb.fs, "spin.txt")
    mpr(vb, "exec", "--no-follow", "open('/spin.txt', 'w').close()\nwhile True:\n    pass\n")
    assert wait_for(lambda: os.path.exists(spin))  # it runs
    assert mpr(vb, "exec", "print(3)").stdout.strip() == "3"
    os.remove(spin)
    # and a connection after `mpremote reset` gets in once the board has reset
    # (bytes sent while a board resets are lost, on a board too)
    resets = vb.hard_resets
    mpr(vb, "exec", "print(1)", "+", "reset")
    assert wait_for(lambda: vb.hard_resets == resets + 1)
    assert vb.wait_ready(WAIT)
    assert mpr(vb, "exec", "print(4)").stdout.strip() == "4"


def test_a_ctrl_c_as_the_board_boots_interrupts_main_and_never_resets_it(vb):
    # mpremote connects with a Ctrl-C; one that comes as the interpreter
    # starts (before its SIGINT handler) or as boot.py/main.py end must not
    # end the unix port: the board would have soft-reset (reset cause 5)
    # where a board does not. At every moment of the boot: from the power-on
    # on, then later and later into it.
    clean(vb)
    with open(os.path.join(vb.fs, "main.py"), "w") as f:
        f.write(CAUSE_MAIN + "import time\ntime.sleep_ms(20)\n")
    if os.path.exists(os.path.join(vb.fs, "causes.txt")):
        os.remove(os.path.join(vb.fs, "causes.txt"))
    soft = vb.soft_resets
    crashes = vb.crashes
    for i in range(12):
        vb.power_cut()
        vb.power_on(timeout=0)
        fd = os.open(vb.port, os.O_RDWR | os.O_NOCTTY)
        try:
            time.sleep(0.005 * i)
            os.write(fd, b"\r\x03" * (1 + i % 2))  # one Ctrl-C, or two in a row
        finally:
            os.close(fd)
        assert vb.wait_ready(WAIT)
        assert mpr(vb, "exec", "print(%d)" % i).stdout.strip() == str(i)
    assert vb.soft_resets - soft == 12  # mpremote's own soft resets, nothing else
    assert vb.crashes == crashes
    # main.py ran at power-on only, whether it was interrupted or not
    assert set(lines(vb, "causes.txt")) <= {"1"}
    os.remove(os.path.join(vb.fs, "causes.txt"))
    clean(vb)


def test_every_byte_reaches_code_that_reads_the_console(vb):
    # 0x1a and 0x1c are bytes on a board's UART; a terminal would make them
    # SIGTSTP and SIGQUIT, which stop or end the interpreter. Code sent in
    # the raw REPL (not raw-paste) runs with the terminal as the REPL left it.
    import serial

    def until(s, what):
        got = b""
        end = time.monotonic() + WAIT
        while what not in got and time.monotonic() < end:
            got += s.read(1000)
        assert what in got, got
        return got

    boots = vb.boots
    with serial.Serial(vb.port, 115200, timeout=0.2) as s:
        s.write(b"\r\x03\r\x01")
        until(s, b"raw REPL; CTRL-B to exit\r\n>")
        s.write(b"import sys\nprint('go')\nprint(list(sys.stdin.buffer.read(6)))\x04")
        until(s, b"go")
        s.write(b"\x00\x1a\x1c\x7f\x11\x13")
        got = until(s, b"\x04>")
        s.write(b"\r\x02")
    assert b"[0, 26, 28, 127, 17, 19]" in got, got
    assert vb.boots == boots  # the interpreter lives on


def _control(path, timeout=WAIT):
    """A control-socket client that knows nothing of this project's Python:
    newline JSON over the UNIX socket, as an integrator's script would."""
    import json
    import socket

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    buf = [b""]

    def request(**req):
        s.sendall(json.dumps(req).encode() + b"\n")
        while b"\n" not in buf[0]:
            data = s.recv(65536)
            assert data, "the table closed the control socket"
            buf[0] += data
        line, buf[0] = buf[0].split(b"\n", 1)
        return json.loads(line)

    return s, request


def test_power_cut_and_power_on_through_the_control_socket(tmp_path):
    folder = str(tmp_path / "vb")
    port = os.path.join(folder, "tty")
    proc = subprocess.Popen([sys.executable, "-m", "host_tools", "vboard", "--folder", folder],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = None
    try:
        assert wait_for(lambda: os.path.islink(port)
                        and os.path.exists(os.path.join(folder, "control.sock")))

        def board(code):
            r = subprocess.run([MPREMOTE, "connect", port, "exec", code], capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0, r.stdout + r.stderr
            return r.stdout.strip()

        def causes():
            try:
                with open(os.path.join(folder, "fs", "causes.txt")) as f:
                    return f.read().split()
            except FileNotFoundError:
                return []

        # mpremote gets in once the first boot is over: main.py comes after it
        board("import machine; machine.RTC().datetime((2027, 3, 4, 3, 5, 6, 7, 0))")
        with open(os.path.join(folder, "fs", "main.py"), "w") as f:
            f.write(CAUSE_MAIN)
        r = subprocess.run([MPREMOTE, "connect", port, "reset"], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        # main.py ran after the hard reset, with HARD_RESET
        assert wait_for(lambda: causes() == ["2"]), causes()
        sock, request = _control(os.path.join(folder, "control.sock"))
        # the RTC survives a reset
        assert board("import machine; print(machine.RTC().datetime()[0])") == "2027"
        assert request(op="state")["powered"] is True
        r = request(op="power_cut")
        assert r["ok"] and r["powered"] is False
        assert not os.path.lexists(port)  # the serial port is gone, as a USB board's
        st = request(op="state")
        assert st["powered"] is False and st["connected"] is False
        r = request(op="power_cut")  # again: still off
        assert r["ok"]
        r = request(op="power_on")
        assert r["ok"] and r["powered"] and r["was_powered"] is False
        boots = r["boots"]
        assert wait_for(lambda: os.path.islink(port))
        # main.py imports machine: its boot connects with the power-on cause

        def booted():
            evs = request(op="events", kinds=["connect"])["events"]
            return [e for e in evs if e["boot"] > boots]
        assert wait_for(booted)
        assert booted()[0]["reset_cause"] == "power-on"
        # main.py connects when it imports machine, then writes its line: wait
        # for that line before mpremote's Ctrl-C can interrupt it.
        assert wait_for(lambda: causes() == ["2", "1"]), causes()
        assert request(op="power_on")["was_powered"] is True  # nothing to do
        # the RTC was lost with the power
        assert board("import machine; print(machine.RTC().datetime()[0])") == "2000"
        # no other boot ran main.py (a soft reset from the raw REPL does not)
        assert causes() == ["2", "1"]
    finally:
        if sock is not None:
            sock.close()
        proc.terminate()
        try:
            proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_fs_ls_shows_sizes_and_no_simulator_files(vb, tmp_path):
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)) * 5 + b"xyz")
    mpr(vb, "fs", "cp", str(tmp_path / "blob.bin"), ":blob.bin")
    mpr(vb, "fs", "mkdir", ":sub")
    mpr(vb, "exec", "import machine; machine.RTC().datetime((2026, 1, 2, 4, 3, 4, 5, 0))")
    assert os.path.exists(vb.rtc_file)  # the simulator's RTC, outside the board's files
    out = mpr(vb, "fs", "ls", ":").stdout
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    assert ["1283", "blob.bin"] in rows, out
    assert ["0", "sub/"] in rows, out
    names = [r[-1] for r in rows]
    assert not [n for n in names if n.startswith(".")], out
    out = mpr(vb, "exec", "import os; print(sorted(os.listdir('/')))").stdout
    assert ".frozen" not in out and ".vboard" not in out and ".rtc" not in out
    assert sorted(os.listdir(vb.fs)) == sorted(n.rstrip("/") for n in names)
    mpr(vb, "fs", "rm", ":blob.bin")
    mpr(vb, "fs", "rmdir", ":sub")
    # the simulator's own files cannot be written from the board
    r = mpr(vb, "exec", "open('/.frozen/machine.mpy', 'w')", check=False)
    assert r.returncode != 0 and "OSError" in r.stdout + r.stderr


def test_watchdog_resets_a_board_stuck_at_the_repl(vb):
    if vb.control is None:
        pytest.skip("no simulated table")
    from host_tools.simclient import TableClient

    clean(vb)
    for name in ("causes.txt",):
        if os.path.exists(os.path.join(vb.fs, name)):
            os.remove(os.path.join(vb.fs, name))
    with open(os.path.join(vb.fs, "main.py"), "w") as f:
        f.write(CAUSE_MAIN)
    resets = vb.watchdog_resets
    # fed in time while the code runs, for longer than its timeout: no reset
    # (2 s: room for a loaded host between two feeds)
    out = mpr(vb, "exec", "import machine, time\nw = machine.WDT(timeout=2000)\n"
                          "for i in range(20):\n    time.sleep_ms(150)\n    w.feed()\n"
                          "print('fed')").stdout
    assert out.strip() == "fed"
    assert vb.watchdog_resets == resets
    # back at the REPL, armed and no longer fed: the board resets, as an ESP32
    assert wait_for(lambda: vb.watchdog_resets == resets + 1)
    assert wait_for(lambda: lines(vb, "causes.txt") == ["3"])  # main.py: WDT_RESET
    assert vb.wait_ready(WAIT)
    # once only: the new boot has no watchdog (the table runs it)
    with TableClient(vb.control) as table:
        assert table.state()["watchdog_ms"] is None
    assert vb.watchdog_resets == resets + 1
    # a power-on boot reads PWRON_RESET, machine.reset() HARD_RESET
    vb.restart(timeout=0)
    assert wait_for(lambda: lines(vb, "causes.txt") == ["3", "1"])
    assert vb.wait_ready(WAIT)
    mpr(vb, "exec", "--no-follow", "import machine; machine.reset()")
    assert wait_for(lambda: lines(vb, "causes.txt") == ["3", "1", "2"])
    assert vb.wait_ready(WAIT)
    clean(vb)
    os.remove(os.path.join(vb.fs, "causes.txt"))
