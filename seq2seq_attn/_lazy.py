"""Lazy package exports, so that importing a config module does not start
TensorFlow (whose devices must be configured before it starts), and a hook
that runs code once another package has been imported."""

import importlib
import importlib.abc
import importlib.util
import sys
import types


def lazy_exports(package, exports, subpackages=()):
    """`__getattr__` and `__dir__` for a package exporting `exports`, a dict
    from public name to the module that defines it, and its `subpackages`
    (names), each imported on first use.

    An export named like its module (`decoding.beam_search`, the function)
    keeps that meaning when the module is imported: Python's import sets
    the package's attribute of each submodule it loads, which would
    replace the function by its module (`_ExportsFirst`).
    """
    module = sys.modules[package]
    module.__class__ = _ExportsFirst
    module._exports_first = frozenset(exports)

    def __getattr__(name):
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        if name in subpackages:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted([*exports, *subpackages])

    return __getattr__, __dir__


class _ExportsFirst(types.ModuleType):
    """A package that keeps its exports over submodules of the same name."""

    def __setattr__(self, name, value):
        exports = self.__dict__.get("_exports_first", ())
        if isinstance(value, types.ModuleType) and name in exports:
            return  # the submodule stays reachable in sys.modules
        super().__setattr__(name, value)


def after_import(name, callback):
    """Calls `callback()` once the top-level module `name` has been imported:
    now if it has been, else right after its import (a one-time finder on
    `sys.meta_path` that wraps the module's loader)."""
    if name in sys.modules:
        callback()
    else:
        sys.meta_path.insert(0, _AfterImport(name, callback))


class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, name, callback):
        self.name = name
        self.callback = callback
        self.finding = False

    def find_spec(self, fullname, path=None, target=None):
        # `importlib.util.find_spec` also asks here without importing (as
        # TensorFlow does before importing Keras): the hook stays in place
        # until the module runs.
        if fullname != self.name or self.finding:
            return None
        self.finding = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.finding = False
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_module_then_callback(module):
            exec_module(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
                self.callback()

        spec.loader.exec_module = exec_module_then_callback
        return spec
