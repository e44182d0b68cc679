# The virtual board's boot script (host_tools/vboard.py): MicroPython run by
# the unix port at every start of the interpreter, before its REPL, as
#     micropython -X heapsize=H -i vboard_boot.py KIND ROOT FROZEN STATE
# KIND: "hard" (power-on, hard or watchdog reset: boot.py then main.py),
# "soft" (soft reset from the friendly REPL: boot.py, main.py) or "raw" (soft
# reset from the raw REPL: boot.py only). ROOT: the board's filesystem folder,
# mounted as "/". FROZEN: a folder of sim/ compiled to .mpy, served read-only
# at /.frozen (empty when the interpreter has sim/ frozen in). STATE: the
# simulator's own folder (the RTC), served at /.vboard. Neither shows in a
# listing of "/": a board's filesystem does not hold them (sim/_sim_vfs.py,
# loaded compiled from FROZEN, or frozen in: no compilation on the heap).
#
# Names are prefixed so that they do not clash with what boot.py and main.py
# define in the same (__main__) namespace, and are deleted before the REPL.
#
# The relay turns a Ctrl-C from the host into a SIGINT only while this
# script can take it: the unix port dies of a SIGINT before its script runs
# and after it ends (it has a handler only while code runs), and raises the
# KeyboardInterrupt at once, wherever the code is. It reads markers on the
# output (ESC _vboard:WHAT ESC \), which never reach the host:
#   boot     a Ctrl-C may come now (boot.py, main.py)
#   int      a KeyboardInterrupt was taken: the next may come (one at a
#            time: a second could land in this script as it takes the first)
#   ready    boot.py/main.py are done: no more Ctrl-C. The relay answers
#            with ACK (0x06), after any Ctrl-C it passed on; this script
#            ends once it has read it, so that no SIGINT lands after it.
#   again    a SIGINT came as the ACK was read, which can lose it: the relay
#            answers with 0x07, which this script then waits for
#   exit:N   boot.py or main.py called sys.exit(N) (a board resets then;
#            the unix port would enter its REPL)


def _vb_main():
    import gc
    import os
    import sys

    import vfs

    kind, root, frozen, state = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    sys.path[:] = [frozen] if frozen else [".frozen"]
    from _sim_vfs import Root

    del sys.modules["_sim_vfs"]
    vfs.umount("/")
    vfs.mount(Root(root, frozen, state), "/")
    del Root
    os.chdir("/")
    # As on an ESP32: the frozen modules, then /lib. Served sim/ (no frozen
    # copy in this interpreter) comes last.
    sys.path[:] = ["", ".frozen", "/lib"]
    if frozen:
        sys.path.append("/.frozen")
    sys.argv[:] = []

    def run(name):
        try:
            os.stat(name)
        except OSError:
            return
        try:
            execfile(name, globals())  # noqa: F821  (a MicroPython built-in)
        except SystemExit as e:
            code = e.args[0] if e.args else 0
            if not isinstance(code, int):
                code = 1
            sys.stdout.write("\x1b_vboard:exit:%d\x1b\\" % (code & 255))
            import time

            while True:
                time.sleep(1)
        except BaseException as e:  # noqa: B036  (as a board prints and goes on)
            sys.print_exception(e)  # type: ignore[attr-defined]
            if isinstance(e, KeyboardInterrupt):
                raise

    todo = ["boot.py"] if kind == "raw" else ["boot.py", "main.py"]
    began = ready = done = False
    say = ""  # what the relay must be told first: an interrupt was taken
    want = b"\x06"
    # Every statement after the "boot" marker is inside the try (the loop's
    # first jump comes before it): a Ctrl-C interrupts the file it lands in
    # or the wait for the ACK, never this script.
    while not done:
        try:
            if not began:
                # Set before the marker goes out: the relay passes a held
                # Ctrl-C once it sees it, and the KeyboardInterrupt can come
                # before the write's result is stored. Set after, the marker
                # went out again and "int" never: the relay then merged every
                # later Ctrl-C into that one, and the board could no longer be
                # stopped (CI: mpremote "could not enter raw repl").
                began = True
                sys.stdout.write("\x1b_vboard:boot\x1b\\")
            elif say:
                sys.stdout.write(say)
            say = ""
            while todo:
                run(todo.pop(0))
            if not ready:
                gc.collect()
                ready = sys.stdout.write("\x1b_vboard:ready\x1b\\")
            while not done:
                done = sys.stdin.buffer.read(1) == want
        except KeyboardInterrupt:
            if ready:
                say, want = "\x1b_vboard:again\x1b\\", b"\x07"
            else:
                say = "\x1b_vboard:int\x1b\\"


_vb_main()
del _vb_main
