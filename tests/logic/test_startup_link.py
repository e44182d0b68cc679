# mprun-heap: controller
# Start-up of a table whose board file has a floor section (startup.stage_link,
# docs/floor.md): the link is planned from the secrets beside the board file
# and the table runs as a LinkedController, the journal kept as the floor's
# outbox; a secret that cannot be read leaves the table playing without a
# link, said in one line. The default board (no floor section) never loads
# the link's code: test_boot.py and the other controller tests.
import os
import sys

from appkit import Table, board_dict, fresh_folder

from sicbo import events as E
from sicbo import records as R

FLOOR = {"site": "S1", "table": "T07", "broker": "10.0.0.5"}


def _floor_board():
    b = board_dict()
    b["floor"] = dict(FLOOR)
    return b


def _remove_secrets(folder):
    # appkit's fresh_folder empties a folder of files only.
    d = folder + "/secrets"
    try:
        names = os.listdir(d)
    except OSError:
        return
    for name in names:
        os.remove(d + "/" + name)
    os.rmdir(d)


def test_a_board_with_a_floor_section_starts_with_its_link_planned():
    folder = fresh_folder()
    os.mkdir(folder + "/secrets")
    try:
        with open(folder + "/secrets/password", "wb") as f:
            f.write(b"s3cret\n")
        t = Table(folder=folder, board=_floor_board())
        from link.source import OutboxStore
        from link.table import LinkedController

        assert isinstance(t.ctl, LinkedController), t.log
        assert isinstance(t.store, OutboxStore)  # the journal is the floor's outbox
        assert not [line for line in t.log if "floor link" in line], t.log
        # What the link task's first pass makes the link of: the board file's
        # broker and the password read at start-up.
        plan = t.ctl._plan
        assert plan[2]["broker"] == "10.0.0.5" and plan[2]["table"] == "T07", plan
        assert plan[4] == b"s3cret" and plan[-1] == folder + "/acked"
        if sys.implementation.name == "micropython":
            # The planner's code, start-up's and the resumption's are gone
            # from the heap once the table runs (memory.forget).
            for name in ("link.plan", "startup", "resumption"):
                assert name not in sys.modules, name
        t.play(1, 2, 3)
        assert t.m.state == E.ST_IDLE and R.J_PAYOUT in t.types()
        t.close()
    finally:
        _remove_secrets(folder)


def test_a_floor_section_without_its_secret_plays_without_a_link_said_once():
    import controller

    t = Table(board=_floor_board())  # no secrets folder beside the board file
    said = [line for line in t.log if line.startswith("sicbo: floor link not started: ")]
    assert len(said) == 1, t.log
    assert type(t.ctl) is controller.Controller
    t.play(4, 5, 6)
    assert t.m.state == E.ST_IDLE and R.J_PAYOUT in t.types()
    t.close()
