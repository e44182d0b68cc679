# Simulated `esp32` module of the ESP32 port, as much of it as the code check
# uses (device/remote/verify_agent.py, sicbo verify): Partition, whose RUNNING
# partition (the application the board runs) serves the bytes of an image
# file, read-only. MicroPython code that also runs on CPython.
#
# The image: the file SICBO_SIM_PARTITION names (a path the interpreter can
# open). The virtual board (host_tools/vboard.py) names /.vboard/partition.bin,
# a link in its state folder to the image it runs: the interpreter's own
# binary by default (on the 32-bit VM with the firmware frozen in, the frozen
# firmware: the production image's stand-in), or the file given to
# VirtualBoard(partition=...). Tests may name one with sim_image(path).
#
# As on the ESP32: a partition is whole blocks (4096 bytes unless given),
# here as many as hold the image, the rest erased (0xFF, as flash after an
# erase); readblocks(block, buf[, offset]) reads len(buf) bytes at block *
# block size + offset, anywhere inside the partition, and OSError past its
# end; info() is (type, subtype, address, size, label, encrypted);
# ioctl(4) the block count, ioctl(5) the block size. Writes are refused
# (EROFS): the simulated running partition is the image, never changed.
# Only BOOT and RUNNING exist (both this image); a label finds nothing.
import os

_image = [None]  # the image file, once named (sim_image or SICBO_SIM_PARTITION)
_ADDR = 0x10000  # the factory application partition's address on the ESP32


def sim_image(path):
    """Name the image file the running partition serves (None: the
    environment's SICBO_SIM_PARTITION again)."""
    _image[0] = path


def _path():
    if _image[0] is not None:
        return _image[0]
    return os.getenv("SICBO_SIM_PARTITION")


class Partition:
    BOOT = 0
    RUNNING = 1
    TYPE_APP = 0
    TYPE_DATA = 1

    def __init__(self, id, block_size=4096):
        if id != Partition.RUNNING and id != Partition.BOOT:
            raise ValueError("partition not found")  # a label: no such partition here
        if not isinstance(block_size, int) or block_size <= 0:
            raise ValueError("invalid block size")
        path = _path()
        if not path:
            raise OSError(2)  # ENOENT: no image named
        self._path = path
        self._f = None  # the image, opened at the first read and kept
        self._size = os.stat(path)[6]
        self._bs = block_size
        self._blocks = (self._size + block_size - 1) // block_size

    @staticmethod
    def find(type=0, subtype=255, label=None):
        return [Partition(Partition.RUNNING)] if type == Partition.TYPE_APP and (
            label is None or label == "factory") and _path() else []

    def info(self):
        return (Partition.TYPE_APP, 0, _ADDR, self._blocks * self._bs, "factory", False)

    def ioctl(self, op, arg=None):
        if op == 4:
            return self._blocks
        if op == 5:
            return self._bs
        if op == 6:
            raise OSError(30)  # erase: EROFS
        return 0

    def readblocks(self, block_num, buf, offset=0):
        pos = block_num * self._bs + offset
        n = len(buf)
        if block_num < 0 or offset < 0 or pos + n > self._blocks * self._bs:
            raise OSError(22)  # EINVAL: outside the partition (esp_partition_read)
        mv = memoryview(buf)
        got = 0
        if pos < self._size:
            f = self._f
            if f is None:
                f = self._f = open(self._path, "rb")
            f.seek(pos)
            want = min(n, self._size - pos)
            while got < want:
                k = f.readinto(mv[got:want])
                if not k:
                    break
                got += k
        for i in range(got, n):
            mv[i] = 0xFF  # erased flash after the image
        return True

    def writeblocks(self, block_num, buf, offset=0):
        raise OSError(30)  # EROFS: the running image is not changed here

    def set_boot(self):
        pass

    @classmethod
    def mark_app_valid_cancel_rollback(cls):
        pass
