"""Loading a table for the host commands: the firmware's own rules engine,
with its refusals turned into one-line usage errors."""

import os

from host_tools import REPO, jsonfile
from host_tools.cli import UsageError
from sicbo import config, settle
from sicbo.errors import ConfigError

DEFAULT_TABLE = os.path.join(REPO, "board_config", "tables", "macau-2004.json")


def load_table(path):
    """(TableConfig, SettlementTable) for a table file, or UsageError."""
    path = path or DEFAULT_TABLE
    # Bounded, UTF-8, JSON with no key twice (host_tools/jsonfile.py); then
    # the same text to the firmware's own parser and rules.
    text, _ = jsonfile.load(path, jsonfile.TABLE_MAX, "table file")
    try:
        cfg = config.load_table(text)
    except ConfigError as e:
        raise UsageError("table file %s refused: %s" % (path, e)) from None
    return cfg, settle.SettlementTable(cfg)


def add_table_argument(parser):
    parser.add_argument("--table", metavar="FILE",
                        help="table configuration (default: board_config/tables/macau-2004.json)")
