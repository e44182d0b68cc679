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

FORMAT = "3"  # 2: the floor link (board) and its backlog (table); 3: lamps as codes
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


def _back(v):
    # The inverse: lists become tuples again (the parsers make tuples).
    if isinstance(v, list):
        return tuple(_back(x) for x in v)
    if isinstance(v, dict):
        if len(v) == 1 and "bytes" in v:
            return bytes(v["bytes"])
        return {k: _back(x) for k, x in v.items()}
    return v


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
    """Write the cache (sicbo.cachetext.save); False, and nothing changed, if
    the filesystem refuses."""
    from sicbo.cachetext import save as write

    return write(path, board, cfg, config_id)


def dump(board, cfg, config_id):
    """The cache's text whole (the host's: `sicbo deploy` writes it)."""
    from sicbo.cachetext import dump as text

    return text(board, cfg, config_id)
