# A table whose layout is not the floor's table file: the floor cannot match
# the file to the table's configuration id (it covers the board file too),
# but the lamp channels of the table's meters checkpoint tell. Its winning
# areas are then not drawn (a dispute must not be settled on another
# layout's lit areas), and the pages say why; given the table's own file,
# the floor draws them.
import json
import os
import subprocess
import sys

import pytest

from floorwebkit import feed, get, start_view
from host_tools import REPO
from host_tools.floor.simtables import TableJournal
from host_tools.rules import DEFAULT_TABLE, load_table

TABLE_2003 = os.path.join(os.path.dirname(DEFAULT_TABLE), "macau-2003.json")


@pytest.fixture
def store_2003(tmp_path):
    db = str(tmp_path / "floor.db")
    cfg, table = load_table(TABLE_2003)
    j = TableJournal(3, cfg=cfg, table=table, checkpoint_every=4)
    for _ in range(6):
        j.play_round()
    feed(db, {"T9": j})
    return db, j


def test_another_layout_is_not_drawn_and_the_pages_say_why(store_2003):
    db, j = store_2003
    _c, t2003 = load_table(TABLE_2003)
    _c, t2004 = load_table(None)
    assert t2003.channels != t2004.channels
    v = start_view(db)  # the floor's file: the 2004 full layout
    try:
        rid = j.m.round - 1 if j.m.state else j.m.round
        _s, body, _h = get(v.url + "table/T9/round/%d" % rid)
        assert 'id="layout-warning"' in body and "<svg" not in body
        assert ("counts %d lamp channels, the floor&#039;s table file %d"
                % (t2003.channels, t2004.channels)) in body
        _s, text, _h = get(v.url + "table/T9/round/%d.json" % rid)
        assert "another layout" in json.loads(text)["layout_warning"]
        _s, body, _h = get(v.url + "table/T9")
        assert 'id="layout-warning"' in body and "runs another layout" in body
        _s, body, _h = get(v.url + "table/T9/display")
        assert "Layout not shown" in body and "<svg" not in body.split('id="layout"')[1]
    finally:
        v.stop()


def test_the_tables_own_file_draws_its_winning_areas(store_2003):
    db, j = store_2003
    v = start_view(db, TABLE_2003)
    try:
        rid = j.m.round - 1 if j.m.state else j.m.round
        _s, body, _h = get(v.url + "table/T9/round/%d" % rid)
        assert 'id="layout-warning"' not in body and "<svg" in body
        _s, text, _h = get(v.url + "table/T9/round/%d.json" % rid)
        assert json.loads(text)["layout_warning"] is None
        _s, body, _h = get(v.url + "table/T9")
        assert 'id="layout-warning"' not in body
        _s, body, _h = get(v.url + "table/T9/display")
        assert "Layout not shown" not in body and "<svg" in body.split('id="layout"')[1]
    finally:
        v.stop()


def test_floor_records_names_a_table_of_another_layout(store_2003):
    db, _j = store_2003
    r = subprocess.run([sys.executable, "-m", "host_tools", "floor", "records", "--db", db,
                        "--table", "T9", "--json"], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["records"] and list(out["layout_warnings"]) == ["T9"]
    assert "runs another layout" in out["layout_warnings"]["T9"]
    r = subprocess.run([sys.executable, "-m", "host_tools", "floor", "records", "--db", db,
                        "--limit", "3"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 3
    assert r.stderr.startswith("sicbo floor: table T9: this table's meters checkpoint")
    r = subprocess.run([sys.executable, "-m", "host_tools", "floor", "records", "--db", db,
                        "--table-file", TABLE_2003, "--json"], capture_output=True, text=True,
                       cwd=REPO, timeout=120)
    assert r.returncode == 0 and json.loads(r.stdout)["layout_warnings"] == {}
