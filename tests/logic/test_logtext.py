# Records and dealer messages as text for people (sicbo/logtext.py): the
# names they carry, and what is shown for a code no table names.
from sicbo import events as E
from sicbo import journal, logtext, texts
from sicbo import records as R


def _rec(rtype, payload):
    data = journal.encode(rtype, 7, 3, 1, 0, 0, bytes(payload))
    recs = list(journal.records(data))
    assert len(recs) == 1
    return recs[0]


def test_a_resumed_message_names_the_state_and_a_sensor_fault_the_sensor():
    base = texts.text(E.M_RESUMED)
    assert logtext.message_text(E.M_RESUMED, E.ST_PAYING) == base + ": paying"
    fault = texts.text(E.R_SENSOR_FAULT)
    assert logtext.message_text(E.R_SENSOR_FAULT, 1) == fault + ": cover"
    # Outside the tables: the message alone, never a wrong name.
    assert logtext.message_text(E.R_SENSOR_FAULT, -1) == fault
    assert logtext.message_text(E.R_SENSOR_FAULT, len(texts.SENSOR_NAMES)) == fault
    assert logtext.message_text(E.M_RESUMED, len(texts.STATE_NAMES)) == base


def test_a_link_down_record_names_its_fault_and_its_detail():
    code = 4  # TLS refused
    line = logtext.journal_line(_rec(R.J_LINK, [R.LINK_DOWN, code, 0x34, 0x12, 0, 0, 0, 0]))
    assert " link        down: %s (%d) @" % (texts.LINK_FAULTS[code], 0x1234) in line, line
    line = logtext.journal_line(_rec(R.J_LINK, [R.LINK_DOWN, 1, 0, 0, 0, 0, 0, 0]))
    assert " down: %s @" % texts.LINK_FAULTS[1] in line, line
    line = logtext.journal_line(_rec(R.J_LINK, [R.LINK_UP, 0, 0, 0, 0x10, 0x27, 0, 0]))
    assert " up, the floor had 10000 @" in line, line
