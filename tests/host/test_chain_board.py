"""The virtual board with the dealer's keys on the 74HC165 chain
(board_config/boards/virtual-chain.json, wired as esp32-devkitc.json): the
scripted dealer plays whole rounds through the chain that the simulated
table drives, and the journal has each one settled, with no fault."""

import json
import os

from host_tools import REPO
from host_tools.cli import main
from sicbo import journal
from sicbo import records as R

CHAIN_BOARD = os.path.join(REPO, "board_config", "boards", "virtual-chain.json")


def test_rounds_played_through_the_key_chain(tmp_path, capsys):
    # The chain board's wiring and timings, but the coil's hard limit the
    # longest a board file allows: a virtual board's interpreter can be
    # starved by a loaded host (an ESP32 never is), and a pulse cut by it
    # would be a fault (an alarm, the round void) that a board does not have.
    with open(CHAIN_BOARD) as f:
        board = json.load(f)
    board["timings"]["max_on_ms"] = 1000
    path = tmp_path / "virtual-chain-test.json"
    path.write_text(json.dumps(board))
    folder = str(tmp_path / "vb")
    assert main(["demo", "--rounds", "2", "--board", str(path), "--fresh", "--folder",
                 folder, "--pace", "0.2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "2 rounds played" in out, out[-2000:]
    jdir = os.path.join(folder, "fs", "journal")
    recs = []
    for name in sorted(os.listdir(jdir)):
        with open(os.path.join(jdir, name), "rb") as f:
            recs.extend(journal.records(f.read()))
    types = [r.type for r in recs]
    assert types.count(R.J_PAYOUT) + types.count(R.J_VOID) == 2, types
    assert R.J_FAULT not in types and R.J_DAMAGE not in types, types
    # every key of a round went through the chain: bell, faces, confirm, payout
    assert R.J_BELL in types and R.J_COVER_OFF in types
