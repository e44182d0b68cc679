"""The picture of a round (`sicbo journal FILE --round N --svg OUT.svg`): the
SVG read back with xml.etree; its lit areas are exactly the areas the
firmware's settlement lights (the lamp frame of sicbo.settle), for every result
and both editions; a void round lights none."""

import itertools
import json
import os
import tempfile
import xml.etree.ElementTree as ET

from appkit import AREAS, Table, table_dict
from test_cli_journal import forged, played

from host_tools import REPO, layout_svg
from host_tools.cli import main
from host_tools.rules import load_table
from sicbo import areas, kinds, settle

NS = "{http://www.w3.org/2000/svg}"
TABLES = os.path.join(REPO, "board_config", "tables")
EVERY_RESULT = sorted({tuple(sorted(d)) for d in itertools.product(range(1, 7), repeat=3)})


def area_groups(svg_text):
    root = ET.fromstring(svg_text)
    assert root.tag == NS + "svg"
    return {g.get("data-area"): g for g in root.iter(NS + "g") if g.get("data-area")}


def lit_of(svg_text):
    return {code for code, g in area_groups(svg_text).items() if g.get("data-lit") == "1"}


def settled(cfg, table, dice):
    """The area codes lit by the settlement's lamp frame for these dice."""
    frame = table.settle(*dice)
    return {name for c, name in enumerate(cfg.lamp_order)
            if name is not None and name not in table.status_channel
            and settle.channel_on(frame, c)}


def all_texts(svg_text):
    return " ".join(t.text or "" for t in ET.fromstring(svg_text).iter(NS + "text"))


def test_lit_areas_are_the_settlements_for_every_result_2004():
    cfg, table = load_table(os.path.join(TABLES, "macau-2004.json"))
    for dice in EVERY_RESULT + [(2, 1, 1), (6, 3, 5), (4, 4, 1)]:
        svg = layout_svg.render(cfg, table, dice, round_id=7)
        assert lit_of(svg) == settled(cfg, table, dice), dice
        assert lit_of(svg)  # every result wins something on a full layout


def test_lit_areas_are_the_settlements_for_every_result_2003():
    cfg, table = load_table(os.path.join(TABLES, "macau-2003.json"))
    for dice in EVERY_RESULT:
        svg = layout_svg.render(cfg, table, dice)
        assert lit_of(svg) == settled(cfg, table, dice), dice


def test_each_edition_draws_its_own_areas_once():
    for name, edition_areas in (("macau-2003.json", kinds.AREA_COUNT_2003),
                                ("macau-2004.json", kinds.AREA_COUNT_2004)):
        cfg, table = load_table(os.path.join(TABLES, name))
        svg = layout_svg.render(cfg, table, (1, 2, 3))
        groups = area_groups(svg)
        assert sorted(groups) == sorted(areas.code(i) for i in range(edition_areas))
        root = ET.fromstring(svg)
        drawn = [g.get("data-area") for g in root.iter(NS + "g") if g.get("data-area")]
        assert len(drawn) == len(set(drawn))


def test_areas_the_table_does_not_offer_are_drawn_dim_and_never_lit(tmp_path):
    tf = tmp_path / "small.json"
    tf.write_text(json.dumps(table_dict()))
    cfg, table = load_table(str(tf))
    for dice in EVERY_RESULT:
        svg = layout_svg.render(cfg, table, dice)
        groups = area_groups(svg)
        assert lit_of(svg) == settled(cfg, table, dice), dice
        offered = {c for c, g in groups.items() if g.get("data-offered") == "1"}
        assert offered == set(AREAS)
        assert lit_of(svg) <= offered
    assert "not offered" in all_texts(svg)
    assert groups["TOTAL_4"].get("class") == "area closed"


def test_no_dice_lights_nothing():
    cfg, table = load_table(None)
    assert lit_of(layout_svg.render(cfg, table, None)) == set()


def test_cli_draws_a_paid_round_a_void_round_and_the_newest(tmp_path, capsys):
    folder, tf = played(tmp_path)
    capsys.readouterr()  # what the table printed while it played
    cfg, table = load_table(tf)
    out = tmp_path / "r1.svg"
    assert main(["journal", folder, "--table", tf, "--round", "1", "--svg", str(out)]) == 0
    assert "picture: round 1" in capsys.readouterr().out
    svg = out.read_text()
    assert lit_of(svg) == settled(cfg, table, (1, 1, 2)) and "PAIR_1_2" in lit_of(svg)
    root = ET.fromstring(svg)
    dice = [g for g in root.iter(NS + "g") if g.get("id") == "dice"][0]
    assert dice.get("data-dice") == "1-1-2"
    assert "ROUND 1" in all_texts(svg)
    # Round 3 was voided (stacked): nothing lit, the void and its reason shown.
    out3 = tmp_path / "r3.svg"
    assert main(["journal", folder, "--table", tf, "--round", "3", "--svg", str(out3)]) == 0
    svg3 = out3.read_text()
    assert lit_of(svg3) == set()
    assert "VOID: stacked" in all_texts(svg3)
    assert any(g.get("id") == "void-banner" for g in ET.fromstring(svg3).iter(NS + "g"))
    # Round 5, voided by the power cut, is the newest: drawn without --round.
    capsys.readouterr()
    out5 = tmp_path / "newest.svg"
    assert main(["journal", folder, "--table", tf, "--svg", str(out5), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["svg"]["round"] == 5
    svg5 = out5.read_text()
    assert lit_of(svg5) == set() and "power cut" in all_texts(svg5)


def test_cli_draws_a_corrected_round_on_its_effective_result(tmp_path, capsys):
    t = Table()
    t.to_result()
    t.enter(1, 2, 3)
    t.set("supervisor", 1)
    t.run(60)
    t.enter(1, 2, 4)
    t.press("key_payout")
    t.close()
    tf = tmp_path / "table.json"
    tf.write_text(json.dumps(table_dict()))
    cfg, table = load_table(str(tf))
    out = tmp_path / "c.svg"
    assert main(["journal", t.folder, "--table", str(tf), "--round", "1", "--svg",
                 str(out)]) == 0
    svg = out.read_text()
    assert lit_of(svg) == settled(cfg, table, (1, 2, 4)) and "SINGLE_3" not in lit_of(svg)
    assert "corrected" in all_texts(svg) and "1-2-3 -> 1-2-4" in all_texts(svg)


def test_cli_round_not_in_the_journal_is_one_line(tmp_path, capsys):
    folder, tf = played(tmp_path)
    capsys.readouterr()  # what the table printed while it played
    assert main(["journal", folder, "--table", tf, "--round", "99", "--svg",
                 str(tmp_path / "x.svg")]) == 2
    err = capsys.readouterr().err
    assert "round 99 is not in the journal" in err and err.count("\n") == 1
    assert main(["journal", folder, "--table", tf, "--round", "1"]) == 2
    assert "--svg" in capsys.readouterr().err


def test_cli_damaged_round_draws_without_a_traceback(tmp_path, capsys):
    f = forged(tmp_path)
    for rid in (1, 2, 3):
        out = tmp_path / ("d%d.svg" % rid)
        assert main(["journal", f, "--round", str(rid), "--svg", str(out)]) == 0
        svg = out.read_text()
        ET.fromstring(svg)
        assert "DAMAGED" in all_texts(svg)
        if rid < 3:
            assert lit_of(svg) == set()
    cfg, table = load_table(None)
    out = tmp_path / "d4.svg"
    assert main(["journal", f, "--round", "4", "--svg", str(out)]) == 0
    assert lit_of(out.read_text()) == settled(cfg, table, (6, 6, 6))


# ---- sicbo diag --svg: the current round of a board ----------------------------------


class FakeBoard:
    """mpremote against a board whose journal is `folder` and whose table file
    is `table`: answers diag's chain as device/diag.py would."""

    def __init__(self, folder, table):
        self.folder = folder
        self.table = table
        self.chains = []

    def check_port(self):
        pass

    def run(self, *chain):
        import binascii

        from host_tools.commands import diag

        self.chains.append(chain)
        out = ["diag output"]
        if diag.PULL in chain:
            names = sorted(n for n in os.listdir(self.folder) if n.endswith(".log"))
            for n in names:
                data = open(os.path.join(self.folder, n), "rb").read()
                for i in range(0, len(data), 192):
                    out.append("SICBO-SEG %r %s" % (n, binascii.hexlify(data[i:i + 192])
                                                    .decode()))
            out.append("SICBO-SEGS %r" % names)
        if "cp" in chain:
            i = chain.index("cp")
            assert chain[i + 1] == ":/table.json"
            with open(chain[i + 2], "w") as f:
                f.write(open(self.table).read())
            out.append("cp :/table.json %s" % chain[i + 2])
        return "\n".join(out) + "\n"


def _diag_args(**kw):
    import argparse

    # A port name of this process's own: the port's lock is taken by name,
    # and a shared one (/dev/null) is busy while another test process holds it.
    port = os.path.join(tempfile.gettempdir(), "sicbo-test-svg-%d" % os.getpid())
    a = argparse.Namespace(port=port, what="status", n=None, pull_journal=None,
                           no_rtc=True, no_restart=True, svg=None, table=None)
    for k, v in kw.items():
        setattr(a, k, v)
    return a


def test_diag_svg_draws_the_newest_round_with_the_boards_table(tmp_path, capsys):
    from host_tools.commands import diag

    folder, tf = played(tmp_path)
    capsys.readouterr()
    board = FakeBoard(folder, tf)
    out = tmp_path / "now.svg"
    assert diag.run(_diag_args(svg=str(out)), mpremote=board) == 0
    text = capsys.readouterr().out
    assert "picture: round 5" in text and "cp :/table.json" not in text
    assert "diag output" in text
    chain = board.chains[0]
    assert diag.PULL in chain and "\n" not in diag.PULL  # one line, no board code
    svg = out.read_text()
    assert "ROUND 5" in all_texts(svg) and lit_of(svg) == set()  # voided by the power cut


def test_diag_svg_with_a_table_file_and_pull(tmp_path, capsys):
    from host_tools.commands import diag

    t = Table()
    t.play(2, 5, 6)
    t.close()
    tf = tmp_path / "table.json"
    tf.write_text(json.dumps(table_dict()))
    capsys.readouterr()
    board = FakeBoard(t.folder, "/nonexistent")
    out = tmp_path / "now.svg"
    pulled = tmp_path / "j.bin"
    assert diag.run(_diag_args(svg=str(out), table=str(tf), pull_journal=str(pulled)),
                    mpremote=board) == 0
    assert "cp" not in board.chains[0]  # the table given: not copied from the board
    cfg, table = load_table(str(tf))
    assert lit_of(out.read_text()) == settled(cfg, table, (2, 5, 6))
    assert pulled.stat().st_size > 0


def test_diag_table_without_svg_is_refused(tmp_path):
    from host_tools.cli import UsageError
    from host_tools.commands import diag

    try:
        diag.run(_diag_args(table="x.json"), mpremote=FakeBoard(str(tmp_path), "x"))
    except UsageError as e:
        assert "--svg" in str(e)
    else:
        raise AssertionError("refused")
