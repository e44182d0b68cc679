"""Constants folded across modules, before mpy-cross compiles the firmware.

MicroPython folds a `const()` only inside the module that defines it: every
`E.ST_IDLE` elsewhere is an attribute lookup at run time, and the module
sicbo.events, its ~130 names interned and its globals, stays in the board's
heap for it. The firmware's sources keep the names, defined once in
sicbo/events.py and sicbo/signals.py; the build replaces each use of one of
their integer constants by its value, and drops the import when nothing else
of the module is used.

    fold(text, path) -> text     the folded source (same lines, same meaning)
    fold_file(src, dest)         the same, file to file
    constants(module) -> {name: int}

Used wherever the firmware is compiled: `sicbo deploy`, the unix-port test
runs (host_tools.mprun), the frozen image (board_config/manifest.py), the
test VMs' rig (host_tools.vm32) and the heap bench.

A use is replaced only when the syntax proves what it names, and anything the
folder cannot prove is refused with a FoldError (file, line, why), never
compiled as it happens to read:

- `E.NAME` (an attribute load on the bare name E) is folded when E is bound
  once in the whole module, by a top-level `from sicbo import events as E`,
  `from sicbo import events` or `import sicbo.events as E` (the same for
  every module of MODULES), placed before every use of E, and bound nowhere
  else: any other binding of E anywhere (a parameter, an assignment target of
  any kind, a for/with/except/comprehension/walrus/match target, a def or
  class name, another import, `global`/`nonlocal`, `del`) is refused, as is
  `E.NAME = ...` / `del E.NAME`, `setattr(E, ...)`, a star import, and
  `globals()`/`locals()`/`vars()`/`exec`/`eval` (names bound out of sight)
  in a module that folds. NAME must exist in the module: an integer constant
  is folded, any other name (a tuple, a function) is left as it is and keeps
  the import.
- `from sicbo.events import NAME [as N]`: the bare name N folds under the
  same rules.
- Refused too: such an import inside a block (a def, an if, a try),
  `import sicbo.events` without `as` (it binds `sicbo`), a relative import
  of one of MODULES, a parent package that binds the module's name.
- A module's constants: its top-level `NAME = const(INT)` / `NAME = INT`
  (negative and hex too), NAME bound nowhere else in it.
- An import is dropped (replaced by `pass`) when nothing of it is left, and
  only from a module whose top level only declares (its import runs nothing).
- The edit is made at the nodes' exact positions (comments, layout and line
  numbers kept), then checked: the folded text must parse to the original
  tree with exactly the proven replacements made, every node on its line.

The premise: the constants of MODULES are constant (nothing assigns them at
run time; MicroPython folds them inside their own module anyway).
"""

import ast
import functools
import os

from host_tools import DEVICE, REPO

# The modules whose integer constants are folded, as imported by the firmware.
MODULES = ("sicbo.events", "sicbo.signals", "sicbo.records", "sicbo.kinds")

# Names that could bind or read any global out of the syntax's sight.
_DYNAMIC = ("globals", "locals", "vars", "exec", "eval")


class FoldError(Exception):
    """A source the folder cannot prove it folds without changing its meaning."""

    def __init__(self, path, line, why):
        super().__init__("%s:%s: %s" % (path, line, why))
        self.path = path
        self.line = line
        self.why = why


# ---- what binds a name ----------------------------------------------------------

# Every string field of the syntax tree: which are bindings of a name. A node
# with a string field not listed here is syntax this folder does not know,
# and a module that uses it is refused rather than guessed at.
_NOT_BINDING = {
    ("Attribute", "attr"), ("keyword", "arg"), ("ImportFrom", "module"),
    ("alias", "name"), ("alias", "asname"), ("Constant", "kind"), ("Constant", "value"),
    ("MatchClass", "kwd_attrs"), ("Name", "id"),
    ("FunctionDef", "type_comment"), ("AsyncFunctionDef", "type_comment"),
    ("Assign", "type_comment"), ("For", "type_comment"), ("AsyncFor", "type_comment"),
    ("With", "type_comment"), ("AsyncWith", "type_comment"), ("arg", "type_comment"),
    ("TypeIgnore", "tag"),
}
_BINDING = {
    ("FunctionDef", "name"): "a def's name", ("AsyncFunctionDef", "name"): "a def's name",
    ("ClassDef", "name"): "a class name", ("arg", "arg"): "a parameter",
    ("ExceptHandler", "name"): "an except ... as target",
    ("Global", "names"): "a global declaration", ("Nonlocal", "names"): "a nonlocal declaration",
    ("MatchAs", "name"): "a match capture", ("MatchStar", "name"): "a match capture",
    ("MatchMapping", "rest"): "a match capture",
    ("TypeVar", "name"): "a type parameter", ("ParamSpec", "name"): "a type parameter",
    ("TypeVarTuple", "name"): "a type parameter",
}


def _store_kind(name, parents):
    """What kind of target a stored Name is (for the error message)."""
    node = name
    while True:
        parent = parents.get(node)
        if parent is None or isinstance(parent, (ast.stmt, ast.comprehension, ast.NamedExpr,
                                                 ast.withitem)):
            break
        node = parent
    return {
        ast.Assign: "an assignment target", ast.AugAssign: "an augmented assignment target",
        ast.AnnAssign: "an annotated assignment target", ast.For: "a for target",
        ast.AsyncFor: "a for target", ast.withitem: "a with ... as target",
        ast.comprehension: "a comprehension target", ast.NamedExpr: "a walrus target",
        ast.Delete: "a del",
    }.get(type(parent), "a target")


def _bindings(tree, parents, path):
    """{name: [(line, kind, node)]}: every binding of every name, in any scope."""
    out = {}

    def bind(name, line, kind, node):
        out.setdefault(name, []).append((line, kind, node))

    for node in ast.walk(tree):
        typ = type(node).__name__
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                bind(node.id, node.lineno, _store_kind(node, parents), node)
        elif isinstance(node, ast.Import):
            for a in node.names:
                bind(a.asname or a.name.split(".")[0], node.lineno, "an import", node)
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.name == "*":
                    bind("*", node.lineno, "a star import", node)
                else:
                    bind(a.asname or a.name, node.lineno, "an import", node)
        for field, value in ast.iter_fields(node):
            strings = [value] if isinstance(value, str) else (
                [v for v in value if isinstance(v, str)] if isinstance(value, list) else [])
            if not strings or (typ, field) in _NOT_BINDING:
                continue
            kind = _BINDING.get((typ, field))
            if kind is None:
                raise FoldError(path, getattr(node, "lineno", "?"),
                                "syntax the constant folder does not know (%s.%s)" % (typ, field))
            for s in strings:
                bind(s, getattr(node, "lineno", "?"), kind, node)
    return out


def _parents(tree):
    out = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


# ---- the folded modules ---------------------------------------------------------


def _module_path(module):
    base = os.path.join(DEVICE, *module.split("."))
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.exists(path):
            return path
    raise FoldError(os.path.relpath(base, REPO) + ".py", 0,
                    "no such module (%s, in host_tools.constfold.MODULES)" % module)


def _check_parent(module):
    """`from a.b import c` is the module a.b.c only if a/b/__init__.py binds no c."""
    if "." not in module:
        return
    parent, leaf = module.rsplit(".", 1)
    init = os.path.join(DEVICE, *parent.split("."), "__init__.py")
    if not os.path.exists(init):
        return
    with open(init, encoding="utf-8") as f:
        tree = ast.parse(f.read(), init)
    if leaf in _module_scope_names(tree):
        line = _bindings(tree, _parents(tree), init)[leaf][0][0]
        raise FoldError(os.path.relpath(init, REPO), line, "binds %s: `from %s import %s` would "
                        "not be the module %s, whose constants are folded"
                        % (leaf, parent, leaf, module))


def _int_value(node):
    """The int a constant's value says (INT, -INT, const(INT), const(-INT)), else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "const"
            and len(node.args) == 1 and not node.keywords):
        node = node.args[0]
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _declarative(node):
    """Whether a top-level statement only declares (runs no code when imported).
    Importing another of MODULES declares, if that module does (it may name
    its constants, as sicbo.records names the round states of sicbo.events)."""
    if isinstance(node, ast.Expr):
        return isinstance(node.value, ast.Constant)  # the docstring
    if isinstance(node, ast.ImportFrom):
        if node.module == "micropython" and [a.name for a in node.names] == ["const"]:
            return True
        return not node.level and all(
            "%s.%s" % (node.module, a.name) in MODULES
            and _module("%s.%s" % (node.module, a.name))[2] is None for a in node.names)
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        if node.value is None:
            return False
        pure = (ast.Constant, ast.Name, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp,
                ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice,
                ast.Starred, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)
        for sub in ast.walk(node.value):
            if isinstance(sub, ast.Call):
                if not (isinstance(sub.func, ast.Name) and sub.func.id == "const"):
                    return False
            elif isinstance(sub, ast.Attribute):
                # a constant of an imported module (E.ST_IDLE): a read, no code
                if not isinstance(sub.value, ast.Name):
                    return False
            elif not isinstance(sub, pure):
                return False
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return all(isinstance(t, ast.Name) for t in targets)
    if isinstance(node, ast.FunctionDef):
        return not node.decorator_list and all(
            isinstance(d, ast.Constant) for d in node.args.defaults + node.args.kw_defaults
            if d is not None)
    return False


def _module_scope_names(tree):
    """The names a module's own scope binds: its attributes."""
    names = set()
    todo = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            todo.extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(names)


@functools.lru_cache(maxsize=None)
def _module(module):
    """(constants {name: int}, every top-level name, (line, why) of the first
    statement that runs code on import, or None), of a module of MODULES."""
    path = _module_path(module)
    _check_parent(module)
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    binds = _bindings(tree, _parents(tree), path)
    const_bound = binds.get("const", [])
    const_ok = len(const_bound) == 1 and isinstance(const_bound[0][2], ast.ImportFrom) and (
        const_bound[0][2].module == "micropython")
    names = _module_scope_names(tree)
    values = {}
    effect = None
    for node in tree.body:
        if effect is None and not _declarative(node):
            effect = (node.lineno, "%s:%d runs code when imported" % (
                os.path.relpath(path, REPO), node.lineno))
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        uses_const = isinstance(node.value, ast.Call)
        value = _int_value(node.value)
        # A constant is bound once in its module, and const() is micropython's.
        if value is not None and len(binds.get(name, ())) == 1 and (const_ok or not uses_const):
            values[name] = value
    return values, names, effect


def constants(module):
    """{name: int} of a module's top-level `NAME = const(INT)` / `NAME = INT`
    (negative and hex too), each bound once in its module."""
    return dict(_module(module)[0])


# ---- the fold ------------------------------------------------------------------


def _imports(tree, path):
    """(aliases {name: (module, import node)}, direct {name: (module, NAME, node)})
    of MODULES, refusing the forms the fold cannot follow."""
    top = set(map(id, tree.body))
    leaves = {m.rsplit(".", 1)[-1] for m in MODULES}
    aliases = {}
    direct = {}

    def at_top(node, what):
        if id(node) not in top:
            raise FoldError(path, node.lineno, "%s is imported inside a block: import it once, "
                            "at the module's top level, for its constants to be folded" % what)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in MODULES:
                    if not a.asname:
                        raise FoldError(path, node.lineno, "`import %s` binds `%s`: write "
                                        "`from %s import %s`" % ((a.name, a.name.split(".")[0])
                                                                 + tuple(a.name.rsplit(".", 1))))
                    at_top(node, a.name)
                    aliases[a.asname] = (a.name, node)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                mentioned = set((node.module or "").split(".")) | {a.name for a in node.names}
                if mentioned & leaves:
                    raise FoldError(path, node.lineno, "a relative import of %s: import it "
                                    "absolutely (%s) for its constants to be folded"
                                    % (", ".join(sorted(mentioned & leaves)), " / ".join(MODULES)))
                continue
            for a in node.names:
                full = "%s.%s" % (node.module, a.name)
                if full in MODULES:
                    at_top(node, full)
                    aliases[a.asname or a.name] = (full, node)
                elif node.module in MODULES:
                    if a.name == "*":
                        raise FoldError(path, node.lineno, "a star import of %s: import the "
                                        "names it uses" % node.module)
                    values, names, _effect = _module(node.module)
                    if a.name not in names:
                        raise FoldError(path, node.lineno, "%s has no %s" % (node.module, a.name))
                    if a.name in values:
                        at_top(node, node.module)
                        direct[a.asname or a.name] = (node.module, a.name, node)
    return aliases, direct


def _before(a, b):
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


def _plan(tree, path):
    """({node: the int it is replaced by}, {import node: [its aliases kept]})
    for the imports that lose a name."""
    aliases, direct = _imports(tree, path)
    if not aliases and not direct:
        return {}, {}
    parents = _parents(tree)
    binds = _bindings(tree, parents, path)
    if "*" in binds:
        raise FoldError(path, binds["*"][0][0], "a star import in a module that folds constants "
                        "(it could bind any name)")
    for name in _DYNAMIC:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == name:
                raise FoldError(path, node.lineno, "%s in a module that folds constants "
                                "(a name could be bound out of sight)" % name)
    imported = [(name, v[0], v[-1]) for name, v in list(aliases.items()) + list(direct.items())]
    for name, module, imp in imported:
        for line, kind, node in binds[name]:
            if node is not imp:
                raise FoldError(path, line, "%s rebinds %s, bound to %s by the import on "
                                "line %d: rename one" % (kind, name, module, imp.lineno))
    replace = {}
    used = set()  # alias or direct names that something still needs
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        if node.id in aliases:
            module, imp = aliases[node.id]
            if not _before(imp, node):
                raise FoldError(path, node.lineno, "%s used before its import" % node.id)
            parent = parents.get(node)
            if not (isinstance(parent, ast.Attribute) and parent.value is node):
                call = parents.get(parent) if isinstance(parent, ast.keyword) else parent
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                        and call.func.id in ("setattr", "delattr")):
                    raise FoldError(path, node.lineno, "%s(%s, ...) changes %s, whose constants "
                                    "are folded" % (call.func.id, node.id, module))
                used.add(node.id)
                continue
            if not isinstance(parent.ctx, ast.Load):
                raise FoldError(path, node.lineno, "%s.%s is assigned or deleted: %s's constants "
                                "are folded" % (node.id, parent.attr, module))
            values, names, _effect = _module(module)
            if parent.attr in values:
                replace[parent] = values[parent.attr]
            elif parent.attr in names or (parent.attr.startswith("__")
                                          and parent.attr.endswith("__")):
                used.add(node.id)
            else:
                raise FoldError(path, node.lineno, "%s has no %s (%s.%s)"
                                % (module, parent.attr, node.id, parent.attr))
        elif node.id in direct:
            module, name, imp = direct[node.id]
            if not _before(imp, node):
                raise FoldError(path, node.lineno, "%s used before its import" % node.id)
            replace[node] = _module(module)[0][name]
    kept = {}
    for imp in {id(v[-1]): v[-1] for v in list(aliases.values()) + list(direct.values())}.values():
        folded = set(n for n, v in aliases.items() if v[1] is imp and n not in used)
        folded |= set(n for n, v in direct.items() if v[2] is imp)
        names = [a for a in imp.names if (a.asname or a.name.split(".")[0]) not in folded]
        if len(names) == len(imp.names):
            continue
        for n in folded:
            module = aliases[n][0] if n in aliases else direct[n][0]
            effect = _module(module)[2]
            if effect:
                raise FoldError(path, imp.lineno, "cannot drop the import of %s: %s"
                                % (module, effect[1]))
        kept[imp] = names
    return replace, kept


def _value_node(value, at):
    """The node the folded text of `value` parses to."""
    if value < 0:
        node = ast.UnaryOp(op=ast.USub(), operand=ast.copy_location(ast.Constant(value=-value), at))
    else:
        node = ast.Constant(value=value)
    return ast.copy_location(node, at)


class _Replace(ast.NodeTransformer):
    """The original tree with the proven replacements made, as nodes."""

    def __init__(self, replace, kept):
        self.replace = replace
        self.kept = kept

    def visit(self, node):
        if node in self.replace:
            return _value_node(self.replace[node], node)
        if node in self.kept:
            if not self.kept[node]:
                return ast.copy_location(ast.Pass(), node)
            node.names = self.kept[node]
            return node
        return self.generic_visit(node)


def _value_text(value, parent, node):
    if value < 0 or (isinstance(parent, ast.Attribute) and parent.value is node):
        return "(%d)" % value  # -1 ** 2, 2.bit_length()
    return "%d" % value


def _import_text(imp, names):
    if not names:
        return "pass"
    if isinstance(imp, ast.Import):
        return "import " + ", ".join(a.name + (" as " + a.asname if a.asname else "")
                                     for a in names)
    return "from %s import %s" % (imp.module, ", ".join(
        a.name + (" as " + a.asname if a.asname else "") for a in names))


def _edits(tree, replace, kept):
    """[(start line, start col, end line, end col, text, note)]: UTF-8 columns,
    as ast gives them; the note is a comment for a reader of the folded text."""
    parents = _parents(tree)
    edits = []
    for node, value in replace.items():
        edits.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset,
                      _value_text(value, parents.get(node), node), ""))
    for imp, names in kept.items():
        def full(a, imp=imp):
            return "%s.%s" % (imp.module, a.name) if isinstance(imp, ast.ImportFrom) else a.name

        gone = sorted({full(a) for a in imp.names} - {full(a) for a in names})
        edits.append((imp.lineno, imp.col_offset, imp.end_lineno, imp.end_col_offset,
                      _import_text(imp, names), "  # folded: " + ", ".join(gone)))
    return edits


def _apply(text, edits):
    """The text with each span replaced; a span over several lines keeps its
    line breaks (as continuation lines), so that every line keeps its number."""
    lines = text.encode("utf-8").split(b"\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    data = text.encode("utf-8")
    out = []
    pos = 0
    for l1, c1, l2, c2, rep, note in sorted(edits):
        a = starts[l1 - 1] + c1
        b = starts[l2 - 1] + c2
        if a < pos:
            raise AssertionError("overlapping edits")  # the plan never makes them
        rest = lines[l2 - 1][c2:].strip()
        rep = rep.encode("utf-8")
        # The note is a comment: never before code left on the line.
        note = note.encode("utf-8") if not rest or rest.startswith(b"#") else b""
        breaks = l2 - l1
        if not breaks:
            rep += note
        elif rep.startswith(b"from "):
            rep = rep.replace(b" import ", b" import (", 1) + note + b"\n" * breaks + b")"
        elif rep == b"pass" and note:
            rep += note + b"\n" * breaks
        else:
            rep += b"\\\n" * breaks
        out.append(data[pos:a])
        out.append(rep)
        pos = b
    out.append(data[pos:])
    return b"".join(out).decode("utf-8")


def _check(path, tree, folded_text, replace, kept):
    """Refuse unless the folded text parses to the original tree with exactly
    the proven replacements, every node on its original line."""
    try:
        folded = ast.parse(folded_text, path)
    except SyntaxError as e:
        raise FoldError(path, e.lineno, "the folded text does not parse (%s): a bug of "
                        "host_tools/constfold.py" % e.msg) from e
    expected = _Replace(replace, kept).visit(tree)
    if ast.dump(folded) != ast.dump(expected):
        line = "?"
        for a, b in zip(ast.walk(folded), ast.walk(expected), strict=False):
            if ast.dump(a) != ast.dump(b) and hasattr(b, "lineno"):
                line = b.lineno
        raise FoldError(path, line, "the folded text says something else than the proven "
                        "replacements: a bug of host_tools/constfold.py")
    for a, b in zip(ast.walk(folded), ast.walk(expected), strict=True):
        if not isinstance(a, ast.alias) and getattr(a, "lineno", None) != getattr(
                b, "lineno", None):
            raise FoldError(path, b.lineno, "the folded text moved a line (%s to line %s): "
                            "a bug of host_tools/constfold.py" % (type(b).__name__, a.lineno))


def fold(text, path="<source>"):
    """The source with the constants of MODULES folded (see the module doc);
    FoldError when the fold cannot be proven."""
    try:
        tree = ast.parse(text, path)
    except SyntaxError as e:
        raise FoldError(path, e.lineno, "does not parse: %s" % e.msg) from None
    replace, kept = _plan(tree, path)
    if not replace and not kept:
        return text
    folded = _apply(text, _edits(tree, replace, kept))
    _check(path, tree, folded, replace, kept)
    return folded


def fold_file(src, dest):
    """Write src's folded source to dest (a file for mpy-cross)."""
    with open(src, encoding="utf-8") as f:
        text = f.read()
    name = os.path.relpath(src, REPO) if os.path.abspath(src).startswith(REPO + os.sep) else src
    folded = fold(text, name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as f:
        f.write(folded)
    return dest
