# Numbers read from people and from boards: str.isdigit() takes digits that
# int() refuses ('²', '٣'), so a check by isdigit alone let such text through
# to a traceback. Each reader now refuses it (or passes the line on) in its
# own words.
import pytest

from host_tools import boardstate, chaincheck, console
from host_tools.cli import UsageError
from host_tools.commands.floor import host_port

ODD = ("\u00b2", "1\u0663", "\u0661\u0662")  # superscript two; Arabic-Indic digits


@pytest.mark.parametrize("port", ODD)
def test_a_broker_port_of_other_digits_is_no_port(port):
    assert not port.isascii() and port.isdigit()  # what fooled the old check
    with pytest.raises(UsageError, match="is not HOST:PORT"):
        host_port("127.0.0.1:" + port)
    assert host_port("127.0.0.1:1883") == ("127.0.0.1", 1883)


@pytest.mark.parametrize("seq", ODD)
def test_a_chain_head_of_other_digits_is_no_head(seq):
    with pytest.raises(ValueError, match="a head is SEQ:HASH"):
        chaincheck.parse_head(seq + ":" + "0" * 32)


@pytest.mark.parametrize("n", ODD)
def test_a_board_line_of_other_digits_is_shown_as_it_came(n):
    line = "D %s 1" % n
    assert console.render(line) == line
    assert boardstate._state_of(n) is None
