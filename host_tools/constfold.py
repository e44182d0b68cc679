"""Constants folded across modules, before mpy-cross compiles the firmware.

MicroPython folds a `const()` only inside the module that defines it: every
`E.ST_IDLE` elsewhere is an attribute lookup at run time, and the module
sicbo.events, its ~130 names interned and its globals, stays in the board's
heap for it (about 9 KiB with the qstr pool those names push it into, on the
ESP32). The firmware's sources keep the names, defined once in
sicbo/events.py and sicbo/signals.py; the build replaces each use of one of
their integer constants by its value, and drops the import when nothing else
of the module is used. What the board runs is then what the source says,
without the lookups.

    fold(text) -> text     the folded source (same lines, same meaning)

Used wherever the firmware is compiled: `sicbo deploy`, the unix-port test
runs (host_tools.mprun) and the frozen image (board_config/manifest.py).
"""

import ast
import functools
import io
import os
import tokenize

from host_tools import DEVICE

# The modules whose integer constants are folded, as imported by the firmware.
MODULES = ("sicbo.events", "sicbo.signals", "sicbo.records")


@functools.lru_cache(maxsize=None)
def constants(module):
    """{name: int} of a module's top-level `NAME = const(INT)` / `NAME = INT`."""
    path = os.path.join(DEVICE, *module.split(".")) + ".py"
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            continue
        v = node.value
        if (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "const"
                and len(v.args) == 1):
            v = v.args[0]
        if isinstance(v, ast.Constant) and type(v.value) is int:
            out[node.targets[0].id] = v.value
    return out


def _imports(tree):
    """(aliases, names, nodes): module alias -> constants; directly imported
    constant name -> value; the ImportFrom nodes that import them."""
    aliases = {}
    names = {}
    nodes = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level:
            continue
        hit = False
        for a in node.names:
            full = "%s.%s" % (node.module, a.name)
            if node.module == "sicbo" and full in MODULES:
                aliases[a.asname or a.name] = constants(full)
                hit = True
            elif node.module in MODULES and a.name in constants(node.module):
                names[a.asname or a.name] = constants(node.module)[a.name]
                hit = True
        if hit:
            nodes.append(node)
    return aliases, names, nodes


def _offsets(text):
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def fold(text):
    """The source with the constants of MODULES folded (see the module doc)."""
    tree = ast.parse(text)
    aliases, names, nodes = _imports(tree)
    if not aliases and not names:
        return text
    in_import = set()
    for node in nodes:
        for row in range(node.lineno, node.end_lineno + 1):
            in_import.add(row)
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    starts = _offsets(text)
    edits = []  # (start offset, end offset, replacement)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.type == tokenize.NAME and t.start[0] not in in_import:
            prev = toks[i - 1] if i else None
            after_dot = prev is not None and prev.type == tokenize.OP and prev.string == "."
            if (t.string in aliases and not after_dot and i + 2 < len(toks)
                    and toks[i + 1].string == "." and toks[i + 2].type == tokenize.NAME
                    and toks[i + 2].string in aliases[t.string]):
                end = toks[i + 2]
                edits.append((starts[t.start[0] - 1] + t.start[1],
                              starts[end.end[0] - 1] + end.end[1],
                              str(aliases[t.string][end.string])))
                i += 3
                continue
            if t.string in names and not after_dot:
                nxt = toks[i + 1] if i + 1 < len(toks) else None
                # not a keyword argument's name or an assignment target
                if not (nxt is not None and nxt.type == tokenize.OP and nxt.string == "="):
                    edits.append((starts[t.start[0] - 1] + t.start[1],
                                  starts[t.end[0] - 1] + t.end[1], str(names[t.string])))
        i += 1
    for a, b, rep in reversed(edits):
        text = text[:a] + rep + text[b:]
    return _drop_unused_imports(text)


def _drop_unused_imports(text):
    tree = ast.parse(text)
    aliases, names, nodes = _imports(tree)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    lines = text.splitlines(keepends=True)
    for node in sorted(nodes, key=lambda n: -n.lineno):
        keep = [a for a in node.names if (a.asname or a.name) in used
                or (a.asname or a.name) not in aliases and (a.asname or a.name) not in names]
        if len(keep) == len(node.names):
            continue
        indent = lines[node.lineno - 1][:node.col_offset]
        if keep:
            new = "%sfrom %s import %s\n" % (indent, node.module, ", ".join(
                a.name + (" as " + a.asname if a.asname else "") for a in keep))
        else:
            new = indent + "pass  # folded: %s\n" % node.module
        # The statement's lines become one (blank lines keep the numbering).
        span = node.end_lineno - node.lineno
        lines[node.lineno - 1:node.end_lineno] = [new] + ["\n"] * span
    return "".join(lines)


def fold_file(src, dest):
    """Write src's folded source to dest (a file for mpy-cross)."""
    with open(src, encoding="utf-8") as f:
        text = f.read()
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as f:
        f.write(fold(text))
    return dest
