# The virtual board's boot script (host_tools/vboard.py): MicroPython run by
# the unix port at every start of the interpreter, before its REPL, as
#     micropython -X heapsize=H -i vboard_boot.py KIND ROOT FROZEN STATE
# KIND: "hard" (power-on, hard or watchdog reset: boot.py then main.py),
# "soft" (soft reset from the friendly REPL: boot.py, main.py) or "raw" (soft
# reset from the raw REPL: boot.py only). ROOT: the board's filesystem folder,
# mounted as "/". FROZEN: a folder of sim/ compiled to .mpy, served read-only
# at /.frozen (empty when the interpreter has sim/ frozen in). STATE: the
# simulator's own folder (the RTC), served at /.vboard. Neither shows in a
# listing of "/": a board's filesystem does not hold them.
#
# Names are prefixed so that they do not clash with what boot.py and main.py
# define in the same (__main__) namespace, and are deleted before the REPL.
# The relay reads two markers on the output: ESC _vboard:ready ESC \ once the
# REPL is about to start, ESC _vboard:exit:N ESC \ when boot.py or main.py
# called sys.exit(N) (a board resets then; the unix port would enter its REPL).


def _vb_main():
    def _vb_setup():
        import os
        import sys

        import vfs

        kind, root, frozen, state = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
        hidden = {}
        if frozen:
            hidden[".frozen"] = (vfs.VfsPosix(frozen), True)
        if state:
            hidden[".vboard"] = (vfs.VfsPosix(state), False)

        class Root:
            # The board folder as "/": a VfsPosix, with three differences.
            # - rename() of two absolute paths fails on the unix port (ENOENT: one
            #   shared path buffer), so rename gets paths relative to the cwd.
            # - ilistdir() gives each entry's size, as a board's FAT or LittleFS
            #   does (mpremote's `fs ls` shows it; VfsPosix gives 3-tuples).
            # - /.frozen and /.vboard are served from their own folders without
            #   being mount points (a mount point is listed in "/").
            # A wrapper, not a subclass: the VFS calls a subclass's native
            # import_stat with the wrong object and imports from /lib fail.
            def __init__(self, path):
                self.fs = vfs.VfsPosix(path)

            def __repr__(self):
                return "<VfsPosix>"

            def _at(self, p, write=False):
                # (vfs, path) serving p; p is absolute here, as the VFS passes it.
                if p.startswith("/."):
                    i = p.find("/", 2)
                    top = p[1:] if i < 0 else p[1:i]
                    h = hidden.get(top)
                    if h is not None:
                        if write and h[1]:
                            raise OSError(30)  # EROFS
                        return h[0], (p[i:] if i >= 0 else "/")
                return self.fs, p

            def mount(self, readonly, mkfs):
                pass

            def umount(self):
                pass

            def open(self, p, mode):
                fs, q = self._at(p, "w" in mode or "a" in mode or "+" in mode or "x" in mode)
                return fs.open(q, mode)

            def ilistdir(self, p):
                fs, q = self._at(p)
                base = q if q.endswith("/") else q + "/"
                for e in fs.ilistdir(q):
                    size = 0
                    if e[1] == 0x8000:
                        try:
                            size = fs.stat(base + e[0])[6]
                        except OSError:
                            pass
                    yield (e[0], e[1], e[2], size)

            def chdir(self, p):
                return self.fs.chdir(p)

            def getcwd(self):
                return self.fs.getcwd()

            def mkdir(self, p):
                fs, q = self._at(p, True)
                return fs.mkdir(q)

            def remove(self, p):
                fs, q = self._at(p, True)
                return fs.remove(q)

            def rmdir(self, p):
                fs, q = self._at(p, True)
                return fs.rmdir(q)

            def stat(self, p):
                fs, q = self._at(p)
                return fs.stat(q)

            def statvfs(self, p):
                return self.fs.statvfs(p)

            def rename(self, a, b):
                fa, qa = self._at(a, True)
                fb, qb = self._at(b, True)
                if fa is not self.fs or fb is not self.fs:
                    if fa is not fb:
                        raise OSError(18)  # EXDEV
                    return fa.rename(qa, qb)
                up = "../" * len([s for s in os.getcwd().split("/") if s])

                def rel(s):
                    return up + s[1:] if s.startswith("/") else s

                return self.fs.rename(rel(a), rel(b))

        vfs.umount("/")
        vfs.mount(Root(root), "/")
        os.chdir("/")
        # As on an ESP32: the frozen modules, then /lib. Served sim/ (no frozen
        # copy in this interpreter) comes last.
        sys.path[:] = ["", ".frozen", "/lib"]
        if frozen:
            sys.path.append("/.frozen")
        sys.argv[:] = []
        return kind


    def _vb_run(name):
        import os
        import sys

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

    import gc
    import sys

    kind = _vb_setup()
    _vb_run("boot.py")
    if kind != "raw":
        _vb_run("main.py")
    gc.collect()
    sys.stdout.write("\x1b_vboard:ready\x1b\\")


_vb_main()
del _vb_main
