"""The board's console lines for people.

The running controller prints compact lines (device/controller.py, Controller.drain),
so that no text of the journal or of the dealer's messages takes the board's
heap:

    J <record as hex>      one journal record, as written to the journal
    D <message> <detail>   a message shown to the dealer (sicbo.events M_*/R_*)

Everything else (start-up lines, faults, diag output) is text already, but
the running table's start-up line, whose state is a number (host_tools/
boardstate.py reads it). This module renders the compact ones with the
firmware's own texts (sicbo.logtext): one source of truth for the board and
the host.
"""

import binascii

from host_tools.boardstate import Console, running_line_text
from sicbo import journal, logtext


def render(line, table=None):
    """The line for people; a line that is not compact, or is damaged, as is."""
    if line.startswith("J "):
        try:
            data = binascii.unhexlify(line[2:].strip())
        except (binascii.Error, ValueError):
            return line
        if not journal.valid_at(data, 0, len(data)):
            return line + "  (not a valid record)"
        return logtext.journal_line(journal.Record(data, 0), table)
    running = running_line_text(line)
    if running is not None:
        return running
    if line.startswith("D "):
        parts = line.split()
        if len(parts) == 3 and all(x.isascii() and x.isdigit() for x in parts[1:]):
            return "dealer: " + logtext.message_text(int(parts[1]), int(parts[2]))
    return line


def lines(port, stop=None, who="sicbo console", open_timeout=0.0):
    """The lines a board prints on `port`, as text, as they come, until
    stop() is true (checked about every 0.2 s). The port is held meanwhile
    (host_tools/portlock.py): PortBusy if another program holds it; OSError
    or serial.SerialException when it cannot be opened or goes away."""
    # Opened once: a second open of the same port (exclusive) would be refused
    # by the first one's own lock.
    con = Console(port, who).open(open_timeout)
    try:
        while stop is None or not stop():
            line = con.readline(0.2)
            if line is not None:
                yield line
    finally:
        con.close()
