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
# "SICBO-JOURNALED <what or - why not>", "SICBO-UNJOURNALED <repr of the
# journal's last deploy: (kind, code hex, configuration id hex) or None>",
# "SICBO-PARTS <repr of a list>".
#
# A deploy's states on the board (the boot refuses the second: device/faults.py):
# - committed: /manifest.json, no /manifest.prev (a cut just after the commit
#   may leave /manifest.prev beside it: still committed; the next deploy
#   removes it);
# - interrupted: /manifest.prev and no /manifest.json, from before the first
#   file is changed (sd_prep: the manifest renamed aside, or an empty one
#   written when there was none) until the commit (sd_commit: /manifest.json
#   renamed into place from a whole /manifest.part, then /manifest.prev
#   removed). No file is ever written in place: each goes to <path>.part and
#   is renamed over <path> once whole and its sha256 verified (sd_w, sd_fin),
#   so that no file on the board is ever cut short; a cut deploy's .part
#   files are removed by the next deploy (sd_parts). A board left in this
#   state holds a mix of two releases, or a part of one.
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
    if ok:
        # committed: a /manifest.prev left by a cut just after the commit goes
        try:
            os.remove("/manifest.prev")
        except OSError:
            pass
        rec = want.get("record")
        if rec:
            files = None  # type: ignore[assignment]  # let go before the record is written
            gc.collect()
            sd_logged(rec[0], rec[2] if frozen else rec[1], frozen or want["code"], rec[3])
    else:
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
    copied and removed, the code hash and the configuration id). The modules
    loaded for it are forgotten: the app may start next in this heap."""
    before = list(sys.modules)
    try:
        import access  # the firmware's, on the board

        access.deployed(kind, code, config, copied, removed)
        access.close()
        print("SICBO-JOURNALED deploy")
    except Exception as e:  # noqa: BLE001 - the deploy is done: said, not a failure
        print("SICBO-JOURNALED - deploy not journaled: %s %s" % (type(e).__name__, e))
    for k in list(sys.modules):
        if k not in before:
            del sys.modules[k]
    gc.collect()


def sd_last_record(folder, pick):
    """The last of pick(data, off, length) that is not None over the CRC-valid
    records of the newest journal segment that has one (None if none): the
    journal read as the board reads it, one segment in memory at a time."""
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith("j") and n.endswith(".log"))
    except OSError:
        names = []
    for n in reversed(names):
        f = open(folder + "/" + n, "rb")
        data = f.read()
        f.close()
        last = None
        off = 0
        while off + 28 <= len(data):
            k = data[off + 2] | data[off + 3] << 8
            if data[off] == 0xA5 and 28 <= k <= 1024 and off + k <= len(data) and (
                    binascii.crc32(data[off:off + k - 4]) ==
                    struct.unpack_from("<I", data, off + k - 4)[0]):
                v = pick(data, off, k)
                if v is not None:
                    last = v
                off += k
            else:
                off += 1
        data = None
        gc.collect()
        if last is not None:
            return last
    return None


def sd_last_deploy(folder):
    """(kind, code hex, configuration id hex) of the journal's last deploy
    record (J_DEPLOY, type 28: p0 the kind, p4..p11 the code hash's first 8
    bytes, p12..p17 the configuration id; the payload at byte 24), or None if
    the journal has none."""
    return sd_last_record(folder, lambda d, o, k: (
        d[o + 24], binascii.hexlify(d[o + 28:o + 36]).decode(),
        binascii.hexlify(d[o + 36:o + 42]).decode()) if d[o + 1] == 28 and k >= 48 else None)


def sd_logged(folder, kind, code, config):
    """A board up to date: if the journal's last deploy record does not name
    what it runs (kind, code hash, configuration id: a deploy cut between its
    commit and its record, files put there by hand), journals the deploy now
    (sd_deployed, no file copied or removed) and says so (SICBO-UNJOURNALED,
    then SICBO-JOURNALED)."""
    last = sd_last_deploy(folder)
    if last == (kind, code[:16], config[:12]):
        return
    print("SICBO-UNJOURNALED", repr(last))
    sd_deployed(kind, code, config, [], [])


def sd_prep(dirs, remove, aside):
    """If `aside` (a deploy): marks the board as holding an interrupted deploy
    first (sd_mark), so that nothing is changed before the mark. Then removes
    the files `remove` (absolute board paths) and the folders they leave
    empty, makes the folders `dirs` (parents first) and, if `aside`, removes
    the .part files a cut deploy left (sd_parts)."""
    if aside:
        sd_mark()
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
    if aside:
        found = []  # type: list[str]
        sd_parts("", found)
        print("SICBO-PARTS", repr(found))


def sd_mark():
    """/manifest.prev present and /manifest.json absent: an interrupted deploy
    (the boot refuses to start on it). /manifest.json is renamed to
    /manifest.prev (a /manifest.prev beside it, left by a cut just after a
    commit, is stale and goes first); with neither (a first deploy, a
    manifest lost), an empty one ("{}": no release known) is written. A
    /manifest.prev without /manifest.json (a deploy cut before) stays: it
    names the files of the release before it."""
    if sd_exists("/manifest.json"):
        try:
            os.remove("/manifest.prev")
        except OSError:
            pass
        os.rename("/manifest.json", "/manifest.prev")
    elif not sd_exists("/manifest.prev"):
        f = open("/manifest.prev", "w")
        f.write("{}")
        f.close()


def sd_parts(folder, found):
    """Removes every file whose name ends in .part under folder ("" for the
    root), but in /journal (the provisioning's own) and /secrets; appends
    their paths to found."""
    for e in os.ilistdir(folder or "/"):
        p = folder + "/" + e[0]
        if e[1] == 0x4000:
            if p not in ("/journal", "/secrets"):
                sd_parts(p, found)
        elif e[0].endswith(".part"):
            os.remove(p)
            found.append(p)


def sd_w(path, mode, data):
    """Writes (mode "wb") or appends ("ab") one base64 piece of a file to
    <path>.part, never to path itself (sd_fin puts it in place)."""
    f = open(path + ".part", mode)
    f.write(binascii.a2b_base64(data))
    f.close()


def sd_fin(path, sha):
    """<path>.part, whole: renamed over path if its sha256 is `sha`, else
    removed (path stays as it was; sd_commit then names it)."""
    part = path + ".part"
    if sd_hash(part) != sha:
        os.remove(part)
        return
    try:
        os.rename(part, path)
    except OSError:  # a filesystem whose rename does not replace (FAT)
        os.remove(path)
        os.rename(part, path)


def sd_commit(text):
    """Hashes every file the new manifest lists; only if all match, commits:
    writes /manifest.part, renames it to /manifest.json (the commit: the
    manifest is whole or absent), then removes /manifest.prev. Prints the
    paths that did not match (SICBO-VERIFY), and returns them."""
    files = json.loads(text)["files"]
    bad = [p for p in files if sd_hash("/" + p) != files[p]]
    if not bad:
        f = open("/manifest.part", "w")
        f.write(text)
        f.close()
        os.rename("/manifest.part", "/manifest.json")
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
    print("SICBO-SEQ", sd_last_record(
        folder, lambda d, o, k: struct.unpack_from("<I", d, o + 4)[0]) or 0)


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
