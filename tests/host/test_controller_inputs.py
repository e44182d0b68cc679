"""The controller's input table (controller.input_table): one row per
signal, checked where it is built, so that a sensor added with an id the
switch bank cannot hold (16 and up) or a level event on a key is refused
when the firmware loads, not misread at the table. The firmware drops the
builder once the table is made (its code is not kept in the board's heap):
it is taken here from the controller's own source, the one that runs."""

import ast

import controller

from sicbo import signals as S


def _builder():
    with open(controller.__file__, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "input_table"]
    assert len(fn) == 1, "controller.py defines input_table once"
    ns = dict(vars(controller))
    exec(compile(ast.Module(fn, []), controller.__file__, "exec"), ns)  # noqa: S102
    return ns["input_table"]


input_table = _builder()


def _rows():
    """The shipped table's rows, read back from its bytes."""
    t = controller.INPUTS
    return [tuple(t[4 * i:4 * i + 4]) for i in range(S.COUNT)]


def _refused(rows):
    try:
        input_table(rows)
    except ValueError as e:
        return str(e)
    return None


def test_the_shipped_rows_make_the_shipped_table():
    assert len(controller.INPUTS) == 4 * S.COUNT
    assert input_table(_rows()) == controller.INPUTS


def test_sensor_ids_are_taken_from_0_to_15_and_refused_outside():
    for ok in (0, 15):
        rows = _rows()
        rows[2] = rows[2][:3] + (ok,)
        assert input_table(rows)[4 * 2 + 3] == ok
    for bad in (16, 255, -1):
        rows = _rows()
        rows[2] = rows[2][:3] + (bad,)
        assert _refused(rows) == "signal 2: sensor id %d is not below 16" % bad, bad


def test_one_row_per_signal():
    assert _refused(_rows()[:-1]) == "%d input rows for %d signals" % (S.COUNT - 1, S.COUNT)
    assert _refused(_rows() + [_rows()[0]]) == "%d input rows for %d signals" % (
        S.COUNT + 1, S.COUNT)


def test_an_event_on_0_only_for_a_level():
    rows = _rows()
    last_level = S.LEVELS - 1
    on_1, _on_0, arg, sensor = rows[last_level]
    rows[last_level] = (on_1, on_1, arg, sensor)
    assert input_table(rows)[4 * last_level + 1] == on_1
    rows = _rows()
    on_1, _on_0, arg, sensor = rows[S.LEVELS]
    rows[S.LEVELS] = (on_1, on_1 or 1, arg, sensor)
    assert _refused(rows) == "signal %d: a level (an event on 0) below S.LEVELS only" % S.LEVELS
