"""The Kubernetes DRA CEL environment on cel-python (``celpy``): device selectors evaluated as
k8s.io/dynamic-resource-allocation/cel builds them.

A selector sees one variable, ``device``, with ``driver``, ``attributes["<domain>"].<name>`` and
``capacity["<domain>"].<name>`` (attributes and capacities published without a domain belong to the
driver's domain; an unknown domain is an empty map). cel-python supplies the language; the Kubernetes
libraries the DRA environment adds are registered here as functions with upstream's semantics:
``quantity()`` (compared by value), ``semver()``, the extended strings library (``lowerAscii`` ...),
the ``cel.bind`` macro, and (cel_library) lists, regex, IP/CIDR, sets and ``format``. Programs are transpiled to Python once per expression and cached.
"""

from __future__ import annotations

import copy
import logging
import re
import sys
from decimal import Decimal
from functools import total_ordering
from pathlib import Path
from typing import Mapping

import celpy
import celpy.evaluation as _evaluation
import lark
from celpy import celtypes as ct
from celpy.evaluation import CELEvalError

from kwhatif.api import cel_library
from kwhatif.api.quantity import QuantityError, parse_quantity

_LOG = logging.getLogger("celpy")
_LOG.addHandler(logging.NullHandler())
_LOG.propagate = False  # celpy logs every evaluation error it re-raises; ours are reported as statuses


class CelError(Exception):
    """A selector that cannot be compiled or that failed at run time (cel-go's error text where known)."""


# --- Kubernetes library types --------------------------------------------------------------------------

@total_ordering
class Quantity:
    """apiserver/pkg/cel.Quantity: equal and ordered by value (``81559Mi`` < ``80Gi``)."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Decimal) -> None:
        self.text, self.value = text, value

    def __eq__(self, other) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"quantity({self.text!r})"


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


def valid_semver(text: str) -> bool:
    return _SEMVER.match(text) is not None


class Semver:
    """apiserver/pkg/cel.Semver (blang/semver): strict 2.0.0 syntax; build metadata is not compared."""

    __slots__ = ("text", "major", "minor", "patch", "pre")

    def __init__(self, text: str) -> None:
        m = _SEMVER.match(text)
        if m is None:
            raise ValueError(f"invalid semantic version {text!r}")
        self.text = text
        self.major, self.minor, self.patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
        self.pre = tuple(m.group(4).split(".")) if m.group(4) else ()

    def compare(self, other: "Semver") -> int:
        for a, b in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if a != b:
                return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre or not other.pre:  # a release is greater than any of its pre-releases
            return 1 if not self.pre else -1
        for a, b in zip(self.pre, other.pre):
            if a == b:
                continue
            a_num, b_num = a.isdigit(), b.isdigit()
            if a_num and b_num:
                return -1 if int(a) < int(b) else 1
            if a_num != b_num:  # numeric identifiers have lower precedence
                return -1 if a_num else 1
            return -1 if a < b else 1
        return -1 if len(self.pre) < len(other.pre) else 1

    def __eq__(self, other) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __repr__(self) -> str:
        return f"semver({self.text!r})"


def _sign(n) -> int:
    return (n > 0) - (n < 0)


# cel-python transpiles a call to ``<module>.<qualname>`` of the registered function, evaluated in its
# own module's namespace: the functions are module-level and ``kwhatif`` is made visible there.
_evaluation.__dict__.setdefault("kwhatif", sys.modules["kwhatif"])


def cel_quantity(text):
    try:
        return Quantity(str(text), parse_quantity(str(text)))
    except QuantityError:
        raise ValueError("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None


def cel_isQuantity(text):
    return cel_library.accepts(parse_quantity, str(text))


def cel_semver(text, normalize=False):
    text = str(text)
    return Semver(_normalize_semver(text) if normalize else text)


def cel_isSemver(text, normalize=False):
    return cel_library.accepts(cel_semver, text, normalize)


def cel_compareTo(a, b):
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return ct.IntType(_sign(a.value - b.value))
    if isinstance(a, Semver) and isinstance(b, Semver):
        return ct.IntType(a.compare(b))
    raise TypeError("no such overload")


def cel_isGreaterThan(a, b):
    return ct.BoolType(cel_compareTo(a, b) > 0)


def cel_isLessThan(a, b):
    return ct.BoolType(cel_compareTo(a, b) < 0)


def _version(v) -> "Semver":
    if not isinstance(v, Semver):
        raise TypeError("no such overload")
    return v


def cel_major(v):
    return ct.IntType(_version(v).major)


def cel_minor(v):
    return ct.IntType(_version(v).minor)


def cel_patch(v):
    return ct.IntType(_version(v).patch)


def _quantity(q) -> "Quantity":
    if not isinstance(q, Quantity):
        raise TypeError("no such overload")
    return q


def cel_sign(q):
    return ct.IntType(_sign(_quantity(q).value))


def cel_isInteger(q):
    value = _quantity(q).value
    return ct.BoolType(value == value.to_integral_value() and abs(value) < 2 ** 63)


def cel_asInteger(q):
    if not cel_isInteger(q):
        raise ValueError("cannot convert value to integer")
    return ct.IntType(int(q.value))


def cel_asApproximateFloat(q):
    return ct.DoubleType(float(_quantity(q).value))


def _plus(q, other, sign: int) -> "Quantity":
    value = other.value if isinstance(other, Quantity) else Decimal(int(other))
    total = _quantity(q).value + sign * value
    return Quantity(str(total), total)


def cel_add(q, other):
    return _plus(q, other, 1)


def cel_sub(q, other):
    return _plus(q, other, -1)


def cel_lowerAscii(s):
    return ct.StringType("".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in str(s)))


def cel_upperAscii(s):
    return ct.StringType("".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in str(s)))


def cel_trim(s):
    return ct.StringType(str(s).strip())


def cel_replace(s, old, new, n=-1):
    return ct.StringType(str(s).replace(str(old), str(new), int(n)))


def cel_split(s, sep, n=-1):
    n = int(n)
    if n == 0:
        return ct.ListType([])
    parts = str(s).split(str(sep), n - 1) if n > 0 else str(s).split(str(sep))
    return ct.ListType([ct.StringType(p) for p in parts])


def cel_join(items, sep=""):
    return ct.StringType(str(sep).join(str(i) for i in items))


def cel_indexOf(s, sub, start=0):
    if isinstance(s, list):
        return cel_library.list_index_of(s, sub)
    return ct.IntType(str(s).find(str(sub), int(start)))


def cel_lastIndexOf(s, sub):
    if isinstance(s, list):
        return cel_library.list_last_index_of(s, sub)
    return ct.IntType(str(s).rfind(str(sub)))


def cel_substring(s, start, end=None):
    s, start = str(s), int(start)
    end = len(s) if end is None else int(end)
    if not 0 <= start <= end <= len(s):
        raise ValueError(f"index out of range: {start}")
    return ct.StringType(s[start:end])


def cel_charAt(s, i):
    s, i = str(s), int(i)
    if not 0 <= i <= len(s):
        raise ValueError(f"index out of range: {i}")
    return ct.StringType(s[i:i + 1])


#: CEL name -> implementation: the Kubernetes quantity and semver libraries, the extended strings library
#: and cel_library's lists, regex, IP, CIDR, sets and format, as the DRA environment has them (the
#: standard functions are cel-python's).
FUNCTIONS = {**cel_library.FUNCTIONS,
             **{name[len("cel_"):]: fn for name, fn in list(globals().items()) if name.startswith("cel_")}}


def _normalize_semver(text: str) -> str:
    """semver(s, true): a leading "v" dropped, missing minor/patch added, leading zeros removed."""
    text = text[1:] if text.startswith("v") else text
    core, sep, rest = re.split(r"([-+])", text, maxsplit=1) + ["", ""] if re.search(r"[-+]", text) else (text, "", "")
    parts = core.split(".")
    if len(parts) > 3 or not all(p.isdigit() for p in parts):
        return text
    parts += ["0"] * (3 - len(parts))
    return ".".join(str(int(p)) for p in parts) + sep + rest


# --- compilation -----------------------------------------------------------------------------------------

_MACROS_WITH_VARIABLE = frozenset({"all", "exists", "exists_one", "map", "filter"})


def _ident_name(tree) -> str | None:
    """The name when ``tree`` (an expr/member/primary chain) is nothing but one identifier."""
    while isinstance(tree, lark.Tree):
        if tree.data == "ident":
            return str(tree.children[0])
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


def _expand_bind(tree):
    """cel.bind(v, init, body) rewritten as body with every free ``v`` replaced by ``(init)``: the
    same value for these side-effect-free expressions, and cel-python has no bind macro."""
    for node in list(tree.iter_subtrees()):
        if node.data != "member" or len(node.children) != 1:
            continue
        call = node.children[0]
        if not (isinstance(call, lark.Tree) and call.data == "member_dot_arg" and len(call.children) == 3
                and str(call.children[1]) == "bind" and _ident_name(call.children[0]) == "cel"):
            continue
        args = call.children[2].children
        if len(args) != 3 or _ident_name(args[0]) is None:
            raise CelError("compilation failed: cel.bind() variable name must be a simple identifier")
        var, init, body = _ident_name(args[0]), _expand_bind(args[1]), _expand_bind(args[2])
        _substitute(body, var, init, type(node))
        node.children = [type(node)("primary", [type(node)("paren_expr", [body], node.meta)], node.meta)]
    return tree


def _substitute(tree, var: str, value, node_class) -> None:
    for i, child in enumerate(tree.children):
        if not isinstance(child, lark.Tree):
            continue
        if child.data == "primary" and len(child.children) == 1 and isinstance(child.children[0], lark.Tree) \
                and child.children[0].data == "ident" and str(child.children[0].children[0]) == var:
            tree.children[i] = node_class("primary", [node_class("paren_expr", [copy.deepcopy(value)], child.meta)],
                                          child.meta)
            continue
        if child.data == "member_dot_arg" and len(child.children) == 3 and str(child.children[1]) in _MACROS_WITH_VARIABLE \
                and _ident_name(child.children[2].children[0]) == var:
            _substitute(child.children[0], var, value, node_class)  # the macro's own variable shadows var
            continue
        _substitute(child, var, value, node_class)


_WHOLE_MAP_FUNCTIONS = _MACROS_WITH_VARIABLE | {"size", "format", "string"}


def _rewrite_namespaced(tree):
    """``ip.isCanonical(x)``, ``sets.contains(a, b)`` ...: cel-python reads ``ip`` as a variable; the call
    becomes one to the registered function ``ip_isCanonical``. ``<list>.min()`` becomes ``lists_min(<list>)``."""
    for node in list(tree.iter_subtrees()):
        if node.data != "member" or len(node.children) != 1:
            continue
        call = node.children[0]
        if isinstance(call, lark.Tree) and call.data == "member_dot_arg" and len(call.children) == 2 \
                and str(call.children[1]) == "min":  # <list>.min(): cel-python's parser takes it for a macro
            args = type(node)("exprlist", [call.children[0]], node.meta)
            name = lark.Token("IDENT", "lists_min")
            node.children = [type(node)("primary", [type(node)("ident_arg", [name, args], node.meta)], node.meta)]
            continue
        if not (isinstance(call, lark.Tree) and call.data == "member_dot_arg" and len(call.children) == 3):
            continue
        namespace, function = _ident_name(call.children[0]), str(call.children[1])
        if (namespace, function) not in cel_library.NAMESPACED:
            continue
        name = lark.Token("IDENT", f"{namespace}_{function}")
        node.children = [type(node)("primary", [type(node)("ident_arg", [name, call.children[2]], node.meta)],
                                    node.meta)]
    return tree


def _names_read(tree) -> frozenset[str] | None:
    """The attribute and capacity names the expression can read: every ``.name`` it selects and every
    string literal (an index, or the left side of ``in``). None when it may read names it does not spell
    out (a computed index, string concatenation, ``size()`` or a macro over a map): then only the device
    itself identifies its result."""
    names: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data == "addition_add":
            return None
        if node.data in ("member_dot_arg", "ident_arg", "dot_ident_arg"):
            ident = node.children[1] if node.data == "member_dot_arg" else node.children[0]
            if str(ident) in _WHOLE_MAP_FUNCTIONS:
                return None
        elif node.data == "member_dot":
            names.add(str(node.children[1]))
        elif node.data == "member_index" and _string_literal(node.children[1]) is None:
            return None
        elif node.data == "literal" and node.children[0].type in ("STRING_LIT", "MLSTRING_LIT"):
            text = _string_literal(node)
            if text is None:
                return None
            names.add(text)
    return frozenset(names)


def _string_literal(tree) -> str | None:
    """The value of a plain quoted string literal (the tree is nothing else), else None."""
    while isinstance(tree, lark.Tree) and len(tree.children) == 1:
        tree = tree.children[0]
    if not isinstance(tree, lark.Token) or tree.type != "STRING_LIT":
        return None
    text = str(tree)
    if len(text) < 2 or text[0] not in "'\"" or text[-1] != text[0] or "\\" in text or text[:3] in ('"""', "'''"):
        return None
    return text[1:-1]


class Program:
    """One compiled selector expression, and the attribute names it reads (None: it may read any)."""

    __slots__ = ("expression", "_runner", "names_read")

    def __init__(self, expression: str, runner, names_read: frozenset[str] | None = None) -> None:
        self.expression = expression
        self._runner = runner
        self.names_read = names_read

    def matches(self, device: "DeviceEnv") -> bool:
        """The expression's value for the device; CelError for a run-time error or a non-bool result."""
        if device.error:
            raise CelError(device.error)
        try:
            value = self._runner.evaluate({"device": device.value})
        except CELEvalError as exc:
            raise CelError(_error_text(exc)) from None
        except (ValueError, TypeError, KeyError, ArithmeticError, AttributeError) as exc:
            raise CelError(_error_text(exc)) from None
        if not isinstance(value, ct.BoolType):
            raise CelError(f"CEL result of type {type(value).__name__} could not be converted to bool")
        return bool(value)


def _error_text(exc: BaseException) -> str:
    """cel-go's wording for the run-time errors cel-python reports as nested exception arguments."""
    args = exc.args
    while len(args) >= 3 and isinstance(args[2], tuple) and args[2] and args[0] == "evaluation error":
        args = args[2]
    if len(args) >= 2 and args[1] is KeyError:
        key = args[2][0] if len(args) > 2 and isinstance(args[2], tuple) and args[2] else args[0]
        if args[0] == "unbound function":
            return f"no such function: {key}"
        return f"no such key: {key}"
    if len(args) >= 2 and args[1] is ZeroDivisionError:
        return "division by zero"
    if args and isinstance(args[0], str):
        if args[0].startswith("found no matching overload") or args[0] == "no such overload":
            return "no such overload"
        if args[0] == "return error for overflow" and len(args) > 2 and args[2]:
            return str(args[2][0])
        return args[0]
    return str(exc)


_CACHE: dict[str, Program | CelError] = {}
_ENV = None


def compile_selector(expression: str) -> Program:
    """The compiled program for ``expression`` (compiled once per process); CelError when it does not
    compile (cel-go's "compilation failed: ..." prefix, cel-python's detail)."""
    cached = _CACHE.get(expression)
    if cached is None:
        cached = _CACHE[expression] = _compile(expression)
    if isinstance(cached, CelError):
        raise cached
    return cached


def _install_parser() -> None:
    """cel-python's own LALR parser, built with lark's on-disk cache: building the tables takes ~0.6 s,
    loading them from the cache ~30 ms (cel-python builds it in debug mode, without the cache)."""
    from celpy.celparser import CELParser
    from celpy.evaluation import TranspilerTree

    if CELParser.CEL_PARSER is not None:
        return
    grammar = (Path(celpy.__file__).parent / "cel.lark").read_text()
    try:
        CELParser.CEL_PARSER = lark.Lark(grammar, parser="lalr", start="expr", g_regex_flags=re.M,
                                         lexer_callbacks={"IDENT": CELParser.ambiguous_literals},
                                         propagate_positions=True, maybe_placeholders=False, priority="invert",
                                         tree_class=TranspilerTree, cache=True)
    except OSError:  # no writable temporary directory: celpy builds its parser itself
        CELParser.CEL_PARSER = None


def _compile(expression: str) -> Program | CelError:
    global _ENV
    if _ENV is None:
        _install_parser()
        _ENV = celpy.Environment(runner_class=celpy.CompiledRunner)
    try:
        ast = _rewrite_namespaced(_expand_bind(_ENV.compile(expression)))
        names_read = _names_read(ast)
        runner = _ENV.program(ast, functions=FUNCTIONS)
    except CelError as exc:
        return exc
    except Exception as exc:  # celpy's parse errors (lark) and transpiler rejections
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return CelError(f"compilation failed: {first_line}")
    return Program(expression, runner, names_read)


# --- the device variable ---------------------------------------------------------------------------------

class DeviceEnv:
    """The ``device`` variable for one device (built once per device and run, shared by every selector)."""

    __slots__ = ("value", "error")

    def __init__(self, driver: str, attributes: Mapping | None, capacity: Mapping | None,
                 allow_multiple_allocations: bool = False) -> None:
        self.error: str | None = None
        attrs: dict[str, dict] = {}
        for name, attr in (attributes or {}).items():
            domain, ident = _qualified(name, driver)
            try:
                value = _attribute_value(attr)
            except ValueError as exc:
                self.error = f"attribute {name}: {exc}"
                value = None
            attrs.setdefault(domain, {})[ct.StringType(ident)] = value
        caps: dict[str, dict] = {}
        for name, cap in (capacity or {}).items():
            domain, ident = _qualified(name, driver)
            text = str((cap or {}).get("value", "0"))
            try:
                caps.setdefault(domain, {})[ct.StringType(ident)] = Quantity(text, parse_quantity(text))
            except QuantityError:
                self.error = f"capacity {name}: invalid quantity {text!r}"
        self.value = ct.MapType({
            ct.StringType("driver"): ct.StringType(driver),
            ct.StringType("attributes"): DomainMap({ct.StringType(d): ct.MapType(v) for d, v in attrs.items()}),
            ct.StringType("capacity"): DomainMap({ct.StringType(d): ct.MapType(v) for d, v in caps.items()}),
            # v1.36 (DRAConsumableCapacity): whether the device may be allocated to several claims
            ct.StringType("allowMultipleAllocations"): ct.BoolType(allow_multiple_allocations),
        })


class DomainMap(ct.MapType):
    """A map whose unknown keys read as an empty map (cel.newStringInterfaceMapWithDefault)."""

    def __init__(self, items) -> None:
        super().__init__(items)

    def __getitem__(self, key):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return _EMPTY

    def get(self, key, default=None):
        return self[key]


_EMPTY = ct.MapType({})


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(attr: Mapping):
    if not isinstance(attr, Mapping):
        raise ValueError("unsupported attribute value")
    if "int" in attr:
        return ct.IntType(int(attr["int"]))
    if "bool" in attr:
        return ct.BoolType(bool(attr["bool"]))
    if "string" in attr:
        return ct.StringType(str(attr["string"]))
    if "version" in attr:
        try:
            return Semver(str(attr["version"]))
        except ValueError as exc:
            raise ValueError(f"parse semantic version: {exc}") from None
    raise ValueError("unsupported attribute value")
