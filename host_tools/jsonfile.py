"""Reading the JSON files the host takes from its user: table and board files,
wager files, the key store. One place for what every such file must be before
its content is looked at, each refusal one line (a UsageError):

- at most `cap` bytes: cap + 1 bytes are read, never more, so a special file
  (/dev/zero) or a huge one ends in the refusal, not in a host out of memory;
- UTF-8 text (the byte that is not, and where, named); newlines read as a
  text-mode open reads them (CR LF and CR as LF), as the host always has;
- JSON, nested at most DEPTH_MAX deep (a file nested deeper than Python's
  parser recurses is refused the same way, never a RecursionError);
- no object that names a key twice: Python's parser (and the board's) keeps
  the last value silently, and someone reviewing the file reads the first.
  The key is named by its path in the file (odds.TOTAL_5, [0].stake).

The board reads a file the host checked (deploy checks both files before the
board is touched), so the board's own parser stays as it is.
"""

from host_tools.cli import UsageError
from sicbo.config import FILE_MAX

# Table and board files: the board reads each whole into its heap and refuses
# one past FILE_MAX itself (tablefiles.read_json); the largest shipped is 4.8 KB.
TABLE_MAX = FILE_MAX
BOARD_MAX = FILE_MAX
WAGERS_MAX = 1 << 20  # bytes: some 30,000 wagers
# bytes: a chain is at most ~220 bytes in the store: some 75,000 provisionings
# (200 tables provisioned 375 times each)
KEYSTORE_MAX = 16 << 20
DEPTH_MAX = 32  # arrays and objects in one another: the files here nest 4 deep


def _size(n):
    if n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    return "%d bytes" % n


class _Twice(dict):
    """An object of the file that names the key `twice` more than once."""

    twice = None


def _pairs(pairs):
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen = set()
    for k, _ in pairs:
        if k in seen:
            break
        seen.add(k)
    out = _Twice(obj)
    out.twice = k
    return out


def _path(parts):
    from sicbo.errors import key_name

    out = ""
    for p in parts:
        if isinstance(p, int):
            out += "[%d]" % p
        else:
            out += ("." if out else "") + key_name(p)
    return out


def _check_tree(value):
    """The reason the parsed value is refused (too deep, a key twice), or None.
    Walked without recursion, in the file's order."""
    stack = [(value, 1, ())]
    while stack:
        v, depth, parts = stack.pop()
        if depth > DEPTH_MAX:
            return _TOO_DEEP
        if isinstance(v, _Twice):
            return "%s: the key is given twice (a reader sees the first value, the parser " \
                   "keeps the last)" % _path(parts + (v.twice,))
        items = v.items() if isinstance(v, dict) else enumerate(v)
        for k, child in reversed(list(items)):
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1, parts + (k,)))
    return None


_TOO_DEEP = "JSON arrays and objects nested more than %d deep" % DEPTH_MAX


def parse(data, cap, what):
    """(text, value) of the bytes of a JSON file (`what`: "table file"), or
    ValueError whose message is the one-line reason they are refused (the
    module's doc)."""
    import json

    if len(data) > cap:
        raise ValueError("larger than %s, the most a %s may be" % (_size(cap), what))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError("not UTF-8 text (byte 0x%02x at %d)" % (data[e.start], e.start)) \
            from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        value = json.loads(text, object_pairs_hook=_pairs)
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    except ValueError as e:
        raise ValueError("not valid JSON (%s)" % (e,)) from None
    why = _check_tree(value) if isinstance(value, (dict, list)) else None
    if why:
        raise ValueError(why)
    return text, value


def load(path, cap, what, error=UsageError):
    """(text, value) of the JSON file at path, read as the module's doc says;
    `what` names it in the one-line refusal ("table file"), raised as
    `error` (a UsageError): "cannot read table file PATH: why" or "table file
    PATH refused: why"."""
    try:
        with open(path, "rb") as f:
            data = f.read(cap + 1)
    except OSError as e:
        raise error("cannot read %s %s: %s" % (what, path, e.strerror or e)) from None
    try:
        return parse(data, cap, what)
    except ValueError as e:
        raise error("%s %s refused: %s" % (what, path, e)) from None
