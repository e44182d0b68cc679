# Deploy's board-side code (host_tools/deploy.py). Never installed on the board:
# `sicbo deploy` does not copy device/remote/ and the frozen manifest does not
# freeze it. For each step the host sends, through one `mpremote exec`, the
# imports and only the functions that step needs (host_tools.deploy.agent_code:
# comments and docstrings stripped), then one call. Names start with sd_ so that
# they do not clash with what else lives in __main__ on the board. Kept small:
# it runs on a 110 KiB heap beside nothing else (mpremote soft-resets first).
#
# Output lines, read by the host: "SICBO-PROBE <repr of a dict>", "SICBO-H
# <path> <sha256 hex>", "SICBO-END", "SICBO-VERIFY <repr of a list>",
# "SICBO-SEQ <last sequence number>", "SICBO-PROV <sha256 hex>",
# "SICBO-JOURNALED <what or - why not>".
import binascii
import gc
import hashlib
import json
import os
import struct
import sys


def sd_hash(path):
    """sha256 hex of a file, or None if it cannot be opened."""
    try:
        f = open(path, "rb")
    except OSError:
        return None
    h = hashlib.sha256()
    buf = bytearray(512)
    view = memoryview(buf)
    while True:
        n = f.readinto(buf)
        if not n:
            break
        h.update(view[:n])
    f.close()
    return binascii.hexlify(h.digest()).decode()


def sd_exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def sd_mpy(mpy):
    """'6.3' from sys.implementation._mpy (as the host writes it in the manifest)."""
    if mpy is None:
        return None
    return "%d.%d" % (mpy & 0xFF, (mpy >> 8) & 3)


def sd_frozen():
    """CODE_SHA256 of the frozen firmware (its generated module frozen_id), or
    None on a MicroPython without the firmware frozen in."""
    try:
        import frozen_id  # type: ignore[import-not-found]  # frozen firmware only
    except ImportError:
        return None
    return frozen_id.CODE_SHA256


def sd_id():
    """sicbo flash's check that MicroPython answers: "SICBO-REPL <name>
    <version> <.mpy version> <frozen code hash or ->"."""
    impl = sys.implementation
    print("SICBO-REPL", impl.name, "%d.%d.%d" % impl.version[:3],
          getattr(impl, "_mpy", 0) & 0xFF, sd_frozen() or "-")


def sd_current(meta, files, want, frozen, mpy, paths):
    """True if the committed manifest describes what the host would install now
    and every file it lists is intact: then the deploy has nothing to do.
    want: {"code": code hash of the host's tree, "compiler": mpy-cross version,
    "files": {path: sha256} of main.py, board.json and table.json}."""
    if meta is None or meta.get("mpy") != sd_mpy(mpy):
        return False
    if frozen is None:
        if meta.get("kind") != "deployed" or meta.get("code_sha256") != want["code"] \
                or meta.get("compiler") != want["compiler"]:
            return False
    elif meta.get("kind") != "frozen" or meta.get("code_sha256") != frozen \
            or len(files) != len(want["files"]):
        return False
    for p in want["files"]:
        if files.get(p) != want["files"][p]:
            return False
    for p in files:
        if sd_hash("/" + p) != files[p]:
            return False
    for p in paths:
        if p.endswith(".mpy"):
            # a source beside a compiled module shadows it; on frozen firmware
            # any code file shadows the frozen module ('' precedes '.frozen')
            if sd_exists("/" + p[:-4] + ".py") or (frozen is not None and sd_exists("/" + p)):
                return False
    return True


def sd_probe(paths, want):
    """Prints what the board is and runs (SICBO-PROBE); if the deploy has
    something to do, also the sha256 of every file of `paths` (board paths,
    without the leading /), of every file the previous manifest lists and of
    any .py beside a .mpy of them (SICBO-H). Returns True if up to date."""
    impl = sys.implementation
    mpy = getattr(impl, "_mpy", None)
    frozen = sd_frozen()
    files = {}
    meta = None
    name = None
    for n in ("manifest.json", "manifest.prev"):
        try:
            f = open("/" + n)
        except OSError:
            continue
        try:
            man = json.load(f)
        except Exception:  # a torn or foreign manifest: as if there were none
            man = None
        f.close()
        if isinstance(man, dict) and isinstance(man.get("files"), dict):
            files = man.pop("files")
            meta = man
            name = n
            break
    man = None
    gc.collect()
    ok = name == "manifest.json" and sd_current(meta, files, want, frozen, mpy, paths)
    print("SICBO-PROBE", repr({"name": impl.name, "version": tuple(impl.version[:3]),
                               "mpy": mpy, "platform": sys.platform,
                               "machine": getattr(impl, "_machine", ""),
                               "frozen": frozen, "manifest_name": name, "manifest": meta,
                               "current": ok}))
    if not ok:
        seen = set()
        for p in paths + list(files):
            for q in (p, p[:-4] + ".py") if p.endswith(".mpy") else (p,):
                if q not in seen:
                    seen.add(q)
                    h = sd_hash("/" + q)
                    if h:
                        print("SICBO-H", q, h)
    print("SICBO-END")
    return ok


def sd_start(ok, now):
    """After a probe that found the board up to date: sets the clock to `now`
    (the tuple of machine.RTC().datetime(), as `mpremote rtc --set` gives it),
    drops the agent's names and starts the app as main.py would (the probe's
    Ctrl-C stopped it), with no reset. Does nothing otherwise."""
    if not ok:
        return
    sd_clock(now)
    g = globals()
    for k in list(g):
        if k.startswith("sd_"):
            del g[k]
    gc.collect()
    __import__("main")


def sd_clock(now):
    """Sets the clock to `now` (the tuple of machine.RTC().datetime()) through
    the firmware, which journals the old and the new time (access.set_clock),
    or directly on a board without it (nothing deployed yet, an older
    firmware). The modules loaded for it are forgotten: the app may start
    next in this heap."""
    before = list(sys.modules)
    try:
        import access  # the firmware's, on the board
    except Exception:  # noqa: BLE001 - no firmware (or a broken one): the clock still
        import machine

        machine.RTC().datetime(now)
        print("SICBO-JOURNALED - clock set, not journaled: no firmware")
        return
    if access.set_clock(now):
        print("SICBO-JOURNALED clock")
    access.close()
    for k in list(sys.modules):
        if k not in before:
            del sys.modules[k]
    gc.collect()


def sd_deployed(kind, code, config, copied, removed):
    """Journals the deploy just committed (access.deployed: J_DEPLOY, the files
    copied and removed, the code hash and the configuration id)."""
    try:
        import access  # the firmware's, on the board

        access.deployed(kind, code, config, copied, removed)
        access.close()
        print("SICBO-JOURNALED deploy")
    except Exception as e:  # noqa: BLE001 - the deploy is done: said, not a failure
        print("SICBO-JOURNALED - deploy not journaled: %s %s" % (type(e).__name__, e))


def sd_prep(dirs, remove, aside):
    """Removes the files `remove` (absolute board paths) and the folders they
    leave empty, makes the folders `dirs` (parents first) and, if `aside`,
    renames /manifest.json to /manifest.prev (so that a deploy cut from here
    on is never taken for a complete one)."""
    for p in remove:
        try:
            os.remove(p)
        except OSError:
            pass
    for p in remove:
        d = p.rsplit("/", 1)[0]
        while d:
            try:
                os.rmdir(d)
            except OSError:
                break
            d = d.rsplit("/", 1)[0]
    for d in dirs:
        try:
            os.mkdir(d)
        except OSError:
            pass
    if not aside:
        return
    if sd_exists("/manifest.json"):
        try:
            os.remove("/manifest.prev")
        except OSError:
            pass
        os.rename("/manifest.json", "/manifest.prev")


def sd_w(path, mode, data):
    """Writes (mode "wb") or appends ("ab") one base64 piece of a file."""
    f = open(path, mode)
    f.write(binascii.a2b_base64(data))
    f.close()


def sd_commit(text):
    """Hashes every file the new manifest lists; only if all match, writes
    /manifest.json (last) and removes /manifest.prev. Prints the paths that
    did not match (SICBO-VERIFY), and returns them."""
    files = json.loads(text)["files"]
    bad = [p for p in files if sd_hash("/" + p) != files[p]]
    if not bad:
        f = open("/manifest.json", "w")
        f.write(text)
        f.close()
        try:
            os.remove("/manifest.prev")
        except OSError:
            pass
    print("SICBO-VERIFY", repr(bad))
    return bad


def sd_secrets(folder, files):
    """Writes the floor link's secrets (files: {name: base64}) into folder,
    each through a temporary file renamed over the old one, removes every
    other file there, then reads each back: prints the names that do not
    match what was sent (SICBO-SECRETS), never their content."""
    try:
        os.mkdir(folder)
    except OSError:
        pass
    for name in os.listdir(folder):
        if name not in files:
            os.remove(folder + "/" + name)
    bad = []
    for name in files:
        data = binascii.a2b_base64(files[name])
        path = folder + "/" + name
        f = open(path + ".new", "wb")
        f.write(data)
        f.close()
        try:
            os.remove(path)
        except OSError:
            pass
        os.rename(path + ".new", path)
        f = open(path, "rb")
        if f.read() != data:
            bad.append(name)
        f.close()
    print("SICBO-SECRETS", repr(bad))


def sd_secret_names(folder):
    """Prints the names of the files in folder (SICBO-SECRET-NAMES), never
    their content."""
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    print("SICBO-SECRET-NAMES", repr(sorted(names)))


def sd_last_seq(folder):
    """Prints the journal's last sequence number (SICBO-SEQ; 0: none): that
    of the last record whose CRC checks out in the newest segment that has
    one. A provisioning's first key is for the number after it."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith("j") and n.endswith(".log"))
    except OSError:
        names = []
    for n in reversed(names):
        f = open(folder + "/" + n, "rb")
        data = f.read()
        f.close()
        last = 0
        off = 0
        while off + 28 <= len(data):
            k = data[off + 2] | data[off + 3] << 8
            if data[off] == 0xA5 and 28 <= k <= 1024 and off + k <= len(data) and (
                    binascii.crc32(data[off:off + k - 4]) ==
                    struct.unpack_from("<I", data, off + k - 4)[0]):
                last = struct.unpack_from("<I", data, off + 4)[0]
                off += k
            else:
                off += 1
        data = None
        gc.collect()
        if last:
            print("SICBO-SEQ", last)
            return
    print("SICBO-SEQ", 0)


def sd_provision(folder, data):
    """Writes a provisioning file (base64) beside the journal, through a
    temporary file renamed, for the next boot to take (resumption.stage_chain);
    prints its sha256 (SICBO-PROV)."""
    try:
        os.mkdir(folder)
    except OSError:
        pass
    f = open(folder + "/chain.part", "wb")
    f.write(binascii.a2b_base64(data))
    f.close()
    os.rename(folder + "/chain.part", folder + "/chain.new")
    print("SICBO-PROV", sd_hash(folder + "/chain.new"))
