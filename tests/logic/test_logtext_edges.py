# The journal lines compliance staff read (sicbo.logtext.journal_line): a
# fault's detail, a deploy's code, configuration and files, a code check's
# seed, answer and inspector, each exactly as shown.
from sicbo import journal, logtext
from sicbo import records as R

CODE = bytes(range(0xA0, 0xA0 + R.CODE_ID_LEN))
CONFIG = bytes(range(0x10, 0x10 + R.CONFIG_ID_LEN))


def _rec(rtype, payload):
    recs = list(journal.records(journal.encode(rtype, 7, 3, 1, 0, None, bytes(payload))))
    assert len(recs) == 1
    return recs[0]


def _deploy(files, copied=2, removed=1):
    head = bytearray(R.DEPLOY_HEAD)
    head[R.P_DEPLOY_KIND] = R.CODE_FILES
    head[R.P_DEPLOY_COPIED] = copied
    head[R.P_DEPLOY_REMOVED] = removed
    head[R.P_DEPLOY_CODE:R.P_DEPLOY_CODE + R.CODE_ID_LEN] = CODE
    head[R.P_DEPLOY_CONFIG:R.P_DEPLOY_CONFIG + R.CONFIG_ID_LEN] = CONFIG
    return _rec(R.J_DEPLOY, bytes(head) + files)


DEPLOY_HEAD = ("journal      7 round     3 deploy      deployed files a0a1a2a3a4a5a6a7"
               " config 101112131415: 2 copied, 1 removed")


def test_a_fault_line_gives_its_detail():
    line = logtext.journal_line(_rec(R.J_FAULT, [5, 2, 3, 0]))
    assert line == "journal      7 round     3 fault       in stage 5 (task): OSError, detail 3"
    # Detail 0: nothing to add.
    line = logtext.journal_line(_rec(R.J_FAULT, [5, 2, 0, 1]))
    assert line == ("journal      7 round     3 fault       in stage 5 (task): OSError,"
                    " in an earlier boot (journaled late)")


def test_a_deploy_line_names_the_code_the_configuration_and_the_files():
    line = logtext.journal_line(_deploy(b"+main.py\n+sicbo/settle.mpy\n-old.py"))
    assert line == DEPLOY_HEAD + ": +main.py +sicbo/settle.mpy -old.py"


def test_a_deploy_line_shows_files_up_to_40_characters_then_cuts_short():
    # " +main.py +sicbo/roundmachine.mpy" is 33 characters: "-old.py" (7)
    # brings the names to 40, which still fit.
    fits = b"+main.py\n+sicbo/roundmachine.mpy\n-old.py"
    line = logtext.journal_line(_deploy(fits))
    assert line == DEPLOY_HEAD + ": +main.py +sicbo/roundmachine.mpy -old.py"
    line = logtext.journal_line(_deploy(fits.replace(b"-old.py", b"-older.py")))
    assert line == DEPLOY_HEAD + ": +main.py +sicbo/roundmachine.mpy ..."


def test_a_code_check_line_names_the_kind_seed_answer_and_inspector():
    head = bytearray(R.VERIFY_HEAD)
    head[R.P_VERIFY_KIND] = R.CHECK_PARTITION
    head[R.P_VERIFY_ITEMS] = 12
    head[R.P_VERIFY_SEED:R.P_VERIFY_SEED + R.SEED_LEN] = bytes(range(1, 1 + R.SEED_LEN))
    head[R.P_VERIFY_ANSWER:R.P_VERIFY_ANSWER + R.ANSWER_LEN] = CODE
    line = logtext.journal_line(_rec(R.J_VERIFY, bytes(head) + b"inspector 7"))
    assert line == ("journal      7 round     3 verify      code files and partition, 12 items,"
                    " seed 010203040506.. answer a0a1a2a3a4a5a6a7.. by inspector 7")


def test_a_void_line_names_every_reason_and_shows_an_unknown_one_as_its_number():
    from sicbo import texts

    for r in range(1, len(texts.VOID_NAMES)):
        line = logtext.journal_line(_rec(R.J_VOID, (r, 0, 0, 0, 0, 0, 0, 0)))
        assert line.endswith(" reason " + texts.VOID_NAMES[r]), line
    for r in (0, len(texts.VOID_NAMES)):
        line = logtext.journal_line(_rec(R.J_VOID, (r, 0, 0, 0, 0, 0, 0, 0)))
        assert line.endswith(" reason %d" % r), line
