"""The board's console lines for people.

The running controller prints compact lines (device/controller.py, Controller.drain),
so that no text of the journal or of the dealer's messages takes the board's
heap:

    J <record as hex>      one journal record, as written to the journal
    D <message> <detail>   a message shown to the dealer (sicbo.events M_*/R_*)

Everything else (start-up lines, faults, diag output) is text already. This
module renders the compact ones with the firmware's own texts (sicbo.logtext):
one source of truth for the board and the host.
"""

import binascii
import re

from sicbo import journal, logtext, texts

# The line the controller prints once it runs; the state as its number.
_RUNNING = re.compile(r"^(sicbo: .*, round \d+), state (\d+)\s*$")


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
    m = _RUNNING.match(line)
    if m and m.group(2).isdigit() and int(m.group(2)) < len(texts.STATE_NAMES):
        return "%s, state %s" % (m.group(1), texts.STATE_NAMES[int(m.group(2))])
    if line.startswith("D "):
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
            return "dealer: " + logtext.message_text(int(parts[1]), int(parts[2]))
    return line


def lines(port, stop=None):
    """The lines a board prints on `port` (a pyserial device), as text, as
    they come, until stop() is true (checked about every 0.2 s). Raises
    OSError or serial.SerialException when the port goes away."""
    import serial  # pyserial, installed with mpremote

    buf = b""
    with serial.Serial(port, 115200, timeout=0.2) as s:
        while stop is None or not stop():
            data = s.read(512)
            if not data:
                continue
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                yield line.decode("utf-8", "replace").rstrip("\r")
