"""Graph values handed to the module's functions, as TensorFlow's own tutorial
(``fully_connected_feed.py``) wrote its program: placeholders a function makes
(``images_pl, labels_pl = placeholder_inputs(batch_size)``), feed dicts a function fills
(``feed_dict = fill_feed_dict(data_set, images_pl, labels_pl)``) and graph values passed
beside the session (``do_eval(sess, eval_correct, images_pl, labels_pl, data_set)``).

A made placeholder becomes a parameter of the build function like any other (its spec is
the function's ``tf.placeholder`` call, read with the call's arguments). A graph value
handed to a function becomes its graph name, a string, where the function is proven to use
that parameter only as a feed dict's key or as a fetch of the session it is given: the
program takes both by name (``program.run(eval_correct, **feed_dict)``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from migrate.codemod.cstutil import nodes_of, walk

from .syntax import PLACEHOLDERS, _collect, _ids, feed_dict_of, fetched_elements, is_run

# argument expressions a made placeholder's spec may take in place of the parameter: no
# calls (the function call that evaluated them once is gone), nothing bound or awaited
_NOT_SIMPLE = (cst.Call, cst.Lambda, cst.NamedExpr, cst.Await, cst.Yield, cst.ListComp,
               cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass
class NameFunction:
    """A module function graph values are handed to by name."""
    function: cst.FunctionDef
    session: Optional[str]                                   # its session parameter, if any
    roles: Dict[str, Set[str]] = field(default_factory=dict)  # parameter -> {"key", "fetch"}
    feeds: bool = False                                      # it returns a feed dict of them


@dataclass
class HandedNames:
    """What the program's block and its functions hand over by name."""
    functions: Dict[str, NameFunction] = field(default_factory=dict)
    args: List[Tuple[cst.Name, str]] = field(default_factory=list)  # graph value -> its name
    feeds: Set[int] = field(default_factory=set)  # feed arguments a function made (``**feed``)
    fetched: List[str] = field(default_factory=list)  # graph names handed to be fetched


def simple_params(function: cst.FunctionDef) -> Optional[List[cst.Param]]:
    """Its parameters, when all are plain ones (no ``*``, ``**``, keyword- or positional-only)."""
    params = function.params
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg \
            or params.posonly_params or params.kwonly_params:
        return None
    return list(params.params)


def bound_args(function: cst.FunctionDef, call: cst.Call) -> Optional[Dict[str, cst.BaseExpression]]:
    """Parameter -> the expression the call gives it (its default where it gives none);
    None when the call cannot be read that way (``*args``, an unknown keyword)."""
    params = simple_params(function)
    if params is None or any(a.star for a in call.args):
        return None
    names = [p.name.value for p in params]
    given: Dict[str, cst.BaseExpression] = {}
    for i, a in enumerate(call.args):
        name = a.keyword.value if a.keyword is not None else (names[i] if i < len(names) else None)
        if name not in names or name in given:
            return None
        given[name] = a.value
    for p in params:
        if p.name.value not in given:
            if p.default is None:
                return None
            given[p.name.value] = p.default
    return given


class _Substitute(cst.CSTTransformer):
    """A placeholder call of a function, read with the call's arguments in place of its
    parameters (``shape=(batch_size, 784)`` -> ``shape=(FLAGS.batch_size, 784)``)."""

    def __init__(self, given: Dict[str, cst.BaseExpression]) -> None:
        self.given = given

    def leave_Name(self, original_node, updated_node):
        value = self.given.get(original_node.value)
        if value is None:
            return updated_node
        if updated_node.lpar and not value.lpar:  # `shape=(batch_size)` keeps its parentheses
            return value.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString,
                                  cst.Subscript, cst.Tuple, cst.List)) and not value.lpar:
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return value

    def leave_Arg(self, original_node, updated_node):  # a keyword is no parameter
        return updated_node.with_changes(keyword=original_node.keyword)

    def leave_Attribute(self, original_node, updated_node):  # nor an attribute's name
        return updated_node.with_changes(attr=original_node.attr)


class Names:
    """TFM501 mixin: graph values made by, and handed to, the module's functions."""

    def _module_functions(self) -> Dict[str, cst.FunctionDef]:
        """The module's functions by name (read once per file)."""
        module = self.ctx.module
        cached = getattr(self, "_functions_of", None)
        if cached is None or cached[0] is not module:
            cached = self._functions_of = (module, {s.name.value: s for s in module.body
                                                    if isinstance(s, cst.FunctionDef)})
        return dict(cached[1])

    # -- made placeholders -------------------------------------------------------------
    def _placeholder_maker(self, function: cst.FunctionDef) -> Optional[List[cst.Call]]:
        """``def placeholder_inputs(batch_size): x = tf.placeholder(...); y = ...; return x,
        y``: the placeholder calls in the order it returns them; None if it does anything
        else (a docstring aside)."""
        if not isinstance(function.body, cst.IndentedBlock) or function.decorators \
                or simple_params(function) is None:
            return None
        body = list(function.body.body)
        if body and isinstance(body[0], cst.SimpleStatementLine) and isinstance(body[0].body[0], cst.Expr) \
                and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            body = body[1:]
        if len(body) < 2 or not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 for s in body):
            return None
        made: Dict[str, cst.Call] = {}
        for stmt in body[:-1]:
            small = stmt.body[0]
            if not isinstance(small, cst.Assign) or len(small.targets) != 1 \
                    or not isinstance(small.targets[0].target, cst.Name) \
                    or self._call_name(small.value) not in PLACEHOLDERS \
                    or small.targets[0].target.value in made:
                return None
            made[small.targets[0].target.value] = small.value
        last = body[-1].body[0]
        if not isinstance(last, cst.Return) or last.value is None:
            return None
        returned = last.value.elements if isinstance(last.value, cst.Tuple) else [last.value]
        names = [getattr(e, "value", e) for e in returned]
        if not all(isinstance(n, cst.Name) and n.value in made for n in names) \
                or len({n.value for n in names}) != len(made):
            return None
        reads = {k for call in made.values() for _, k in _collect(call).reads}
        if reads & set(made):  # one placeholder read by another's call: not this form
            return None
        return [made[n.value] for n in names]

    def _made_placeholders(self, stmt, self_name, graph_keys,
                           block_binds) -> Optional[Tuple[cst.FunctionDef, List[Tuple[str, cst.Call]]]]:
        """``images_pl, labels_pl = placeholder_inputs(FLAGS.batch_size)``: (the function,
        [(key, its placeholder call read with the call's arguments)]), or None. Arguments
        must be plain values not made by the graph (the spec is read where the program is
        made), and what the calls read must not be the block's own names there."""
        if self_name or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
                or not isinstance(stmt.body[0], cst.Assign) or len(stmt.body[0].targets) != 1:
            return None
        call = stmt.body[0].value
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
            return None
        function = self._module_functions().get(call.func.value)
        made = self._placeholder_maker(function) if function is not None else None
        if made is None:
            return None
        target = stmt.body[0].targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(function.body.body[-1].body[0].value, cst.Tuple):
            names = [e.value for e in target.elements]
        else:
            names = [target] if len(made) == 1 else []
        if len(names) != len(made) or not all(isinstance(n, cst.Name) for n in names):
            return None
        given = bound_args(function, call)
        if given is None or any(next(nodes_of(v, _NOT_SIMPLE), None) is not None for v in given.values()):
            return None
        if {k for v in given.values() for _, k in _collect(v).reads} & graph_keys:
            return None
        params = set(given)
        outer = {k for c in made for _, k in _collect(c).reads} - params  # module names it reads
        if outer & block_binds:
            return None
        return function, [(n.value, made[i].visit(_Substitute(given))) for i, n in enumerate(names)]

    # -- graph values handed by name ---------------------------------------------------
    def _handed_names(self, plan, block, helpers: Dict[str, str]) -> HandedNames:
        """The module functions graph values are handed to by name, and the handing.
        ``block``: the program's own statements past the graph (no function definitions);
        ``helpers``: the functions its session is passed to -> their session parameters.
        A function qualifies when every call of it is in the block or in another such
        function, each of its name parameters is given a graph value there (a placeholder
        where the function uses it as a feed key) or such a parameter of its caller, and
        the function uses it only as a key of a feed dict it feeds or returns, as a fetch
        of its session's runs, or hands it on the same way. A function returning a feed
        dict must be called where the result is only fed."""
        functions = self._module_functions()
        found: Dict[str, NameFunction] = {}
        uses: Dict[str, _Uses] = {}
        for name, function in functions.items():
            params = simple_params(function)
            if params is None or not isinstance(function.body, cst.IndentedBlock):
                continue
            session = helpers.get(name)
            reader = _Uses({p.name.value for p in params} - {session}, session, functions)
            walk(function.body, reader)
            reader.finish()
            if reader.roles or reader.passes:
                found[name] = NameFunction(function, session, {}, reader.returned)
                uses[name] = reader
        if not found:
            return HandedNames()
        inside: Set[int] = set()
        for s in block:
            inside |= _ids(s)
        homes: Dict[int, str] = {}  # id(call) -> the function of `found` holding it
        for name, entry in found.items():
            for c in nodes_of(entry.function.body, cst.Call):
                homes[id(c)] = name
        module = _collect(self.ctx.module)
        before = None
        while True:
            for _ in range(len(found) + 1):  # roles handed on, as the callees' roles stand
                for name, entry in found.items():
                    entry.roles = _roles(uses[name], found)
            result = HandedNames(found)
            gone = [name for name, entry in found.items() if not entry.roles or not self._handable(
                name, entry, module, inside, homes, block, plan, result)]
            for name in gone:
                del found[name]
            now = {name: {p: frozenset(r) for p, r in e.roles.items()} for name, e in found.items()}
            if not gone and now == before:
                return result
            before = now

    def _handable(self, name, entry: NameFunction, module, inside, homes, block, plan,
                  result: HandedNames) -> bool:
        """Whether ``name``'s calls hand it graph values by name (see ``_handed_names``);
        records the program's graph values so handed, and the feeds it makes, in ``result``."""
        found = result.functions
        calls = [c for c in module.calls if isinstance(c.func, cst.Name) and c.func.value == name]
        refs = [n for n, k in module.reads if k == name and n is not entry.function.name]
        if not calls or len(refs) != len(calls):
            return False  # handed on as a value, or never called
        args = []
        for call in calls:
            given = bound_args(entry.function, call)
            home = homes.get(id(call))
            if given is None or (id(call) not in inside and home not in found):
                return False  # called from outside the program
            for param, roles in entry.roles.items():
                arg = given.get(param)
                if not isinstance(arg, cst.Name) or not any(arg is a.value for a in call.args):
                    return False
                if home is not None:
                    if arg.value not in found[home].roles:
                        return False
                elif arg.value not in plan.graph_keys or (
                        "key" in roles and arg.value not in plan.placeholders):
                    return False
                else:
                    args.append((arg, arg.value, "fetch" in roles))
            if entry.feeds:
                scope = [found[home].function.body] if home is not None else block
                session = found[home].session if home is not None else plan.session
                if session is None or id(call) not in _Feeds.read(scope, session, {name}).calls:
                    return False
        result.args += [(arg, key) for arg, key, _ in args]
        result.fetched = list(dict.fromkeys([*result.fetched, *(key for _, key, fetched in args if fetched)]))
        if entry.feeds:
            for scope, session in [(block, plan.session),
                                   *(([e.function.body], e.session) for e in found.values() if e.session)]:
                result.feeds |= _Feeds.read(scope, session, {name}).args
        return True


def _roles(reader: "_Uses", found: Dict[str, NameFunction]) -> Dict[str, Set[str]]:
    """A function's name parameters and their roles: its own uses, and the roles of the
    parameters it hands them to. A parameter also used otherwise (or handed to one that is
    no name parameter) is none."""
    other = set(reader.other)
    roles = {p: set(r) for p, r in reader.roles.items()}
    for param, (callee, target) in reader.passes:
        if callee in found and target in found[callee].roles:
            roles.setdefault(param, set()).update(found[callee].roles[target])
        else:
            other.add(param)
    return {p: r for p, r in roles.items() if p not in other}


def _skip_keyword(visitor, node: cst.Arg) -> bool:
    """Visit an argument's value only (its keyword is no name read)."""
    walk(node.value, visitor)
    return False


class _Uses(cst.CSTVisitor):
    """How a function's parameters are used: as a feed key, as a fetch of its session's
    runs, handed to another function of the module, or otherwise."""

    def __init__(self, params: Set[str], session: Optional[str], functions) -> None:
        self.params, self.session, self.functions = params, session, functions
        self.roles: Dict[str, Set[str]] = {}
        self.other: Set[str] = set()
        self.passes: List[Tuple[str, Tuple[str, str]]] = []
        self.returned = False
        self._handled: Set[int] = set()
        self._fed: Set[int] = set()           # dict literals fed to a run
        self._dicts: List[Tuple[cst.Dict, List[str]]] = []  # other dicts keyed by parameters
        self._bound: Dict[str, List[int]] = {}  # local name -> ids of the dicts bound to it
        self._returned: Set[int] = set()       # ids of dicts returned (or of their names)
        self._fine: Dict[str, int] = {}        # local name -> its reads as a return or a feed
        self._count: Dict[str, int] = {}       # every name's occurrences

    def _role(self, node, role: str) -> bool:
        if isinstance(node, cst.Name) and node.value in self.params:
            self.roles.setdefault(node.value, set()).add(role)
            self._handled.add(id(node))
            return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self.session and is_run(node, self.session):
            if isinstance(node.args[0].value, (cst.Name, cst.List, cst.Tuple)):
                for element in fetched_elements(node):
                    self._role(element, "fetch")
            feed = feed_dict_of(node)
            if isinstance(feed, cst.Dict):
                self._fed.add(id(feed))
                for e in feed.elements:
                    if isinstance(e, cst.DictElement):
                        self._role(e.key, "key")
            elif isinstance(feed, cst.Name):
                self._fine[feed.value] = self._fine.get(feed.value, 0) + 1
        elif isinstance(func, cst.Name) and func.value in self.functions:
            params = simple_params(self.functions[func.value]) or []
            names = [p.name.value for p in params]
            for i, a in enumerate(node.args):
                target = a.keyword.value if a.keyword else (names[i] if i < len(names) and not a.star else None)
                if target in names and isinstance(a.value, cst.Name) and a.value.value in self.params:
                    self.passes.append((a.value.value, (func.value, target)))
                    self._handled.add(id(a.value))

    def visit_Dict(self, node: cst.Dict) -> None:
        if id(node) in self._fed:
            return
        keys = [e.key.value for e in node.elements
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name) and e.key.value in self.params]
        if keys:
            for e in node.elements:
                if isinstance(e, cst.DictElement):
                    self._handled.add(id(e.key))
            self._dicts.append((node, keys))

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(node.value, cst.Dict):
            self._bound.setdefault(node.targets[0].target.value, []).append(id(node.value))

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Dict):
            self._returned.add(id(node.value))
        elif isinstance(node.value, cst.Name):
            self._fine[node.value.value] = self._fine.get(node.value.value, 0) + 1
            self._returned |= set(self._bound.get(node.value.value, ()))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return _skip_keyword(self, node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)  # `a.b`: `b` is no name read
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self._count[node.value] = self._count.get(node.value, 0) + 1
        if node.value in self.params and id(node) not in self._handled:
            self.other.add(node.value)

    def finish(self) -> None:
        """A dict keyed by parameters must be returned, or bound to a name that is only
        returned or fed (counted: its one binding, and those reads)."""
        for node, keys in self._dicts:
            name = next((n for n, ids in self._bound.items() if id(node) in ids), None)
            fine = id(node) in self._returned if name is None else (
                len(self._bound[name]) == 1 and self._count.get(name, 0) == 1 + self._fine.get(name, 0))
            if fine:
                self.returned = self.returned or name is None or id(node) in self._returned
                for key in keys:
                    self.roles.setdefault(key, set()).add("key")
            else:
                self.other |= set(keys)


class _Feeds(cst.CSTVisitor):
    """In one scope: calls of feed-dict functions that are fed (``feed_dict = fill(...)``,
    the name then only fed to the session's runs; or ``sess.run(op, feed_dict=fill(...))``),
    and the feed arguments they make."""

    def __init__(self, session: str, makers: Set[str]) -> None:
        self.session, self.makers = session, makers
        self.calls: Set[int] = set()
        self.args: Set[int] = set()
        self._bound: Dict[str, List[int]] = {}
        self._fed: Dict[str, List[int]] = {}
        self._count: Dict[str, int] = {}

    @classmethod
    def read(cls, scope, session: str, makers: Set[str]) -> "_Feeds":
        reader = cls(session, makers)
        for stmt in scope:
            walk(stmt, reader)
        for name, calls in reader._bound.items():
            fed = reader._fed.get(name, [])
            if reader._count.get(name, 0) == len(calls) + len(fed):
                reader.calls |= set(calls)
                reader.args |= set(fed)
        return reader

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                and isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
                and value.func.value in self.makers:
            self._bound.setdefault(node.targets[0].target.value, []).append(id(value))

    def visit_Call(self, node: cst.Call) -> None:
        if not (self.session and is_run(node, self.session)):
            return
        feed = feed_dict_of(node)
        if isinstance(feed, cst.Name):
            self._fed.setdefault(feed.value, []).append(id(feed))
        elif isinstance(feed, cst.Call) and isinstance(feed.func, cst.Name) and feed.func.value in self.makers:
            self.calls.add(id(feed))
            self.args.add(id(feed))

    def visit_Arg(self, node: cst.Arg) -> bool:
        return _skip_keyword(self, node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self._count[node.value] = self._count.get(node.value, 0) + 1
