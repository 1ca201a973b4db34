"""The guide's code runs as printed: each page's Python blocks, in order, in one namespace."""
import re
from pathlib import Path

import numpy as np
import pytest

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide"
BLOCK = re.compile(r"^( *)\.\. code-block:: python\n\n((?:\1   .*\n|\n)+)", re.MULTILINE)


def python_blocks(page):
    """The source of every ``.. code-block:: python`` of ``page``, dedented."""
    text = (GUIDE / page).read_text(encoding="utf-8")
    blocks = []
    for indent, body in BLOCK.findall(text):
        prefix = len(indent) + 3
        blocks.append("\n".join(line[prefix:] for line in body.splitlines()))
    return blocks


def test_your_own_text_page_runs_as_printed(capsys):
    blocks = python_blocks("own_text.rst")
    assert len(blocks) == 2
    namespace = {}
    for block in blocks:
        exec(compile(block, "own_text.rst", "exec"), namespace)
    printed = capsys.readouterr().out.split()
    perplexity, c_v, u_mass = (float(printed[i]) for i in (-3, -2, -1))
    assert 1 < perplexity < namespace["X"].shape[1]
    assert 0 < c_v < 1 and u_mass < 0 and np.isfinite(u_mass)


@pytest.mark.slow
def test_quick_start_page_runs_as_printed(tmp_path, monkeypatch):
    """The quick start's three blocks: the first fit as printed; the overview and the pipeline
    on small data bound to the names they use."""
    from gensim.test.utils import datapath
    from sklearn.feature_extraction.text import CountVectorizer

    monkeypatch.chdir(tmp_path)                         # the overview names a checkpoint file
    texts = open(datapath("lee_background.cor"), encoding="utf-8").read().splitlines()
    X = CountVectorizer(stop_words="english", min_df=2).fit_transform(texts)
    first_fit, overview, pipeline = python_blocks("quickstart.rst")
    namespace = {}
    exec(compile(first_fit, "quickstart.rst", "exec"), namespace)
    assert namespace["lda"].components_.shape[0] == 20
    namespace = dict(X=X[:200], X_train=X[:200], X_new=X[200:250], X_test=X[250:],
                     X_batch=X[:50], D=200)
    exec(compile(overview, "quickstart.rst", "exec"), namespace)
    namespace = dict(train_texts=texts[:200], new_texts=texts[200:250], test_texts=texts[250:])
    exec(compile(pipeline, "quickstart.rst", "exec"), namespace)
    assert namespace["theta"].shape == (200, 10)
