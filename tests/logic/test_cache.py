# The configuration cache (sicbo/cache.py): what a boot reads instead of
# parsing board.json and table.json. It must give back exactly what the
# parsers gave, and be refused (None: the files are parsed again) when it is
# for other files, another firmware, or damaged in any byte.
import json
import os

from sicbo import FIRMWARE_VERSION, board, cache, cachetext, config

ID = b"\x01\x02\x03\x04\x05\x06"


def _folder():
    from folderkit import process_tag

    path = "/tmp/sicbo-cache-test-%s" % process_tag()
    try:
        os.mkdir(path)
    except OSError:
        pass
    return path + "/config.cache"


def _parsed():
    # The shipped files (the tests run from the project's folder on both VMs).
    with open("board_config/boards/esp32-devkitc.json") as f:
        b = board.parse_board(json.load(f))
    with open("board_config/tables/macau-2003.json") as f:
        c = config.parse_table(json.load(f))
    return b, c


def _same(a, b):
    # The parsers make tuples, and a few lists (warnings): the cache, tuples.
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(a[i], b[i]) for i in range(len(a)))
    if isinstance(a, dict) and isinstance(b, dict):
        return sorted(a) == sorted(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_what_is_saved_is_what_the_parsers_gave():
    b, c = _parsed()
    path = _folder()
    assert cache.save(path, b, c, ID)
    b2, c2 = cache.load(path, ID)
    for k in b.__dict__:
        if k != "pins":
            assert _same(getattr(b2, k), getattr(b, k)), k
    for k in c.__dict__:
        assert _same(getattr(c2, k), getattr(c, k)), k
    assert isinstance(c2.odds, bytes) and isinstance(b2.inputs, tuple)
    assert c2.is_offered(c.offered[0])


def test_the_host_writes_the_same_text_as_the_board():
    b, c = _parsed()
    path = _folder()
    assert cache.save(path, b, c, ID)
    # Piece by piece: the whole text at once is more than a board's heap
    # holds beside the parsers and the tests.
    with open(path, "rb") as f:
        for p in cachetext.text_pieces(b, c, ID):
            e = p.encode()
            assert f.read(len(e)) == e, p
        assert f.read(1) == b""


def test_the_body_is_json_written_a_value_at_a_time():
    # Pieces, not one string per field (a table's odds would need one block
    # of about 2 KiB): their text is json.dumps's, whole.
    b, c = _parsed()
    for v in ([1, [2, {"a": [3, "x\"y"], "b": None}]], {"bytes": [0, 255]}, [], {}, "s", True):
        assert "".join(cachetext._json(v)) == json.dumps(v), v
    # Only a string of the files (the board's description) is a long piece.
    assert all(len(p) < 80 or p[0] == '"' for p in cachetext._pieces(b, c))


def test_other_files_another_firmware_or_any_damage_is_refused():
    b, c = _parsed()
    path = _folder()
    cache.save(path, b, c, ID)
    assert cache.load(path, b"\x01\x02\x03\x04\x05\x07") is None
    # Each variant written from views of the one text read (a copy of a
    # 3.5 KiB text per variant does not fit beside the parsers and the tests).
    with open(path, "rb") as f:
        data = f.read()
    mv = memoryview(data)
    nl = data.index(b"\n")
    v = FIRMWARE_VERSION.encode()
    iv = data.index(v)
    ih = data.index(b"hc595")
    for parts in ((mv[:iv], v + b"x", mv[iv + len(v):]),  # another firmware
                  (mv[:ih], b"hc596", mv[ih + 5:]),  # a byte of the body changed
                  (mv[:len(data) - 5],),  # cut short
                  (mv[:nl - 1], mv[nl:]),  # the header's digest one digit short
                  ()):  # empty
        with open(path, "wb") as f:
            for p in parts:
                f.write(p)
        assert cache.load(path, ID) is None, parts
    os.remove(path)
    assert cache.load(path, ID) is None


def test_an_intact_cache_without_its_sections_is_refused():
    # A body whose digest is right but whose content is not the cache's
    # (a section missing, or of another type): refused, never half a board.
    import hashlib
    from binascii import hexlify

    path = _folder()
    for body in (b'{"board": {}}', b'{"board": [], "table": {}}', b'{"table": {}}'):
        head = "%s %s %s %s %s\n" % (cache._MAGIC, cache.FORMAT, FIRMWARE_VERSION,
                                     hexlify(ID).decode(),
                                     hexlify(hashlib.sha256(body).digest()).decode())
        with open(path, "wb") as f:
            f.write(head.encode())
            f.write(body)
        assert cache.load(path, ID) is None, body
    os.remove(path)
