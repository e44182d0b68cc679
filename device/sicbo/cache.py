# The checked configuration, kept on flash beside the files it came from, so
# that a boot does not load the file parsers (sicbo.board, sicbo.config and
# sicbo.areas: their code, their garbage and their interned names would stay
# in the heap's history, the largest part of a boot's peak).
#
#   sicbo-config <format> <firmware> <config id> <sha256 of the rest>\n
#   {"board": {...Board's fields}, "table": {...TableConfig's fields}}
#
# The config id is the first 6 bytes of the sha256 of board.json and
# table.json (config_id(), over the files' bytes): a cache of other files, of another
# firmware version, or whose body does not hash to its header is not used,
# and the files are parsed again. `sicbo deploy` writes it with the same
# dump() (the host imports this package); a board that finds no usable cache
# parses the files and writes one. Boot-only: dropped once the table runs.

import json

from sicbo import FIRMWARE_VERSION
from sicbo.settings import Board, TableConfig

FORMAT = "2"  # 2: the floor link (board) and its backlog (table)
_MAGIC = "sicbo-config"
CONFIG_ID_LEN = 6  # sicbo.records.CONFIG_ID_LEN: the J_CONFIG payload


def config_id(pieces):
    """The configuration's identity: the first 6 bytes of the sha256 of the
    board file's bytes then the table file's, given in pieces (bytes or
    memoryviews, in order; the board reads its files 256 bytes at a time,
    the host gives each whole). J_CONFIG journals it."""
    import hashlib

    h = hashlib.sha256()
    for p in pieces:
        h.update(p)
    return h.digest()[:CONFIG_ID_LEN]


def _plain(v):
    # bytes -> {"bytes": [...]}, tuples -> lists: what JSON holds.
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": list(v)}
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _back(v):
    # The inverse: lists become tuples again (the parsers make tuples).
    if isinstance(v, list):
        return tuple(_back(x) for x in v)
    if isinstance(v, dict):
        if len(v) == 1 and "bytes" in v:
            return bytes(v["bytes"])
        return {k: _back(x) for k, x in v.items()}
    return v


def _json(v):
    # json.dumps(v)'s text in pieces: a list or a dict an item at a time (a
    # table's odds or lamp order in one string would need a block of ~2 KiB).
    if isinstance(v, list):
        yield "["
        sep = ""
        for x in v:
            yield sep
            yield from _json(x)
            sep = ", "
        yield "]"
    elif isinstance(v, dict):
        yield "{"
        sep = ""
        for k, x in v.items():
            yield sep + json.dumps(k) + ": "
            yield from _json(x)
            sep = ", "
        yield "}"
    else:
        yield json.dumps(v)


def _pieces(board, cfg):
    # The body in small pieces, a value at a time: never the whole text in
    # the heap (json.dumps of it all would need one block of ~5 KiB).
    for i, (name, obj) in enumerate((("board", board), ("table", cfg))):
        yield '{"%s": {' % name if i == 0 else '}, "%s": {' % name
        sep = ""
        for k, v in obj.__dict__.items():
            if k == "pins":
                continue  # pin -> field: the parser's duplicate check only
            yield sep + json.dumps(k) + ": "
            yield from _json(_plain(v))
            sep = ", "
    yield "}}"


def _header(config_id, digest):
    from binascii import hexlify

    return "%s %s %s %s %s\n" % (_MAGIC, FORMAT, FIRMWARE_VERSION,
                                 hexlify(config_id).decode(), digest)


def _digest(board, cfg):
    import hashlib
    from binascii import hexlify

    h = hashlib.sha256()
    for p in _pieces(board, cfg):
        h.update(p.encode())
    return hexlify(h.digest()).decode()


def text_pieces(board, cfg, config_id):
    """The cache's text, in pieces, for a parsed Board and TableConfig of the
    files whose appboot.file_digest is config_id (6 bytes)."""
    yield _header(config_id, _digest(board, cfg))
    yield from _pieces(board, cfg)


def dump(board, cfg, config_id):
    """The cache's text whole (the host's: `sicbo deploy` writes it)."""
    return "".join(text_pieces(board, cfg, config_id))


def load(path, config_id):
    """(Board, TableConfig) from the cache at path, or None when there is
    none or it is not for these files, this firmware, or intact. Read in
    small pieces: the body is hashed through a 256-byte buffer, then parsed
    from the file."""
    import hashlib
    from binascii import hexlify

    try:
        with open(path, "rb") as f:
            line = f.readline()
            head = line.decode().split()
            if (len(head) != 5 or head[0] != _MAGIC or head[1] != FORMAT
                    or head[2] != FIRMWARE_VERSION
                    or head[3] != hexlify(config_id).decode()):
                return None
            h = hashlib.sha256()
            buf = bytearray(256)
            mv = memoryview(buf)
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                h.update(mv[:n])
            if hexlify(h.digest()).decode() != head[4]:
                return None
            f.seek(len(line))
            d = json.load(f)
    except (OSError, ValueError, UnicodeError):
        return None
    try:
        board = Board()
        for k, v in d["board"].items():
            setattr(board, k, _back(v))
        cfg = TableConfig()
        for k, v in d["table"].items():
            setattr(cfg, k, _back(v))
    except (KeyError, TypeError, AttributeError):
        return None
    return board, cfg


def save(path, board, cfg, config_id):
    """Write the cache (piece by piece, then renamed into place); False, and
    nothing changed, if the filesystem refuses."""
    import os

    try:
        with open(path + ".new", "w") as f:
            for p in text_pieces(board, cfg, config_id):
                f.write(p)
        os.rename(path + ".new", path)
    except OSError:
        return False
    return True
