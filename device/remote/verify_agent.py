# sicbo verify's board-side code (host_tools/commands/verify.py). Never
# installed on the board (device/remote/ is neither deployed nor frozen): the
# host sends the imports and the functions, comments and docstrings stripped
# (host_tools.deploy.agent_code), then one call, through one mpremote exec.
# Names start with sv_, apart from what else lives in __main__.
#
# The answer is a keyed hash, HMAC-SHA256 under the inspector's seed, of the
# code the board runs: every code file on its filesystem (*.py and *.mpy at
# any depth: all an import or main.py can load), each as stored, and, when
# asked, the running application partition (esp32.Partition.RUNNING: the
# firmware, with the code frozen in) up to the end of its image; then one
# over all of them. The seed is the inspector's, fresh each time: an answer
# recorded for another seed says nothing. MicroPython has hashlib.sha256 but
# no hmac module: the pads are made here (RFC 2104). Files and the partition
# are read 1 KiB at a time (a 110 KiB heap; mpremote soft-resets first).
#
# What is hashed (the host computes the same from the approved release):
#   a file       HMAC(seed, "file\n" path "\n" size "\n" bytes), the path without its /
#   partition    HMAC(seed, "partition\n" n "\n" its first n bytes): n is the
#                image's length (an ESP application image: header, segments,
#                checksum, appended digest; any other: the whole partition)
#   the answer   HMAC(seed, "answer\n" then each item's line "hex name\n"):
#                files by path, then "partition N"
# Output lines, read by the host: "SICBO-VI <repr of a dict>" (the board),
# "SICBO-VF <hex> <path>" per file, "SICBO-VP <hex> <n> <size> <address>",
# "SICBO-VT <hex>" (the answer), "SICBO-JOURNALED <what or - why not>".
import binascii
import gc
import hashlib
import os
import sys


def sv_pads(key):
    """The inner and the outer pad of HMAC-SHA256 for `key` (bytes)."""
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    key = key + bytes(64 - len(key))
    return bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)


def sv_mac(pads, inner):
    """HMAC's outer hash over `inner` (a sha256 begun with the inner pad), hex."""
    outer = hashlib.sha256(pads[1])
    outer.update(inner.digest())
    return binascii.hexlify(outer.digest()).decode()


def sv_walk(top, out):
    """Every *.py and *.mpy under `top`, as absolute paths, into out."""
    for entry in os.ilistdir(top):
        name = entry[0]
        path = (top if top.endswith("/") else top + "/") + name
        if entry[1] == 0x4000:
            sv_walk(path, out)
        elif name.endswith(".py") or name.endswith(".mpy"):
            out.append(path)


def sv_file(pads, path, buf):
    """The keyed hash of one file, as stored."""
    h = hashlib.sha256(pads[0])
    h.update(("file\n%s\n%d\n" % (path[1:], os.stat(path)[6])).encode())
    view = memoryview(buf)
    with open(path, "rb") as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(view[:n])
    return sv_mac(pads, h)


def sv_image_len(part, size, bs):
    """The length of the image at the partition's start: an ESP application
    image's (its header, its segments, the checksum's padding to 16 bytes,
    the SHA-256 appended when its header says so), else the partition's."""
    head = bytearray(24)
    part.readblocks(0, head)
    if head[0] != 0xE9 or not 1 <= head[1] <= 16:
        return size
    pos = 24
    seg = bytearray(8)
    for _i in range(head[1]):
        if pos + 8 > size:
            return size
        part.readblocks(pos // bs, seg, pos % bs)
        pos += 8 + (seg[4] | seg[5] << 8 | seg[6] << 16 | seg[7] << 24)
    pos = (pos // 16 + 1) * 16
    if head[23] == 1:
        pos += 32
    return min(pos, size)


def sv_partition(pads, buf):
    """(keyed hash, image length, partition size, address) of the running
    application partition."""
    import esp32

    bs = 4096  # the block size Partition() is made with
    # The port takes the RUNNING constant (an int) or a label; the stubs say str.
    part = esp32.Partition(esp32.Partition.RUNNING)  # type: ignore[arg-type]
    info = part.info()  # (type, subtype, address, size, label, encrypted)
    size = info[3]
    n = sv_image_len(part, size, bs)
    h = hashlib.sha256(pads[0])
    h.update(("partition\n%d\n" % n).encode())
    pos = 0
    while pos < n:
        k = min(len(buf), n - pos)
        piece = buf if k == len(buf) else bytearray(k)  # the last piece: its own size
        part.readblocks(pos // bs, piece, pos % bs)
        h.update(piece)
        pos += k
    return sv_mac(pads, h), n, size, info[2]


def sv_verify(seed, partition, by):
    """Print the answer to the inspector's seed (hex): every code file's keyed
    hash, the running partition's if `partition`, the answer over them all;
    then journal the check (access.verified: J_VERIFY, who asked `by`)."""
    pads = sv_pads(binascii.unhexlify(seed))
    buf = bytearray(1024)
    paths = []  # type: list[str]
    sv_walk("/", paths)
    paths.sort()
    try:
        import frozen_id  # type: ignore[import-not-found]  # frozen firmware only

        frozen = frozen_id.CODE_SHA256
    except ImportError:
        frozen = None
    impl = sys.implementation
    print("SICBO-VI", repr({"mpy": getattr(impl, "_mpy", None), "frozen": frozen,
                            "version": tuple(impl.version[:3]), "platform": sys.platform}))
    total = hashlib.sha256(pads[0])
    total.update(b"answer\n")
    items = 0
    for p in paths:
        line = "%s %s" % (sv_file(pads, p, buf), p[1:])
        print("SICBO-VF", line)
        total.update((line + "\n").encode())
        items += 1
        gc.collect()
    if partition:
        mac, n, size, addr = sv_partition(pads, buf)
        print("SICBO-VP", mac, n, size, addr)
        total.update(("%s partition %d\n" % (mac, n)).encode())
        items += 1
    answer = sv_mac(pads, total)
    print("SICBO-VT", answer)
    del buf
    gc.collect()
    try:
        import access  # the firmware's, on the board

        access.verified(2 if partition else 1, items, seed, answer, by)
        access.close()
        print("SICBO-JOURNALED verify")
    except Exception as e:  # noqa: BLE001 - the answer stands: said, not a failure
        print("SICBO-JOURNALED - not journaled: %s %s" % (type(e).__name__, e))
