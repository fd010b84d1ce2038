"""Names read and bound by statements: what the native form's readers and the
build-time check share (pure)."""
from __future__ import annotations

from typing import Dict, Optional, Set, Tuple

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from ..syntax import _key, _promoted


# tf.get_variable's parameters, in order (its positional arguments are read by them)
GET_VARIABLE_PARAMS = ("name", "shape", "dtype", "initializer", "regularizer", "trainable", "collections",
                       "caching_device", "partitioner", "validate_shape", "use_resource", "custom_getter",
                       "constraint", "synchronization", "aggregation")


def _imported(module: cst.Module) -> Set[str]:
    """The names the module's imports bind (a module of the project may make variables)."""
    out: Set[str] = set()
    for node in nodes_of(module, (cst.Import, cst.ImportFrom)):
        if isinstance(node.names, cst.ImportStar):
            continue
        for alias in node.names:
            bound = alias.asname.name if alias.asname else alias.name
            out.add(code(bound).split(".")[0])
    return out


def _names_read(node: cst.CSTNode, self_name: Optional[str] = None, excluded=frozenset()) -> Tuple[str, ...]:
    """The names a statement or expression reads (attribute names, keywords and the
    names assigned or bound by ``as`` aside); with ``self_name`` (a class's program), an
    attribute of the object is read as its key ``self.x``."""
    skip: Set[int] = set()
    keys: Dict[int, str] = {}  # id(the object's Name) -> the attribute's key
    for found in nodes_of(node, (cst.Attribute, cst.Arg, cst.AssignTarget, cst.Param,
                                 cst.CompFor, cst.DictElement, cst.AsName)):
        if isinstance(found, cst.Attribute):
            skip.add(id(found.attr))
            if self_name and isinstance(found.value, cst.Name) and found.value.value == self_name:
                keys[id(found.value)] = f"self.{found.attr.value}"
        elif isinstance(found, cst.Arg) and found.keyword is not None:
            skip.add(id(found.keyword))
        elif isinstance(found, cst.AssignTarget):
            skip |= {id(n) for n in nodes_of(found.target, (cst.Name,))}
        elif isinstance(found, cst.AsName):  # `with ... as scope`, `import x as y`: bound
            skip |= {id(n) for n in nodes_of(found.name, (cst.Name,))}
    promoted = _promoted(self_name)
    return tuple(dict.fromkeys(keys.get(id(n)) or promoted.get(id(n), n.value) for n in nodes_of(node, (cst.Name,))
                               if id(n) not in skip and id(n) not in excluded))


def _names_read_beside(node: cst.CSTNode, left_out: Set[int], self_name: Optional[str] = None) -> Tuple[str, ...]:
    """The names ``node`` reads, but for those in the expressions ``left_out`` (by id): a
    layer call's arguments, read once where the layer is made; what ``tf.stop_gradient``
    takes, which no gradient reaches."""
    inside = {id(n) for found in nodes_of(node, (cst.CSTNode,)) if id(found) in left_out
              for n in nodes_of(found, (cst.Name,))}
    return _names_read(node, self_name, inside)


def _free_names(func: cst.FunctionDef) -> Tuple[str, ...]:
    """The names a function reads from outside it: read in its body, neither its
    parameters nor bound anywhere in it (Python makes those local)."""
    params = {p.name.value for p in nodes_of(func.params, (cst.Param,))}
    local = params | _bound(func.body.body)
    return tuple(n for n in _names_read(func.body) if n not in local)


def _binds(stmt, self_name: Optional[str] = None) -> Optional[Tuple[str, ...]]:
    """The names ``a = ...`` / ``a, b = ...`` binds (with ``self_name``, ``self.a = ...``
    binds the key ``self.a``), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
            or not isinstance(stmt.body[0], cst.Assign) or len(stmt.body[0].targets) != 1:
        return None
    target = stmt.body[0].targets[0].target
    if _key(target, self_name):
        return (_key(target, self_name),)
    if isinstance(target, (cst.Tuple, cst.List)) and all(
            _key(e.value, self_name) for e in target.elements):
        return tuple(_key(e.value, self_name) for e in target.elements)
    return None


def _bound(scope) -> Set[str]:
    """The names the statements bind (assignments, loops, with-as, defs, imports)."""
    out: Set[str] = set()
    for stmt in scope:
        for node in nodes_of(stmt, (cst.AssignTarget, cst.For, cst.WithItem, cst.AugAssign,
                                    cst.FunctionDef, cst.ClassDef, cst.CompFor)):
            target = getattr(node, "target", None) if not isinstance(node, cst.WithItem) else (
                node.asname.name if node.asname else None)
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                out.add(node.name.value)
            elif target is not None:
                out |= {n.value for n in nodes_of(target, (cst.Name,))}
    return out


def _arguments(call: cst.Call, params) -> Optional[Dict[str, cst.BaseExpression]]:
    """A call's arguments by name: positional ones by ``params``, keywords as given (any
    keyword: callers say which they take); None for ``*args`` or an argument given twice."""
    out: Dict[str, cst.BaseExpression] = {}
    for at, arg in enumerate(call.args):
        if arg.star:
            return None
        key = arg.keyword.value if arg.keyword is not None else params[at] if at < len(params) else None
        if key is None or key in out:
            return None
        out[key] = arg.value
    return out
