"""The codemod core: parse once, walk once with every rule, apply the fixes in one pass,
manage imports, validate, and write only what was validated (files, notebooks, cache).
Never imports TensorFlow."""
