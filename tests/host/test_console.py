"""The board's compact console lines (device/controller.py) rendered on the host
(host_tools/console.py, `sicbo console`): the same text the firmware's
sicbo.logtext gives, and anything else left as it is."""

import binascii

from host_tools.console import render
from host_tools.rules import load_table
from sicbo import events as E
from sicbo import journal, logtext
from sicbo import records as R


def _line(rec):
    return "J " + binascii.hexlify(rec).decode()


def test_a_journal_record_renders_as_logtext_says():
    _cfg, table = load_table(None)
    rec = journal.encode(R.J_RESULT, 37, 5, 2, 1000, 86400, bytes((1, 1, 3, 0, 0, 0, 0, 0)))
    text = render(_line(rec), table)
    assert text == logtext.journal_line(journal.Record(rec, 0), table)
    assert "result" in text and "1-1-3" in text and "2000-01-02" in text


def test_a_dealer_message_renders_with_its_detail():
    assert render("D %d 2" % E.M_DICE_SO_FAR) == "dealer: " + logtext.message_text(
        E.M_DICE_SO_FAR, 2)
    assert "2 of 3" in render("D %d 2" % E.M_DICE_SO_FAR)


def test_damaged_and_other_lines_are_shown_as_they_are():
    rec = bytearray(journal.encode(R.J_BELL, 3, 1, 1, 5, None))
    rec[9] ^= 1  # the CRC no longer matches
    assert render(_line(rec)).endswith("(not a valid record)")
    assert render("J zz") == "J zz"
    assert render("D 4") == "D 4"
    assert render("sicbo: FAULT in stage 2: MemoryError") == "sicbo: FAULT in stage 2: MemoryError"


def test_the_running_line_names_its_state():
    assert render("sicbo: Macau 2004, round 12, state %d" % E.ST_IDLE) == (
        "sicbo: Macau 2004, round 12, state idle")


def test_lines_reads_a_port_it_opens_once():
    # `sicbo console` on a pty: the port opened (exclusively) once, its lines
    # given as they come, and the port and its lock freed when the reader stops.
    import os
    import pty
    import threading
    import time

    from host_tools.console import lines
    from host_tools.portlock import holder

    main, sub = pty.openpty()
    done = threading.Event()

    def board():  # a line now and then: what came before the port was opened is dropped
        k = 0
        while not done.is_set():
            os.write(main, b"line %d\r\n" % k)
            k += 1
            done.wait(0.05)

    port = os.ttyname(sub)
    writer = threading.Thread(target=board, daemon=True)
    writer.start()
    got, held = [], []
    deadline = time.monotonic() + 30
    try:
        for line in lines(port, stop=lambda: len(got) >= 3 or time.monotonic() > deadline,
                          open_timeout=2.0):
            held.append(holder(port))
            got.append(line)
        freed = holder(port)  # asked while the pty still exists (its lock is named after it)
    finally:
        done.set()
        writer.join(5)
        os.close(main)
        os.close(sub)
    assert len(got) == 3, got
    first = int(got[0].split()[1])
    assert got == ["line %d" % (first + k) for k in range(3)], got  # whole, in order
    assert held == [(os.getpid(), "sicbo console")] * 3  # held while reading
    assert freed is None  # and freed
