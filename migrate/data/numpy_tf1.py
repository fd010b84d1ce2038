"""Run by TF 1.15's interpreter (Python 3.7, numpy 1.18) for ``numpy_tables``: prints, as
JSON, its numpy's public names, each with the builtin type it is, if it is one
(`np.unicode` is `str`), and the other names of the same type, function or float
(`np.bool8` is `np.bool_`, `np.NAN` is `np.nan`; not modules, not cached ints), plain names
first; the deprecation notes of its docstrings; and each function's parameters (name,
kind) with what its docstring says of each. Imports nothing of tf-migrate's."""
import builtins, inspect, json, types, warnings
import numpy


def main():
    warnings.simplefilter("ignore")
    public = sorted(n for n in dir(numpy) if not n.startswith("_"))
    names, aliases, deprecated = {}, {}, {}
    for name in public:
        value = getattr(numpy, name)
        doc = getattr(value, "__doc__", None) or ""
        if callable(value) and ".. deprecated::" in doc:  # numpy 1.18's note: "use a.item() instead"
            lines = doc.split(".. deprecated::", 1)[1].split("\n")
            version, note = lines[0].strip(), []
            for line in lines[1:]:
                if line.strip():
                    note.append(line.strip())
                elif note:
                    break
            deprecated[name] = " ".join(note) or "deprecated since numpy " + version
        names[name] = next((b for b in ("bool", "int", "float", "complex", "object", "str", "bytes")
                            if value is getattr(builtins, b)), None)
        if isinstance(value, (type, float, types.FunctionType, types.BuiltinFunctionType)):
            same = [n for n in public if n != name and getattr(numpy, n) is value]
            aliases[name] = sorted(same, key=lambda n: (n[-1].isdigit(), n))
    # each function's parameters (name, kind) and what its docstring says of each
    signatures = {}
    for name in public:
        value = getattr(numpy, name)
        if not isinstance(value, types.FunctionType):
            continue
        try:
            parameters = list(inspect.signature(value).parameters.values())
        except (TypeError, ValueError):
            continue
        doc, said = (value.__doc__ or "").splitlines(), {}
        for p in parameters:
            for i, line in enumerate(doc):
                if line.strip().split(" : ")[0].split(",")[0].strip() == p.name and " : " in line:
                    indent = len(line) - len(line.lstrip())
                    text = []
                    for more in doc[i + 1:]:
                        if more.strip() and len(more) - len(more.lstrip()) <= indent:
                            break
                        text.append(more.strip())
                    said[p.name] = " ".join(t for t in text if t)
                    break
        signatures[name] = [[p.name, p.kind.name, said.get(p.name, "")] for p in parameters]
    print(json.dumps({"version": numpy.__version__, "names": names, "aliases": aliases,
                      "deprecated": deprecated, "signatures": signatures}))


if __name__ == "__main__":
    main()
