"""`sicbo verify --port DEV [--seed HEX] [--firmware FILE]`: the code a board
runs, checked against the approved release on demand, the way regulators
check gaming devices (GSA's GAT: the inspector's seed, the device's keyed
hash).

The board computes HMAC-SHA256 under the inspector's seed (a fresh random
32 bytes unless --seed gives one) over its code as it runs it: every code
file on its filesystem (each .py and .mpy, as stored), and with --firmware
the running application partition (esp32.Partition.RUNNING: the firmware
and, on a production image, the code frozen into it), then one answer over
all of them (device/remote/verify_agent.py, sent by the host, never
installed). The host computes the same from the approved release: device/
compiled as `sicbo deploy` compiles it for that board (constants folded,
mpy-cross for its .mpy version; main.py as source), or, for frozen
firmware, main.py and the image given with --firmware (a complete
firmware.bin, an application-only micropython.bin, or any other image file
as it is: the virtual board's). It says match or mismatch and names every
file that differs, is missing or is not in the release. An answer recorded
for another seed matches nothing: the seed makes it useless.

The check is journaled on the board (J_VERIFY: who asked, the seed's first
bytes, the answer's), and the board is reset afterwards so the table
resumes (mpremote's Ctrl-C stopped it; typed at its REPL, its start-up line
read and said, as `sicbo diag` does), unless --no-restart.

Exit status: 0 the board runs the approved release, 1 it does not, 2 a
refusal (bad seed, no board, a frozen board without --firmware)."""

import getpass
import hashlib
import hmac
import json
import os
import secrets
import socket
import tempfile

from host_tools import DEVICE
from host_tools.cli import UsageError

NAME = "verify"
HELP = "check the code a board runs against the approved release (the inspector's seed)"

AGENT = os.path.join(DEVICE, "remote", "verify_agent.py")
SEED_BYTES = 32  # a fresh seed's length
SEED_MAX = 64  # one SHA-256 block: a longer key would be hashed first
AGENT_NAMES = ("sv_pads", "sv_mac", "sv_walk", "sv_file", "sv_image_len", "sv_partition",
               "sv_verify")
ESP_MAGIC = 0xE9


def add_arguments(p):
    p.add_argument("--port", required=True, metavar="DEV",
                   help="serial port of the board (or the virtual board's tty link)")
    p.add_argument("--seed", metavar="HEX",
                   help="the inspector's seed, 1..%d bytes in hex (default: %d fresh random "
                        "bytes)" % (SEED_MAX, SEED_BYTES))
    p.add_argument("--firmware", metavar="FILE",
                   help="the approved firmware image: also check the running application "
                        "partition against it (needed for frozen firmware)")
    p.add_argument("--device", metavar="DIR", default=DEVICE,
                   help="the approved release's firmware folder (default: device/ of this "
                        "checkout)")
    p.add_argument("--by", metavar="NAME", help="who asks, journaled on the board "
                                                "(default: user@host)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--no-restart", action="store_true",
                   help="leave the board at the REPL afterwards (the app stays stopped)")


def parse_seed(text):
    """The seed's bytes from hex, or UsageError."""
    if text is None:
        return secrets.token_bytes(SEED_BYTES)
    t = text.strip().lower()
    if t.startswith("0x"):
        t = t[2:]
    try:
        seed = bytes.fromhex(t)
    except ValueError:
        raise UsageError("--seed %r is not hex" % text) from None
    if not 1 <= len(seed) <= SEED_MAX:
        raise UsageError("--seed must be 1..%d bytes, got %d" % (SEED_MAX, len(seed)))
    return seed


def _who(by):
    text = by if by is not None else "%s@%s" % (getpass.getuser(), socket.gethostname())
    # Printable ASCII only: the board journals its first bytes as text.
    return "".join(c if " " <= c <= "~" else "?" for c in text)[:64]


def agent_code(seed, partition, by):
    from host_tools.deploy import agent_code as code_of

    return code_of(*AGENT_NAMES, agent=AGENT) + "sv_verify(%r, %r, %r)\n" % (
        seed.hex(), bool(partition), by)


# ---- the board's answer --------------------------------------------------------------


def parse_answer(out):
    """{"info", "files" [(path, hex)], "partition" (hex, n, size, address) or
    None, "answer" hex, "journaled" [(ok, what)]} of the agent's output, or
    UsageError when it is not whole."""
    import ast

    from host_tools.deploy import journaled

    got = {"info": None, "files": [], "partition": None, "answer": None}
    for line in out.splitlines():
        tag, _sp, rest = line.strip().partition(" ")
        try:
            if tag == "SICBO-VI":
                got["info"] = ast.literal_eval(rest)
            elif tag == "SICBO-VF":
                mac, path = rest.split(" ", 1)
                got["files"].append((path, mac))
            elif tag == "SICBO-VP":
                mac, n, size, addr = rest.split()
                got["partition"] = (mac, int(n), int(size), int(addr))
            elif tag == "SICBO-VT":
                got["answer"] = rest.strip()
        except (ValueError, SyntaxError):
            raise UsageError("unexpected answer from the board: %s" % line[:200]) from None
    if not isinstance(got["info"], dict) or got["answer"] is None:
        raise UsageError("the board's answer was cut short: %s" % (out.strip()[-200:]
                                                                  or "nothing"))
    got["journaled"] = journaled(out)
    return got


# ---- the same, from the approved release ---------------------------------------------


def mac_file(seed, rel, data):
    return hmac.new(seed, b"file\n%s\n%d\n" % (rel.encode("utf-8"), len(data)) + data,
                    hashlib.sha256).hexdigest()


def mac_partition(seed, image, n):
    return hmac.new(seed, b"partition\n%d\n" % n + image[:n], hashlib.sha256).hexdigest()


def mac_answer(seed, files, partition):
    """The answer over the items' lines (verify_agent.py's): files (path,
    hex) in order, then the partition (hex, n) if any."""
    text = "answer\n" + "".join("%s %s\n" % (mac, path) for path, mac in files)
    if partition is not None:
        text += "%s partition %d\n" % (partition[0], partition[1])
    return hmac.new(seed, text.encode("utf-8"), hashlib.sha256).hexdigest()


def release_files(device_dir, info):
    """{board path: bytes} of the approved release's code files as that board
    stores them: on frozen firmware the entry only (main.py; the rest is in
    the partition), else device/ compiled as `sicbo deploy` compiles it for
    the board's .mpy version."""
    from host_tools import deploy as dp

    sources = dp.plan_sources(device_dir)
    if not sources:
        raise UsageError("no firmware in %s" % device_dir)
    out = {}
    if info.get("frozen"):
        for rel, local, compiled in sources:
            if not compiled:
                with open(local, "rb") as f:
                    out[rel] = f.read()
        return out
    mpy = info.get("mpy")
    args = dp.compiler_args(mpy, dp.mpy_cross_default_version())
    arch = dp.mpy_version_of(mpy)[2]
    with tempfile.TemporaryDirectory(prefix="sicbo-verify-") as stage:
        staged = dp.compile_tree(sources, stage, args, arch)
        for rel, path in staged.items():
            with open(path, "rb") as f:
                out[rel] = f.read()
    return out


def _complete_offset(data):
    """The flash address a complete ESP firmware image starts at (its chip's
    bootloader offset), or None for an application-only image."""
    from host_tools import flash

    try:
        chip = flash.read_image_header(data)
    except flash.FlashError:
        return None
    return flash.CHIPS[chip][1]


def image_of(path, addr):
    """The approved application image as the board's running partition holds
    it, at flash address `addr`: from a complete firmware image (bootloader,
    partition table, application) the part at addr; an application-only
    image, or any other file (the virtual board's image), as it is."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError("cannot read %s: %s" % (path, e.strerror or e)) from None
    return image_of_bytes(data, addr, path)


def image_of_bytes(data, addr, name="the image"):
    """image_of, of the file's bytes."""
    if data[:1] == bytes((ESP_MAGIC,)):
        start = _complete_offset(data)
        if start is not None:
            if not start <= addr < start + len(data):
                raise UsageError("%s holds no application at 0x%x" % (name, addr))
            return data[addr - start:]
    return data


def image_len(image, size):
    """verify_agent.sv_image_len over bytes: an ESP application image's
    length, else the partition's (size)."""
    if len(image) < 24 or image[0] != ESP_MAGIC or not 1 <= image[1] <= 16:
        return size
    pos = 24
    for _i in range(image[1]):
        if pos + 8 > size:
            return size
        seg = image[pos:pos + 8].ljust(8, b"\xff")
        pos += 8 + int.from_bytes(seg[4:8], "little")
    pos = (pos // 16 + 1) * 16
    if image[23] == 1:
        pos += 32
    return min(pos, size)


def release_partition(seed, path, size, addr):
    """(hex, n) of the approved image as the board's partition of `size`
    bytes holds it (erased, 0xFF, after the image), or None when the image
    is larger than the partition."""
    image = image_of(path, addr)
    if len(image) > size:
        return None
    padded = image + b"\xff" * (size - len(image))
    n = image_len(padded, size)
    return mac_partition(seed, padded, n), n


# ---- the comparison --------------------------------------------------------------------


def compare(seed, got, release, partition=None):
    """What matches: {"match", "files": [{"path", "status"}], "partition",
    "answer": {"board", "expected", "consistent"}, "replayed"}. status:
    match, differs, missing (in the release, not on the board), extra (on
    the board, not in the release: code a release does not have)."""
    board = dict(got["files"])
    want = {rel: mac_file(seed, rel, data) for rel, data in release.items()}
    files = []
    for rel in sorted(set(board) | set(want)):
        if rel not in board:
            status = "missing"
        elif rel not in want:
            status = "extra"
        else:
            status = "match" if hmac.compare_digest(board[rel], want[rel]) else "differs"
        files.append({"path": rel, "status": status})
    part = None
    expected_part = None
    if got["partition"] is not None:
        mac, n, size, addr = got["partition"]
        if partition is not None:
            expected_part = release_partition(seed, partition, size, addr)
        if expected_part is None:
            status = "not compared" if partition is None else "image larger than the partition"
        elif (mac, n) == expected_part:
            status = "match"
        else:
            status = "differs"
        part = {"status": status, "bytes": n, "size": size, "address": addr,
                "expected_bytes": expected_part[1] if expected_part else None}
    expected = mac_answer(seed, sorted(want.items()), expected_part)
    answer = got["answer"]
    consistent = hmac.compare_digest(answer, mac_answer(seed, got["files"], got["partition"]))
    ok = (all(f["status"] == "match" for f in files) and consistent
          and (part is None or part["status"] == "match") and answer == expected)
    common = [f for f in files if f["status"] in ("match", "differs")]
    return {"match": ok, "files": files, "partition": part,
            "answer": {"board": answer, "expected": expected, "consistent": consistent},
            # Nothing that both have matches: an answer computed for another
            # seed (a recorded one) looks exactly so.
            "replayed": bool(common) and all(f["status"] == "differs" for f in common)}


# ---- the command -------------------------------------------------------------------------


def run(args, mpremote=None):
    from host_tools.deploy import MpRemote
    from host_tools.portlock import PortLock

    seed = parse_seed(args.seed)
    if not os.path.isdir(args.device):
        raise UsageError("no firmware folder %s" % args.device)
    if args.firmware and not os.path.isfile(args.firmware):
        raise UsageError("no such firmware image: %s" % args.firmware)
    by = _who(args.by)
    mp = mpremote or MpRemote(args.port)
    mp.check_port()
    with PortLock(args.port, "sicbo verify") as lock:
        got = parse_answer(mp.run("exec", agent_code(seed, args.firmware, by)))
        after = [] if args.no_restart else _reset(args.port, lock)
    return _report(args, seed, by, got, after)


def _reset(port, lock):
    """The board reset so that the table resumes (typed at its REPL, as diag
    does), and what it said as it started."""
    from host_tools import boardstate

    try:
        states = boardstate.reset_and_read(port, "sicbo verify", None, lock=lock)
    except OSError as e:
        raise UsageError("lost the board at %s at its reset (%s)" % (port, e)) from None
    return ["board reset: " + line for line in boardstate.summary(states)]


def _report(args, seed, by, got, after):
    info = got["info"]
    if info.get("frozen") and not args.firmware:
        raise UsageError("the board runs frozen firmware (code %s): its code is the running "
                         "partition: give the approved image with --firmware FILE"
                         % info["frozen"])
    result = compare(seed, got, release_files(args.device, info), args.firmware)
    result["seed"] = seed.hex()
    result["by"] = by
    result["board"] = info
    result["journaled"] = [what for ok, what in got["journaled"] if ok]
    result["after"] = after
    if args.json:
        print(json.dumps(result))
    else:
        _print(result, info, seed, by)
        for line in after:
            print(line)
    return 0 if result["match"] else 1


def _print(result, info, seed, by):
    print("code check with seed %s (%d bytes), asked by %s" % (seed.hex(), len(seed), by))
    print("board: MicroPython %s, %s" % (
        ".".join(str(v) for v in info.get("version") or ()),
        "frozen firmware %s" % info["frozen"] if info.get("frozen") else "deployed files"))
    files = result["files"]
    words = {"differs": "DIFFERS", "missing": "MISSING", "extra": "EXTRA"}
    for f in files:
        if f["status"] != "match":
            why = {"missing": " (in the release, not on the board)",
                   "extra": " (on the board, not in the release)"}.get(f["status"], "")
            print("  %-8s %s%s" % (words[f["status"]], f["path"], why))
    same = sum(1 for f in files if f["status"] == "match")
    print("files: %d of %d match" % (same, len(files)))
    part = result["partition"]
    if part is not None:
        print("partition: %s (%d bytes of its image, partition of %d bytes at 0x%x)" % (
            part["status"], part["bytes"], part["size"], part["address"]))
    if not result["answer"]["consistent"]:
        print("the board's answer does not agree with its own items: forged or cut short")
    if result["replayed"]:
        print("nothing matches under this seed: an answer computed for another seed (a "
              "recorded one), or none of this release")
    if result["match"]:
        print("MATCH: the board runs the approved release (answer %s)"
              % result["answer"]["board"])
    else:
        bad = [f["path"] for f in files if f["status"] != "match"]
        if part is not None and part["status"] != "match":
            bad.append("the running partition")
        print("MISMATCH: %s" % (", ".join(bad[:8]) + (" ..." if len(bad) > 8 else "")
                                if bad else "the answer"))
    if result["journaled"]:
        print("journaled on the board: %s" % ", ".join(result["journaled"]))
    else:
        print("not journaled on the board (no firmware of this revision)")
