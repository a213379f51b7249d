"""Lazy package exports, so that importing a config module does not start
TensorFlow (whose devices must be configured before it starts)."""

import importlib


def lazy_exports(package, exports):
    """`__getattr__` and `__dir__` for a package exporting `exports`, a dict
    from public name to the module that defines it."""

    def __getattr__(name):
        if name in exports:
            return getattr(importlib.import_module(exports[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(exports)

    return __getattr__, __dir__
