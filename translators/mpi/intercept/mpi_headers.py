"""Reads the prototypes of the MPI headers the interceptor is compiled
against, as text: MPICH's mpi.h with the prototypes of mpi_proto.h and
mpio.h it includes, or Open MPI's mpi.h, which holds its prototypes itself.

No compiler runs, and every type and parameter keeps the headers' own
spelling. Prototypes span lines, start with export macros (Open MPI's
OMPI_DECLSPEC) and end in attribute macros (MPICH_API_PUBLIC,
MPICH_ATTR_POINTER_WITH_TYPE_TAG(1,3), __mpi_interface_deprecated__("..."),
...), which are dropped; the #if/#ifdef blocks are honoured by a small
evaluator (mpio.h declares MPI_Info_* and MPI_File_{get,set}_errhandler
again, for MPI libraries other than MPICH). Used by gen_wrappers.py.
"""

from __future__ import annotations

import os
import re
# MPICH: only these files contribute prototypes; mpi.h is read for its
# #defines. Open MPI (no mpi_proto.h): mpi.h declares everything.
MPICH_PROTOTYPE_HEADERS = ("mpi_proto.h", "mpio.h")
ENTRY_HEADER = "mpi.h"
# Export macros that may start a prototype.
EXPORT_MACROS = ("OMPI_DECLSPEC",)

IDENT = re.compile(r"[A-Za-z_]\w*")


class GenError(Exception):
    pass


# --------------------------------------------------------------------------
# Text helpers


def strip_comments(text: str) -> str:
    """Removes C and C++ comments, keeping newlines and string literals."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(" " + "\n" * text.count("\n", i, end))
            i = end
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "\"'":
            # A literal never spans lines (this also keeps C++14 digit
            # separators, 30'000, from swallowing the rest of the file).
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def logical_lines(text: str) -> list[str]:
    """Joins backslash-continued lines (multi-line #if conditions)."""
    lines, cur = [], ""
    for raw in text.split("\n"):
        if raw.endswith("\\"):
            cur += raw[:-1] + " "
            continue
        lines.append(cur + raw)
        cur = ""
    if cur:
        lines.append(cur)
    return lines


# --------------------------------------------------------------------------
# #if expressions: integers, defined(), ! ~ - + * / % << >> < > <= >= == !=
# & ^ | && || ?:. Unknown identifiers are 0 and unknown function-like
# macros (__has_attribute(...)) are 0, as for a compiler lacking them.

_TOKEN = re.compile(r"\s*(?:(\d+)[uUlL]*|(0[xX][0-9a-fA-F]+)[uUlL]*|([A-Za-z_]\w*)|"
                    r"(&&|\|\||<<|>>|<=|>=|==|!=|[-+*/%<>&^|!~?:()]))")

_BINARY = [
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
    ("<<", ">>"), ("+", "-"), ("*", "/", "%"),
]


class CondEval:
    def __init__(self, expr: str, macros: dict[str, int | None]):
        self.toks = []
        pos = 0
        expr = expr.strip()
        while pos < len(expr):
            m = _TOKEN.match(expr, pos)
            if not m or m.end() == pos:
                raise GenError(f"cannot evaluate #if expression: {expr!r}")
            pos = m.end()
            if m.group(1) is not None:
                self.toks.append(("num", int(m.group(1))))
            elif m.group(2) is not None:
                self.toks.append(("num", int(m.group(2), 16)))
            elif m.group(3) is not None:
                self.toks.append(("id", m.group(3)))
            else:
                self.toks.append(("op", m.group(4)))
        self.i = 0
        self.macros = macros
        self.expr = expr

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("end", None)

    def take(self, op=None):
        t = self.peek()
        if op is not None and t != ("op", op):
            raise GenError(f"expected {op!r} in #if expression: {self.expr!r}")
        self.i += 1
        return t

    def value(self) -> int:
        v = self.ternary()
        if self.peek()[0] != "end":
            raise GenError(f"trailing text in #if expression: {self.expr!r}")
        return v

    def ternary(self) -> int:
        c = self.binary(0)
        if self.peek() == ("op", "?"):
            self.take()
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return a if c else b
        return c

    def binary(self, level: int) -> int:
        if level == len(_BINARY):
            return self.unary()
        v = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in _BINARY[level]:
            op = self.take()[1]
            w = self.binary(level + 1)
            v = {
                "||": lambda: int(bool(v) or bool(w)), "&&": lambda: int(bool(v) and bool(w)),
                "|": lambda: v | w, "^": lambda: v ^ w, "&": lambda: v & w,
                "==": lambda: int(v == w), "!=": lambda: int(v != w),
                "<": lambda: int(v < w), ">": lambda: int(v > w),
                "<=": lambda: int(v <= w), ">=": lambda: int(v >= w),
                "<<": lambda: v << w, ">>": lambda: v >> w,
                "+": lambda: v + w, "-": lambda: v - w, "*": lambda: v * w,
                "/": lambda: int(v / w) if w else 0, "%": lambda: v % w if w else 0,
            }[op]()
        return v

    def unary(self) -> int:
        kind, val = self.peek()
        if kind == "op" and val in ("!", "~", "-", "+"):
            self.take()
            v = self.unary()
            return {"!": int(not v), "~": ~v, "-": -v, "+": v}[val]
        if kind == "op" and val == "(":
            self.take()
            v = self.ternary()
            self.take(")")
            return v
        if kind == "num":
            self.take()
            return val
        if kind == "id":
            self.take()
            if val == "defined":
                paren = self.peek() == ("op", "(")
                if paren:
                    self.take()
                name = self.take()
                if name[0] != "id":
                    raise GenError(f"bad defined() in #if expression: {self.expr!r}")
                if paren:
                    self.take(")")
                return int(name[1] in self.macros)
            if self.peek() == ("op", "("):
                depth = 0
                while True:
                    t = self.take()
                    if t[0] == "end":
                        raise GenError(f"unbalanced parentheses in #if: {self.expr!r}")
                    if t == ("op", "("):
                        depth += 1
                    elif t == ("op", ")"):
                        depth -= 1
                        if depth == 0:
                            return 0
            v = self.macros.get(val)
            return 1 if (val in self.macros and v is None) else (v or 0)
        raise GenError(f"cannot evaluate #if expression: {self.expr!r}")


# --------------------------------------------------------------------------
# Header reading


class HeaderReader:
    """Walks mpi.h and the headers it includes from its own directory,
    keeping the text of the prototype headers that survives the
    conditionals."""

    def __init__(self, include_dir: str, defines: dict[str, int | None]):
        self.dir = include_dir
        self.macros: dict[str, int | None] = dict(defines)
        if os.path.isfile(os.path.join(include_dir, MPICH_PROTOTYPE_HEADERS[0])):
            self.prototype_headers = MPICH_PROTOTYPE_HEADERS
        else:
            self.prototype_headers = (ENTRY_HEADER,)
        self.active_text: dict[str, list[str]] = {h: [] for h in self.prototype_headers}
        self.seen: set[str] = set()

    def read(self):
        entry = os.path.join(self.dir, ENTRY_HEADER)
        if not os.path.isfile(entry):
            raise GenError(f"{entry} not found: is --include-dir an MPI include directory?")
        self.walk(ENTRY_HEADER)
        for h in self.prototype_headers:
            if h not in self.seen:
                raise GenError(f"{ENTRY_HEADER} in {self.dir} does not include {h}")

    def walk(self, name: str):
        if name in self.seen:
            return
        self.seen.add(name)
        path = os.path.join(self.dir, name)
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = logical_lines(strip_comments(f.read()))
        # Each entry: (this branch active, some branch already taken, parent active)
        stack: list[list[bool]] = []
        active = True
        keep = self.active_text.get(name)
        for line in lines:
            s = line.strip()
            if not s.startswith("#"):
                if active and keep is not None:
                    keep.append(line)
                continue
            m = re.match(r"#\s*(\w+)\s*(.*)$", s)
            if not m:
                continue
            d, rest = m.group(1), m.group(2).strip()
            if d in ("if", "ifdef", "ifndef"):
                if not active:
                    stack.append([False, True, False])
                else:
                    cond = self.condition(d, rest)
                    stack.append([cond, cond, True])
                    active = cond
            elif d == "elif":
                top = self.top(stack, d, name)
                if top[2] and not top[1] and self.condition("if", rest):
                    top[0] = top[1] = True
                else:
                    top[0] = False
                active = top[0]
            elif d == "else":
                top = self.top(stack, d, name)
                top[0] = top[2] and not top[1]
                top[1] = True
                active = top[0]
            elif d == "endif":
                self.top(stack, d, name)
                stack.pop()
                active = stack[-1][0] if stack else True
            elif not active:
                continue
            elif d == "define":
                dm = re.match(r"([A-Za-z_]\w*)(\(?)\s*(.*)$", rest)
                if dm:
                    value = None
                    if not dm.group(2):
                        num = re.fullmatch(r"\(?\s*(\d+)[uUlL]*\s*\)?", dm.group(3).strip())
                        value = int(num.group(1)) if num else None
                    self.macros[dm.group(1)] = value
            elif d == "undef":
                self.macros.pop(rest.split()[0] if rest else "", None)
            elif d == "include":
                im = re.match(r'["<]([^">]+)[">]', rest)
                if im and os.path.isfile(os.path.join(self.dir, im.group(1))):
                    self.walk(im.group(1))
        if stack:
            raise GenError(f"{path}: unterminated #if")

    @staticmethod
    def top(stack, d, name):
        if not stack:
            raise GenError(f"{name}: #{d} without #if")
        return stack[-1]

    def condition(self, d: str, rest: str) -> bool:
        if d == "ifdef":
            return rest.split()[0] in self.macros
        if d == "ifndef":
            return rest.split()[0] not in self.macros
        return bool(CondEval(rest, self.macros).value())


# --------------------------------------------------------------------------
# Prototypes


def split_statements(text: str) -> list[str]:
    """Top-level declarations, split at ';' outside parentheses and braces."""
    out, cur, depth = [], [], 0
    for c in text:
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        if c == ";" and depth == 0:
            out.append(" ".join("".join(cur).split()))
            cur = []
        else:
            cur.append(c)
    return out


def matching_paren(s: str, open_idx: int) -> int:
    depth = 0
    for i in range(open_idx, len(s)):
        if s[i] == "(":
            depth += 1
        elif s[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise GenError(f"unbalanced parentheses in: {s}")


def split_params(params: str) -> list[str]:
    out, cur, depth = [], [], 0
    for c in params:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


# Words that can end a type without being a parameter name.
TYPE_WORDS = {
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    "_Bool", "bool", "const", "volatile", "restrict", "__restrict", "struct", "enum", "union",
}
QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "struct", "enum", "union"}


def parse_param(text: str, index: int) -> dict:
    """Splits one parameter into its type and name, naming unnamed ones."""
    text = " ".join(text.split())
    if text == "...":
        return {"decl": "...", "type": "...", "name": None}
    # Function pointer parameter: T (*name)(args)
    fp = re.match(r"^(.*?\(\s*\*\s*)([A-Za-z_]\w*)?(\s*\).*)$", text)
    if fp and "(" in text:
        name = fp.group(2) or f"arg{index}"
        decl = fp.group(1) + name + fp.group(3)
        return {"decl": decl, "type": fp.group(1) + fp.group(3), "name": name}
    arrays = ""
    am = re.search(r"(\s*\[[^\]]*\])+$", text)
    if am:
        arrays = am.group(0).strip()
        text = text[:am.start()].rstrip()
    words = IDENT.findall(text)
    last = re.search(r"([A-Za-z_]\w*)$", text)
    core = [w for w in words if w not in QUALIFIERS]
    named = bool(last) and last.group(1) not in TYPE_WORDS and (
        len(core) >= 2 or text[:last.start()].rstrip().endswith("*"))
    if named:
        name = last.group(1)
        type_text = text[:last.start()].rstrip()
    else:
        name = f"arg{index}"
        type_text = text
    sep = "" if type_text.endswith("*") else " "
    decl = f"{type_text}{sep}{name}{arrays}"
    return {"decl": decl, "type": (type_text + (" " + arrays if arrays else "")).strip(),
            "name": name}


PROTO = re.compile(r"^(?P<ret>[A-Za-z_][\w\s\*]*?)\s*\b(?P<name>MPI_\w+)\s*\(")
PPROTO = re.compile(r"^[A-Za-z_][\w\s\*]*?\s*\bPMPI_(\w+)\s*\(")
# What may follow the parameter list: attribute macros, with arguments or not.
TRAILER = re.compile(r"^(?:\s*[A-Za-z_]\w*(?:\s*\([^()]*\))?)*\s*$")


def parse_prototypes(reader: HeaderReader):
    functions: dict[str, dict] = {}
    pmpi: set[str] = set()
    for header in reader.prototype_headers:
        for stmt in split_statements("\n".join(reader.active_text[header])):
            stmt = stmt.strip()
            while stmt.startswith("}"):
                stmt = stmt[1:].strip()
            for macro in EXPORT_MACROS:
                if re.match(macro + r"\b", stmt):
                    stmt = stmt[len(macro):].strip()
            if not stmt or stmt.startswith("typedef") or stmt.startswith("extern"):
                continue
            pm = PPROTO.match(stmt)
            if pm:
                pmpi.add("MPI_" + pm.group(1))
                continue
            m = PROTO.match(stmt)
            if not m:
                continue
            ret = " ".join(m.group("ret").split())
            name = m.group("name")
            if ret.split()[0] in ("static", "inline"):
                continue
            open_idx = m.end() - 1
            close_idx = matching_paren(stmt, open_idx)
            trailer = stmt[close_idx + 1:]
            if not TRAILER.match(trailer):
                raise GenError(f"{header}: unexpected text after the parameters of {name}: "
                               f"{trailer.strip()!r}")
            raw = stmt[open_idx + 1:close_idx].strip()
            params = [] if raw in ("", "void") else [
                parse_param(p, i + 1) for i, p in enumerate(split_params(raw))]
            varargs = bool(params) and params[-1]["decl"] == "..."
            if varargs and len(params) == 1:
                raise GenError(f"{header}: {name} has only '...' parameters")
            if name in functions:
                # Declared twice (possible across headers): the declarations
                # must agree, or the build would not compile anyway.
                if [p["type"] for p in functions[name]["parameters"]] != [p["type"] for p in params]:
                    raise GenError(f"{name} is declared twice with different parameters")
                continue
            functions[name] = {
                "name": name,
                "return_type": ret,
                "parameters": params,
                "varargs": varargs,
                "header": header,
            }
    return functions, pmpi
