"""host_tools.constfold, tested as a compiler: what it refuses (a FoldError
naming the file, the line and why), what it folds and into exactly what text,
its self-check, and that what the build folds means what its source means.

Most cases fold against a fake device tree (the fixture `fake`): a
sicbo/events.py and sicbo/signals.py of known constants, and pkg/sub/consts.py
and pkg/loud.py, two more modules of MODULES (the folder is not tied to
sicbo). The real tree is folded file by file in test_build_file_*.
"""

import ast
import builtins
import importlib
import io
import os
import symtable
import textwrap
import tokenize
import types

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from host_tools import REPO, constfold, vm32
from host_tools.constfold import FoldError, fold
from host_tools.deploy import code_files
from host_tools.mpycheck import sources

FAKE_EVENTS = '''\
"""Fake constants for the folder's tests."""
from micropython import const

A = const(3)
B = 0x10
NEG = const(-2)
TUP = (1, 2)
REBOUND = const(4)  # assigned again below: not a constant


def f():
    return "f"


def again():
    global REBOUND
    REBOUND = 5
'''
FAKE_SIGNALS = '''\
from micropython import const

COVER = const(1)
NAMES = ("cover", "clasp")
'''
FAKE_CONSTS = "X = 7\nY = -0x20\n"
FAKE_LOUD = "from micropython import const\n\nZ = const(9)\nLOG = []\nLOG.append(Z)\n"
FAKE_MODULES = ("sicbo.events", "sicbo.signals", "pkg.sub.consts", "pkg.loud")
VALUES = {"A": 3, "B": 16, "NEG": -2}


@pytest.fixture
def fake(tmp_path, monkeypatch):
    for rel, text in (("sicbo/events.py", FAKE_EVENTS), ("sicbo/signals.py", FAKE_SIGNALS),
                      ("pkg/sub/consts.py", FAKE_CONSTS), ("pkg/loud.py", FAKE_LOUD)):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.setattr(constfold, "DEVICE", str(tmp_path))
    monkeypatch.setattr(constfold, "MODULES", FAKE_MODULES)
    constfold._module.cache_clear()
    yield tmp_path
    constfold._module.cache_clear()


def src(text):
    return textwrap.dedent(text).lstrip("\n")


# ---- the fake modules, imported for real (the oracle) ---------------------------


def _fake_modules():
    """{module name: module object} of the fake tree, run as CPython runs it."""
    out = {}
    for name, text in (("sicbo.events", FAKE_EVENTS), ("sicbo.signals", FAKE_SIGNALS),
                       ("pkg.sub.consts", FAKE_CONSTS), ("pkg.loud", FAKE_LOUD)):
        mod = types.ModuleType(name)
        exec(compile(text, name, "exec"), mod.__dict__)
        out[name] = mod
    for name in ("sicbo", "pkg", "pkg.sub"):
        out[name] = types.ModuleType(name)
    for name, mod in list(out.items()):
        if "." in name:
            parent, leaf = name.rsplit(".", 1)
            setattr(out[parent], leaf, mod)
    return out


FAKES = _fake_modules()


def _fake_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name in FAKES:
        return FAKES[name] if fromlist else FAKES[name.split(".")[0]]
    return importlib.__import__(name, globals, locals, fromlist, level)


class Other:
    """What a rebinding binds the name to instead (other values)."""
    A = 100
    B = 200
    NEG = -7
    TUP = ("other",)

    @staticmethod
    def f():
        return "other f"


class Ctx:
    def __enter__(self):
        return Other

    def __exit__(self, *exc):
        return False


def run(text):
    """(the list `r` the code filled, the name of the exception it raised)."""
    r = []
    env = {"__builtins__": dict(vars(builtins), __import__=_fake_import), "__name__": "m",
           "r": r, "Other": Other, "Ctx": Ctx, "obj": types.SimpleNamespace(),
           "f": lambda *a, **k: (a, k), "g": lambda *a, **k: (a, k)}
    try:
        exec(compile(text, "m", "exec"), env)
        err = None
    except Exception as e:  # the meaning includes how it fails
        err = type(e).__name__
    return repr(r), err


# ---- refusals ------------------------------------------------------------------

IMPORT = "from sicbo import events as E\n"
REFUSED = [
    # (case, source, line, words of the reason)
    ("parameter", IMPORT + "def f(E):\n    return E.A\n", 2, "a parameter rebinds E"),
    ("keyword-only parameter", IMPORT + "def f(*, E):\n    return 1\n", 2, "a parameter"),
    ("star parameter", IMPORT + "def f(*E):\n    return 1\n", 2, "a parameter"),
    ("double-star parameter", IMPORT + "def f(**E):\n    return 1\n", 2, "a parameter"),
    ("lambda parameter", IMPORT + "f = lambda E: E.A\n", 2, "a parameter rebinds E"),
    ("nested function parameter", IMPORT + "def f():\n    def g(E):\n        return E.A\n"
     "    return g\n", 3, "a parameter"),
    ("nested function assignment", IMPORT + "def f():\n    x = E.A\n    E = 2\n    return x\n",
     4, "an assignment target rebinds E"),
    ("class body", IMPORT + "class C:\n    E = 1\n    v = E.A\n", 3, "an assignment target"),
    ("class name", IMPORT + "class E:\n    pass\n", 2, "a class name"),
    ("def name", IMPORT + "def E():\n    pass\n", 2, "a def's name"),
    ("comprehension", IMPORT + "x = [E.A for E in (1,)]\n", 2, "a comprehension target"),
    ("for target", IMPORT + "for E in ():\n    pass\n", 2, "a for target"),
    ("for tuple target", IMPORT + "for i, E in ():\n    pass\n", 2, "a for target"),
    ("with-as", IMPORT + "with open('x') as E:\n    pass\n", 2, "a with ... as target"),
    ("except-as", IMPORT + "try:\n    pass\nexcept ValueError as E:\n    pass\n", 4,
     "an except ... as target"),
    ("global", IMPORT + "def f():\n    global E\n    return 1\n", 3, "a global declaration"),
    ("nonlocal", IMPORT + "def f():\n    def g():\n        nonlocal E\n    return g\n", 4,
     "a nonlocal declaration"),
    ("del", IMPORT + "x = E.A\ndel E\n", 3, "a del rebinds E"),
    ("augmented assignment", IMPORT + "E += 1\n", 2, "an augmented assignment target"),
    ("annotated assignment", IMPORT + "E: int = 1\n", 2, "an annotated assignment target"),
    ("bare annotation", IMPORT + "def f():\n    E: int\n", 3, "an annotated assignment"),
    ("walrus", IMPORT + "if (E := 1):\n    pass\n", 2, "a walrus target"),
    ("match capture", IMPORT + "match 1:\n    case E:\n        pass\n", 3, "a match capture"),
    ("attribute assignment", IMPORT + "E.A = 1\n", 2, "E.A is assigned or deleted"),
    ("attribute augmented", IMPORT + "E.A += 1\n", 2, "E.A is assigned or deleted"),
    ("attribute del", IMPORT + "del E.A\n", 2, "E.A is assigned or deleted"),
    ("setattr", IMPORT + "setattr(E, 'A', 5)\n", 2, "setattr(E, ...) changes sicbo.events"),
    ("second import of E", IMPORT + "from sicbo import signals as E\n", 1, "an import rebinds E"),
    ("other import binding E", IMPORT + "import os as E\n", 2, "an import rebinds E"),
    ("the same import twice", IMPORT + IMPORT, 1, "an import rebinds E"),
    ("unknown attribute", IMPORT + "x = E.NOPE\n", 2, "sicbo.events has no NOPE"),
    ("star import", IMPORT + "from os import *\n", 2, "a star import"),
    ("star import of the module", "from sicbo.events import *\n", 1, "a star import"),
    ("unknown direct name", "from sicbo.events import NOPE\n", 1, "sicbo.events has no NOPE"),
    ("direct name rebound", "from sicbo.events import A\nA = 2\n", 2,
     "an assignment target rebinds A"),
    ("direct name as a parameter", "from sicbo.events import A as AA\ndef f(AA):\n"
     "    return AA\n", 2, "a parameter rebinds AA"),
    ("import in a function", "def f():\n    from sicbo import events as E\n    return E.A\n",
     2, "imported inside a block"),
    ("import in an if", "if True:\n    from sicbo import events as E\n", 2,
     "imported inside a block"),
    ("import in a try", "try:\n    import sicbo.events as E\nexcept ImportError:\n"
     "    pass\n", 2, "imported inside a block"),
    ("use before the import", "x = E.A\n" + IMPORT, 1, "E used before its import"),
    ("function above the import", "def f():\n    return E.A\n" + IMPORT, 2,
     "E used before its import"),
    ("import binding the package", "import sicbo.events\nx = sicbo.events.A\n", 1,
     "`import sicbo.events` binds `sicbo`"),
    ("relative import", "from . import events\n", 1, "a relative import of events"),
    ("relative from-import", "from .events import A\n", 1, "a relative import of events"),
    ("globals()", IMPORT + "globals()['E'] = 1\n", 2, "globals in a module that folds"),
    ("exec", IMPORT + "exec('E = 1')\n", 2, "exec in a module that folds"),
    ("a source that does not parse", IMPORT + "x = (E.A\n", 2, "does not parse: '(' was never"),
    ("import of a module that runs code", "from pkg import loud\nx = loud.Z\n", 1,
     "cannot drop the import of pkg.loud: pkg/loud.py:5 runs code when imported"),
]


@pytest.mark.parametrize("case,text,line,why", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused(fake, case, text, line, why):
    with pytest.raises(FoldError) as info:
        fold(text, "device/x.py")
    e = info.value
    assert (e.path, e.line) == ("device/x.py", line), str(e)
    assert why.replace("pkg/loud.py", os.path.relpath(str(fake / "pkg/loud.py"), REPO)) in e.why
    assert str(e).startswith("device/x.py:%d: " % line)


def test_fold_file_names_the_file(fake, tmp_path):
    source = tmp_path / "in.py"
    source.write_text(IMPORT + "def f(E):\n    return E.A\n")
    with pytest.raises(FoldError, match=r"in\.py:2: a parameter rebinds E"):
        constfold.fold_file(str(source), str(tmp_path / "out" / "in.py"))
    assert not (tmp_path / "out").exists()


def test_a_parent_package_binding_the_name_refused(fake):
    (fake / "sicbo" / "__init__.py").write_text("VERSION = 1\nevents = None\n")
    constfold._module.cache_clear()
    with pytest.raises(FoldError, match=r"__init__\.py:2: binds events: `from sicbo import "
                                        r"events` would not be the module sicbo\.events"):
        fold(IMPORT + "x = E.A\n", "x.py")


def test_a_module_without_a_file_refused(fake, monkeypatch):
    monkeypatch.setattr(constfold, "MODULES", FAKE_MODULES + ("pkg.gone",))
    with pytest.raises(FoldError, match=r"gone\.py:0: no such module \(pkg\.gone"):
        fold("from pkg import gone\nx = gone.X\n", "x.py")


def test_the_real_modules_refuse_the_old_miscompile():
    """What the token-editing folder got wrong, against the real modules."""
    with pytest.raises(FoldError, match=r"^x\.py:2: a parameter rebinds R"):
        fold("from sicbo import records as R\ndef f(R):\n    return R.J_ROUND\n", "x.py")
    j_round = importlib.import_module("sicbo.records").J_ROUND
    assert fold("import sicbo.records as R\nx = R.J_ROUND\n") == (
        "pass  # folded: sicbo.records\nx = %d\n" % j_round)
    st_open = importlib.import_module("sicbo.events").ST_OPEN
    assert fold("import sicbo.events as E\nx = E.ST_OPEN\n") == (
        "pass  # folded: sicbo.events\nx = %d\n" % st_open)


def test_deploy_refuses_in_one_line(tmp_path):
    """sicbo deploy's compile step: a DeployError (one line, exit 2), no traceback."""
    from host_tools.deploy import DeployError, compile_tree

    local = tmp_path / "bad.py"
    local.write_text("from sicbo import events as E\ndef f(E):\n    return E.ST_OPEN\n")
    with pytest.raises(DeployError) as info:
        compile_tree([("bad.mpy", str(local), True)], str(tmp_path / "stage"), [])
    assert str(info.value).startswith("constants not folded: ")
    assert str(info.value).endswith("bad.py:2: a parameter rebinds E, bound to sicbo.events by "
                                    "the import on line 1: rename one")
    assert "\n" not in str(info.value)


# ---- what it folds, exactly -----------------------------------------------------

FOLDED = [
    ("module alias", IMPORT + "x = E.A\n",
     "pass  # folded: sicbo.events\nx = 3\n"),
    ("import a.b as E", "import sicbo.events as E\nx = E.B\n",
     "pass  # folded: sicbo.events\nx = 16\n"),
    ("the bare module name", "from sicbo import events\nx = events.A + events.B\n",
     "pass  # folded: sicbo.events\nx = 3 + 16\n"),
    ("direct names", "from sicbo.events import A, B as BB\nx = (A, BB)\n",
     "pass  # folded: sicbo.events.A, sicbo.events.B\nx = (3, 16)\n"),
    ("a direct name as a keyword", "from sicbo.events import A\nx = dict(A=A)\n",
     "pass  # folded: sicbo.events.A\nx = dict(A=3)\n"),
    ("negative, as an operand", IMPORT + "x = E.NEG ** 2, -E.NEG\n",
     "pass  # folded: sicbo.events\nx = (-2) ** 2, -(-2)\n"),
    ("an attribute chain", IMPORT + "x = E.A.bit_length()\n",
     "pass  # folded: sicbo.events\nx = (3).bit_length()\n"),
    ("a multi-line expression", IMPORT + "x = (E.A +\n     E.B)\n",
     "pass  # folded: sicbo.events\nx = (3 +\n     16)\n"),
    ("an attribute over two lines", IMPORT + "x = (E\n     .A)\n",
     "pass  # folded: sicbo.events\nx = (3\\\n)\n"),
    ("call, keyword, default, decorator",
     IMPORT + "def deco(v):\n    return lambda fn: fn\n\n\n@deco(E.A)\ndef f(a=E.B, *, b=E.NEG):\n"
     "    return g(E.A, key=E.B)\n",
     "pass  # folded: sicbo.events\ndef deco(v):\n    return lambda fn: fn\n\n\n@deco(3)\n"
     "def f(a=16, *, b=(-2)):\n    return g(3, key=16)\n"),
    ("nested scopes that do not rebind",
     IMPORT + "class C:\n    v = E.A\n\n    def m(self):\n        return [E.B for i in (1,)]\n"
     "\n\ndef outer():\n    def inner():\n        return (lambda: E.NEG)()\n    return inner\n",
     "pass  # folded: sicbo.events\nclass C:\n    v = 3\n\n    def m(self):\n"
     "        return [16 for i in (1,)]\n\n\ndef outer():\n    def inner():\n"
     "        return (lambda: (-2))()\n    return inner\n"),
    ("names that are not bindings of E",
     IMPORT + "obj.E = E.A\nf(E=E.B)\nx = obj.E\n",
     "pass  # folded: sicbo.events\nobj.E = 3\nf(E=16)\nx = obj.E\n"),
    ("a name that is no constant keeps the import",
     IMPORT + "x = (E.A, E.TUP, E.f(), E.REBOUND, E.__name__)\n",
     IMPORT + "x = (3, E.TUP, E.f(), E.REBOUND, E.__name__)\n"),
    ("a bare use keeps the import", IMPORT + "x = (E, E.A)\n", IMPORT + "x = (E, 3)\n"),
    ("one import of two, kept in part",
     "from sicbo import events as E, signals as S  # why\nx = (E.A, S.COVER, S.NAMES)\n",
     "from sicbo import signals as S  # folded: sicbo.events  # why\n"
     "x = (3, 1, S.NAMES)\n"),
    ("a parenthesized import over lines",
     "from sicbo import (\n    events as E,\n    signals as S,\n)\nx = (E.A, S.NAMES)\n",
     "from sicbo import (signals as S  # folded: sicbo.events\n\n\n)\nx = (3, S.NAMES)\n"),
    ("a dropped import over lines",
     "from sicbo import (\n    events as E,\n)  # why\nx = E.A\n",
     "pass  # folded: sicbo.events\n\n  # why\nx = 3\n"),
    ("an import with code after it", IMPORT.strip() + "; y = E.A\n",
     "pass; y = 3\n"),
    ("an unused import", IMPORT + "x = 1\n", "pass  # folded: sicbo.events\nx = 1\n"),
    ("a module of another package", "from pkg.sub import consts as C\nx = C.X + C.Y\n",
     "pass  # folded: pkg.sub.consts\nx = 7 + (-32)\n"),
    ("import of another package", "import pkg.sub.consts as C, os\nx = C.X, os.sep\n",
     "import os  # folded: pkg.sub.consts\nx = 7, os.sep\n"),
    ("direct from another package", "from pkg.sub.consts import Y\nx = Y\n",
     "pass  # folded: pkg.sub.consts.Y\nx = (-32)\n"),
    ("a direct name that is no constant", "from sicbo.signals import NAMES, COVER\n"
     "x = NAMES, COVER\n",
     "from sicbo.signals import NAMES  # folded: sicbo.signals.COVER\nx = NAMES, 1\n"),
    ("non-ASCII text on the line (UTF-8 columns)",
     IMPORT + "x = ('é€', E.A, 'ü', E.B)  # é\n",
     "pass  # folded: sicbo.events\nx = ('é€', 3, 'ü', 16)  # é\n"),
    ("inside an f-string", IMPORT + "x = f'{E.A}-{E.B:x}'\n",
     "pass  # folded: sicbo.events\nx = f'{3}-{16:x}'\n"),
    ("a module that runs code keeps its import when used otherwise",
     "from pkg import loud\nx = loud.Z, loud.LOG\n", "from pkg import loud\nx = 9, loud.LOG\n"),
]


@pytest.mark.parametrize("case,text,want", FOLDED, ids=[c[0] for c in FOLDED])
def test_folded(fake, case, text, want):
    got = fold(text, "x.py")
    assert got == want
    assert fold(got, "x.py") == got  # idempotent
    assert len(got.split("\n")) == len(text.split("\n"))


def test_no_import_no_change(fake):
    text = "import os\nE = os\nx = E.sep\n"
    assert fold(text) is text


def test_folded_means_what_the_source_means(fake):
    """Every folding case above, run under CPython against the fake modules."""
    for case, text, _want in FOLDED:
        if "\nx = " in "\n" + text:
            text += "r.append(x)\n"
        assert run(fold(text)) == run(text), case


def _statement_lines(tree):
    return [(type(n).__name__, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def _comments(text):
    """The comments of a text, but the notes the fold adds ("# folded: ...")."""
    out = []
    for t in tokenize.generate_tokens(io.StringIO(text).readline):
        if t.type == tokenize.COMMENT:
            words = t.string
            if words.startswith("# folded: "):
                if "  #" not in words:
                    continue
                words = "#" + words.split("  #", 1)[1]
            out.append(words)
    return out


def test_lines_and_comments_kept(fake):
    text = src('''
        """Doc."""
        from sicbo import (  # the names
            events as E,  # rounds
            signals as S,
        )  # end


        def f(x=E.A):  # a default
            # a comment line
            return (x +  # more
                    E.B, S.COVER,
                    S.NAMES)  # kept


        class C:
            v = E.NEG  # class
    ''')
    got = fold(text)
    want = [(k, n) for k, n in _statement_lines(ast.parse(text))]
    assert [(k, n) for k, n in _statement_lines(ast.parse(got))] == want
    assert _comments(got) == [c for c in _comments(text)
                              if c not in ("# the names", "# rounds")]
    assert "S.NAMES" in got and "E." not in got


# ---- the self-check ---------------------------------------------------------------


def test_self_check_refuses_a_wrong_value(fake, monkeypatch):
    monkeypatch.setattr(constfold, "_value_text", lambda value, parent, node: str(value + 1))
    with pytest.raises(FoldError, match=r"^x\.py:3: the folded text says something else"):
        fold(IMPORT + "y = 1\nx = E.A\n", "x.py")


def test_self_check_refuses_an_edit_beyond_the_node(fake, monkeypatch):
    real = constfold._edits

    def wider(tree, replace, kept):
        # also swallow the `+ 1` after the use
        return [(l1, c1, l2, c2 + 4 if rep == "3" else c2, rep, note)
                for l1, c1, l2, c2, rep, note in real(tree, replace, kept)]

    monkeypatch.setattr(constfold, "_edits", wider)
    with pytest.raises(FoldError, match="says something else"):
        fold(IMPORT + "x = E.A + 1\n", "x.py")


def test_self_check_refuses_a_moved_line(fake, monkeypatch):
    real = constfold._apply
    monkeypatch.setattr(constfold, "_apply",
                        lambda text, edits: real(text, edits).replace("\n\n", "\n", 1))
    with pytest.raises(FoldError, match="moved a line"):
        fold(IMPORT + "\nx = E.A\n", "x.py")


def test_self_check_refuses_text_that_does_not_parse(fake, monkeypatch):
    monkeypatch.setattr(constfold, "_value_text", lambda value, parent, node: "%d" % value)
    with pytest.raises(FoldError, match="the folded text does not parse"):
        fold(IMPORT + "x = E.A.bit_length()\n", "x.py")  # 3.bit_length()


def test_self_check_refuses_an_import_left_wrong(fake, monkeypatch):
    monkeypatch.setattr(constfold, "_import_text", lambda imp, names: "import os")
    with pytest.raises(FoldError, match="says something else"):
        fold(IMPORT + "x = E.A\n", "x.py")


def test_unknown_syntax_refused(fake, monkeypatch):
    monkeypatch.setattr(constfold, "_NOT_BINDING", constfold._NOT_BINDING - {("keyword", "arg")})
    with pytest.raises(FoldError, match=r"x\.py:2: syntax the constant folder does not know "
                                        r"\(keyword\.arg\)"):
        fold(IMPORT + "x = f(a=E.A)\n", "x.py")


# ---- constants() ------------------------------------------------------------------


def test_constants_of_a_fake_module(fake):
    assert constfold.constants("sicbo.events") == {"A": 3, "B": 16, "NEG": -2}
    assert constfold.constants("pkg.sub.consts") == {"X": 7, "Y": -32}


@pytest.mark.parametrize("module", constfold.MODULES)
def test_constants_are_the_modules_ints(module):
    """Every int the real module holds at top level, and its value under CPython."""
    mod = importlib.import_module(module)
    ints = {k: v for k, v in vars(mod).items() if type(v) is int and not k.startswith("__")}
    assert ints and constfold.constants(module) == ints


# ---- the build's own files ----------------------------------------------------------


def build_files():
    """Every file the build folds: device/ (deploy, the frozen image, the unix
    port runs), sim/ and tests/logic/ (host_tools.mprun), the bench's rig
    (host_tools.vm32, bench/board_heap.py)."""
    out = [os.path.join(REPO, rel) for tree in ("device", "sim", os.path.join("tests", "logic"))
           for rel in sources(os.path.join(REPO, tree))]
    out += list(vm32.RIG)
    assert {local for _rel, local in code_files()} <= set(out)
    return sorted(set(out))


def _imports_of_modules(tree):
    """The test's own reading: {alias: module}, {direct name: (module, NAME)}."""
    aliases, direct = {}, {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in constfold.MODULES:
                    aliases[a.asname] = importlib.import_module(a.name)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            for a in node.names:
                full = "%s.%s" % (node.module, a.name)
                if full in constfold.MODULES:
                    aliases[a.asname or a.name] = importlib.import_module(full)
                elif node.module in constfold.MODULES:
                    direct[a.asname or a.name] = (importlib.import_module(node.module), a.name)
    return aliases, direct


def _literal(node):
    return ast.literal_eval(node) if isinstance(node, (ast.Constant, ast.UnaryOp)) else None


def _same_meaning(a, b, aliases, direct, dropped):
    """Walk the original tree `a` and the folded `b` together: equal but for
    uses of the modules' ints, each replaced by the value CPython imports,
    and imports of those modules dropped (recorded in `dropped`)."""
    if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and (
            a.value.id in aliases) and not isinstance(b, ast.Attribute):
        want = getattr(aliases[a.value.id], a.attr)
        assert type(want) is int and _literal(b) == want, ast.dump(b)
        return
    if isinstance(a, ast.Name) and a.id in direct and not isinstance(b, ast.Name):
        want = getattr(*direct[a.id])
        assert type(want) is int and _literal(b) == want, ast.dump(b)
        return
    if isinstance(a, (ast.Import, ast.ImportFrom)) and ast.dump(a) != ast.dump(b):
        bound = {(x.asname or x.name.split(".")[0]) for x in a.names}
        left = set() if isinstance(b, ast.Pass) else {(x.asname or x.name.split(".")[0])
                                                        for x in b.names}
        assert left < bound and (bound - left) <= set(aliases) | set(direct)
        dropped.update(bound - left)
        return
    assert type(a) is type(b), (type(a).__name__, type(b).__name__, getattr(a, "lineno", ""))
    if isinstance(a, ast.stmt):
        assert a.lineno == b.lineno
    for field in a._fields:
        x, y = getattr(a, field), getattr(b, field)
        if isinstance(x, list):
            assert len(x) == len(y)
            for p, q in zip(x, y, strict=True):
                if isinstance(p, ast.AST):
                    _same_meaning(p, q, aliases, direct, dropped)
                else:
                    assert p == q
        elif isinstance(x, ast.AST):
            _same_meaning(x, y, aliases, direct, dropped)
        else:
            assert x == y


def _never_rebound(text, names):
    """symtable's view (CPython's own compiler): each name is imported at module
    level and bound in no other scope."""
    top = symtable.symtable(text, "x", "exec")
    for name in names:
        s = top.lookup(name)
        assert s.is_imported() and not s.is_assigned() and not s.is_parameter(), name
    todo = list(top.get_children())
    while todo:
        t = todo.pop()
        todo.extend(t.get_children())
        for name in names:
            if name in t.get_identifiers():
                s = t.lookup(name)
                assert not (s.is_local() or s.is_parameter() or s.is_imported()
                            or s.is_declared_global() or s.is_nonlocal()), (t.get_name(), name)


BUILD_FILES = build_files()


@pytest.mark.parametrize("path", BUILD_FILES, ids=[os.path.relpath(p, REPO) for p in BUILD_FILES])
def test_build_file_folds_to_its_meaning(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    got = fold(text, os.path.relpath(path, REPO))
    assert fold(got) == got
    assert len(got.split("\n")) == len(text.split("\n"))
    a, b = ast.parse(text), ast.parse(got)
    aliases, direct = _imports_of_modules(a)
    dropped = set()
    _same_meaning(a, b, aliases, direct, dropped)
    _never_rebound(text, list(aliases) + [n for n, (module, name) in direct.items()
                                          if type(getattr(module, name)) is int])
    # nothing of a dropped import is left used
    assert not {n.id for n in ast.walk(b) if isinstance(n, ast.Name)} & dropped
    assert _comments(got) == _comments(text)


def test_build_folds_something():
    """The fold is in use: every firmware file that imports sicbo.events or
    sicbo.signals is folded, and none of them still imports sicbo.events."""
    folded = 0
    for rel, local in code_files():
        with open(local, encoding="utf-8") as f:
            text = f.read()
        got = fold(text, rel)
        tree = ast.parse(text)
        aliases, direct = _imports_of_modules(tree)
        uses = [getattr(aliases[a.value.id], a.attr) for a in ast.walk(tree)
                if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name)
                and a.value.id in aliases]
        uses += [getattr(module, name) for module, name in direct.values()]
        if any(type(v) is int for v in uses):
            assert got != text, rel
            folded += 1
        assert "sicbo import events" not in got and "events as E" not in got, rel
    assert folded >= 10


# ---- the property: refused, or the same meaning --------------------------------------

USES = [
    "r.append({u})",
    "r.append(({u} +\n          1))",
    "def f{i}(x={u}):\n    return (x, {u})\nr.append(f{i}())",
    "r.append([{u} for _ in range(2)])",
    "class C{i}:\n    v = {u}\nr.append(C{i}.v)",
    "r.append((lambda: {u})())",
    "r.append(dict({n}={u}))",
    "def d{i}(v):\n    return lambda fn: fn\n@d{i}({u})\ndef h{i}():\n    return {u}\n"
    "r.append(h{i}())",
    "def o{i}():\n    def inner():\n        return {u}\n    return inner()\nr.append(o{i}())",
    "r.append(str({u})); r.append({u})",
]
REBINDS = [
    "def p{i}({n}):\n    return {u}\nr.append(p{i}(Other))",
    "r.append((lambda {n}: {u})(Other))",
    "{n} = Other",
    "for {n} in [Other]:\n    r.append({u})",
    "r.append([{u} for {n} in [Other]])",
    "class K{i}:\n    {n} = Other\n    v = {u}\nr.append(K{i}.v)",
    "try:\n    raise ValueError\nexcept ValueError as {n}:\n    r.append(1)",
    "with Ctx() as {n}:\n    r.append({u})",
    "def g{i}():\n    global {n}\n    {n} = Other\ng{i}()",
    "del {n}",
    "r.append(({n} := Other))",
    "{n}: object = Other",
    "import os as {n}",
    "{n}.A = 99",
    "setattr({n}, 'A', 99)",
    "def q{i}():\n    {n} = Other\n    return {u}\nr.append(q{i}())",
]
ALIAS_USES = ["{n}.A", "{n}.B", "{n}.NEG", "{n}.TUP", "{n}.A.bit_length()", "-{n}.NEG ** 2",
              "{n}.f()", "{n}.REBOUND"]
NOT_FOLDED = ("{n}.TUP", "{n}.f()", "{n}.REBOUND")
DIRECT_USES = ["{n}", "{n}.bit_length()", "-{n} ** 2", "({n}, {n})"]


@st.composite
def programs(draw):
    """(source, whether it only uses the name, after the import; whether it
    uses a constant)."""
    form = draw(st.sampled_from(["alias", "import-as", "bare", "direct", "direct-as"]))
    const = draw(st.sampled_from(sorted(VALUES)))
    name, imp = {
        "alias": ("E", "from sicbo import events as E"),
        "import-as": ("E", "import sicbo.events as E"),
        "bare": ("events", "from sicbo import events"),
        "direct": (const, "from sicbo.events import %s" % const),
        "direct-as": ("K", "from sicbo.events import %s as K" % const),
    }[form]
    uses = DIRECT_USES if form.startswith("direct") else ALIAS_USES
    n = draw(st.integers(1, 5))
    body = []
    clean = True
    folds = False
    for i in range(n):
        rebind = draw(st.booleans()) and draw(st.booleans())
        clean = clean and not rebind
        snippet = draw(st.sampled_from(REBINDS if rebind else USES))
        use = draw(st.sampled_from(uses))
        folds = folds or use not in NOT_FOLDED
        body.append(snippet.format(n=name, i=i, u=use.format(n=name)))
    at = draw(st.integers(0, n)) if draw(st.booleans()) else 0
    clean = clean and at == 0
    body.insert(at, imp)
    return "\n".join(body) + "\n", clean, folds


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(programs())
def test_property_refused_or_same_meaning(fake, program):
    text, clean, folds = program
    try:
        got = fold(text, "gen.py")
    except FoldError:
        assert not clean, "a program that only uses the name was refused:\n" + text
        event("refused")
        return
    event("folded" if got != text else "unchanged")
    assert run(got) == run(text), "\n" + text + "----\n" + got
    if clean:
        assert (got != text) == folds
