"""Load a script of examples/ as a module, so that tests can run the paper experiments the
examples carry (the examples are scripts, not part of the package)."""
import importlib.util
import sys

from . import ROOT

EXAMPLES = ROOT / "examples"


def load_example(name):
    """The module ``examples/NAME.py`` (imported once, then cached in ``sys.modules``)."""
    key = f"_example_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
