# The configuration cache's writer (sicbo/cache.py describes the format):
# loaded only by a boot that parsed the files and keeps them, and by the
# host's `sicbo deploy`. Apart from the reader so that the boot that runs the
# table on its cache never interns this code's names and strings.

import json

from sicbo import FIRMWARE_VERSION
from sicbo.cache import _MAGIC, FORMAT


def _plain(v):
    # Tuples -> lists: what JSON holds (bytes are written by _json).
    if isinstance(v, (tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


def _json(v):
    # json.dumps(v)'s text in pieces: a list or a dict an item at a time (a
    # table's odds or lamp order in one string would need a block of ~2 KiB);
    # bytes as {"bytes": [...]}, a byte at a time (their list of ints made
    # first would need a block of 4 bytes a byte).
    if isinstance(v, (bytes, bytearray)):
        yield '{"bytes": ['
        sep = ""
        for x in v:
            yield sep + str(x)
            sep = ", "
        yield "]}"
    elif isinstance(v, list):
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
