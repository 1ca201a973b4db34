"""Sphinx configuration of the simplexsg documentation.

Build (from the repository root, after ``pip install -e '.[docs]'``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The build needs no network: there is no intersphinx, and the API pages are generated from the
docstrings of the installed (or importable) package.
"""
import os
import sys

# The package is normally installed in the environment (``pip install -e .``); a source checkout
# with built extensions works too.
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

import simplexsg  # noqa: E402

project = "simplexsg"
author = "the simplexsg developers"
copyright = "the simplexsg developers"
release = simplexsg.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "README_front_page.md", "Thumbs.db", ".DS_Store"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
language = "en"

# -- autodoc / autosummary -------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_inherit_docstrings = False

# -- numpydoc ---------------------------------------------------------------------------------
# The docstrings use numpydoc sections, written for readers of the source: free-form types
# ("(K, W) array", "float, default None (0.1)") and some one-line attribute summaries. The site
# renders them as they are, without cross-referencing the types and without numpydoc's own
# member tables (the class pages list their public methods through autodoc instead).
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()
numpydoc_attributes_as_param_list = True

# -- HTML -------------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"simplexsg {release}"
html_theme_options = {
    "description": "Stochastic-gradient MCMC on sparse probability simplexes",
    "fixed_sidebar": True,
    "page_width": "1180px",
    "sidebar_width": "240px",
    "show_relbars": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_static_path = []
html_show_sourcelink = False
html_copy_source = False

# Nothing is fetched at build time (no intersphinx); MathJax is loaded by the reader's browser.
nitpicky = False


# -- Docstrings written as plain text ---------------------------------------------------------
# The docstrings name fitted attributes in running text ("n_batch_iter_ : steps taken",
# "N / |S|"), which reST would read as hyperlink references (``word_``) and substitutions
# (``|S|``). This hook runs after numpydoc has turned the sections into reST and escapes those
# two constructs outside inline literals, roles and strong/emphasis markup, so the text renders
# as written without touching the package.
import re  # noqa: E402

_LITERAL = re.compile(r"(``.+?``|:[\w:.+-]+:`[^`]*`|`[^`]*`_{0,2}|\*\*.+?\*\*|\*[^*\s][^*]*\*)")
_TRAILING_UNDERSCORE = re.compile(r"(?<![\w\\])([A-Za-z][\w.]*?)_(?![\w`*])")
_SUBSTITUTION = re.compile(r"\|([^|\s`][^|`]*)\|")


def _escape_plain_text(line):
    stripped = line.lstrip()
    if stripped.startswith(".. ") or stripped.startswith(":") and stripped.count(":") >= 2 and \
            re.match(r"\s*:[\w\s]+:", line):
        return line
    parts = _LITERAL.split(line)
    for i in range(0, len(parts), 2):      # the even parts lie outside literals and markup
        text = _TRAILING_UNDERSCORE.sub(r"\1\\_", parts[i])
        parts[i] = _SUBSTITUTION.sub(r"\\|\1\\|", text)
    return "".join(parts)


def _escape_docstring(app, what, name, obj, options, lines):
    lines[:] = [_escape_plain_text(line) for line in lines]


def setup(app):
    # numpydoc's own hook has the default priority (500); this one runs after it.
    app.connect("autodoc-process-docstring", _escape_docstring, priority=900)
    app.add_directive("simplexsg-cli-help", CliHelp)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# -- ``python -m simplexsg --help`` at build time ----------------------------------------------
from docutils import nodes  # noqa: E402
from sphinx.util.docutils import SphinxDirective  # noqa: E402


class CliHelp(SphinxDirective):
    """``.. simplexsg-cli-help:: [COMMAND]``: the help text of the command line (or of one of
    its commands), formatted by argparse from ``simplexsg.cli.build_parser`` when the docs are
    built, so the page cannot fall behind the code."""

    optional_arguments = 1

    def run(self):
        import argparse

        from simplexsg.cli import build_parser

        saved = os.environ.get("COLUMNS")
        os.environ["COLUMNS"] = "92"          # argparse wraps to the terminal width
        try:
            parser = build_parser()
            command = self.arguments[0] if self.arguments else None
            if command is not None:
                actions = [a for a in parser._actions
                           if isinstance(a, argparse._SubParsersAction)]
                parser = actions[0].choices[command]
            text = parser.format_help()
        finally:
            if saved is None:
                del os.environ["COLUMNS"]
            else:
                os.environ["COLUMNS"] = saved
        prompt = "$ python -m simplexsg " + (command + " " if command else "") + "--help\n"
        block = nodes.literal_block(prompt + text, prompt + text)
        block["language"] = "text"
        return [block]
