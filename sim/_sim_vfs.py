# The virtual board's filesystem root (host_tools/vboard.py): the board
# folder served as "/", for the unix port's interpreter. Loaded by the boot
# script (sim/vboard_boot.py) as precompiled (or frozen) code, so that it
# costs the heap no compilation. Not a module of the simulated machine: a
# board's firmware never imports it.
#
# Root(path, frozen, state) is a VfsPosix of `path` with three differences:
# - rename() of two absolute paths fails on the unix port (ENOENT: one shared
#   path buffer), so rename gets paths relative to the current directory;
# - ilistdir() gives each entry's size, as a board's FAT or LittleFS does
#   (mpremote's `fs ls` shows it; VfsPosix gives 3-tuples);
# - /.frozen (the folder `frozen`, read-only: sim/ compiled) and /.vboard (the
#   folder `state`: the simulator's RTC) are served without being mount
#   points, which a listing of "/" would show; they are not listed.
# A wrapper, not a subclass: the VFS calls a subclass's native import_stat
# with the wrong object and imports from /lib fail.
import os

import vfs


class Root:
    def __init__(self, path, frozen, state):
        self.fs = vfs.VfsPosix(path)
        self.ro = vfs.VfsPosix(frozen) if frozen else None
        self.st = vfs.VfsPosix(state) if state else None

    def _at(self, p, write=False):
        # (vfs, path) serving p, an absolute path as the VFS passes it.
        if p.startswith("/."):
            if p.startswith("/.frozen") and self.ro is not None:
                q = p[8:]
                if not q or q[0] == "/":
                    if write:
                        raise OSError(30)  # EROFS
                    return self.ro, q or "/"
            elif p.startswith("/.vboard") and self.st is not None:
                q = p[8:]
                if not q or q[0] == "/":
                    return self.st, q or "/"
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
        if a.startswith("/"):
            a = up + a[1:]
        if b.startswith("/"):
            b = up + b[1:]
        return self.fs.rename(a, b)
