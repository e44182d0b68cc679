# The board's files and how they are read: the board file and the table file
# that `sicbo deploy` writes, their identity (the configuration id that
# J_CONFIG journals), and their checked copy, the configuration cache
# (sicbo/cache.py), which lets a boot skip the file parsers. Start-up and
# diag read them here; neither keeps this module once it has what it needs.

import json
import os

from faults import BOARD_FILE, JOURNAL_DIR, TABLE_FILE  # noqa: F401 - the board's, re-exported
from micropython import const

CACHE_NAME = "config.cache"  # beside the board file
_FILE_MAX = const(16384)  # sicbo.config.FILE_MAX (folded here: no name at every boot)

# The file parsers and what only they use: done with once the files are read
# and the settlement table built (memory.forget).
PARSERS = ("sicbo.board", "sicbo.config", "sicbo.areas", "sicbo.cache", "sicbo.cachetext",
           "sicbo.errors")


def read_json(path):
    # The size first: a file past FILE_MAX is refused, not parsed into a
    # MemoryError (the host's check refuses it the same way).
    n = os.stat(path)[6]
    if n > _FILE_MAX:
        raise ValueError("%s is %d bytes: a board or table file is at most %d"
                         % (path, n, _FILE_MAX))
    with open(path) as f:
        return json.load(f)


def parse(board_path=BOARD_FILE, table_path=TABLE_FILE):
    """(Board, TableConfig) of the files, checked against each other, or
    ConfigError (its field named); nothing is built from a refused file. The
    parsers are loaded for this: forget them after (PARSERS)."""
    from sicbo import board as boardfile
    from sicbo import config

    board = boardfile.parse_board(read_json(board_path))
    cfg = config.parse_table(read_json(table_path))
    boardfile.check_table(board, cfg)
    return board, cfg


def config_id(board_path=BOARD_FILE, table_path=TABLE_FILE):
    """The configuration's identity (sicbo.cache.config_id) of the two files,
    read in small pieces: a whole table file would need one large free
    block, which a fragmented heap at start-up may not have."""
    from sicbo.cache import config_id as of_pieces

    return of_pieces(_pieces((board_path, table_path)))


def _pieces(paths):
    buf = bytearray(256)
    mv = memoryview(buf)
    for p in paths:
        with open(p, "rb") as f:
            while True:
                n = f.readinto(buf)
                if not n:
                    break
                yield mv[:n]


def cache_path(board_path=BOARD_FILE):
    return board_path[:board_path.rfind("/") + 1] + CACHE_NAME


def cached(board_path, config):
    """(Board, TableConfig) from the cache of the files whose id is `config`,
    or None when there is no usable cache."""
    from sicbo import cache

    return cache.load(cache_path(board_path), config)


def keep(board_path, board, cfg, config):
    """Write the cache of parsed files; False if the filesystem refuses."""
    from sicbo import cache

    return cache.save(cache_path(board_path), board, cfg, config)
