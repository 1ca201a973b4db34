"""The ``simplexsg`` command line (#16 item 6), run end to end on small corpora it writes:
``main(argv)`` in process, and ``python -m simplexsg`` as a subprocess."""
import csv
import gzip
import io
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pytest
import scipy.io

from simplexsg import LDA
from simplexsg.cli import documents, main
from simplexsg.datasets import make_lda_corpus, save_uci_bow
from simplexsg.lda.inspection import coherence, format_topics

K, W = 3, 30
WORDS = [f"w{j:02d}" for j in range(W)]
THEMES = [["apple", "banana", "cherry", "grape", "melon"],
          ["rocket", "planet", "orbit", "launch", "comet"],
          ["guitar", "piano", "violin", "drum", "flute"]]


@pytest.fixture(scope="module")
def counts():
    return make_lda_corpus(90, W, K, doc_length=25, topic_word_prior=0.05, random_state=0)[0]


@pytest.fixture(scope="module")
def files(counts, tmp_path_factory):
    """The counts as UCI (vocab beside it), gzipped UCI, LDA-C, Matrix Market; a text folder."""
    root = tmp_path_factory.mktemp("corpora")
    save_uci_bow(counts, root / "docword.toy.txt", WORDS, root / "vocab.toy.txt")
    with open(root / "docword.toy.txt", "rb") as src, gzip.open(root / "docword.gz.txt.gz",
                                                                 "wb") as dst:
        dst.write(src.read())
    with open(root / "toy.ldac", "w") as fh:
        for row in counts:
            fh.write(f"{row.nnz} " + " ".join(f"{j}:{c}" for j, c in zip(row.indices, row.data))
                     + "\n")
    scipy.io.mmwrite(root / "toy.mtx", counts)
    rng = np.random.default_rng(0)
    for d in range(45):
        folder = root / "texts" / ("b" if d % 2 else "a")
        folder.mkdir(parents=True, exist_ok=True)
        words = rng.choice(THEMES[d % 3], 15).tolist() + ["the", "and", "of"]
        (folder / f"doc{d:02d}.txt").write_text(" ".join(words))
    (root / "binary.dat").write_bytes(bytes(range(256)) * 4)
    (root / "empty").mkdir()
    return root


def run(argv, capsys):
    """main(argv): (exit status, stdout, stderr)."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def fit(files, corpus, tmp_path, capsys, *options):
    path = tmp_path / "model.joblib"
    status, _, err = run(["fit", files / corpus, "-o", path, "-k", K, "--max-iter", 4,
                          "--random-state", 0, *options], capsys)
    assert status == 0, err
    return path


@pytest.fixture(scope="module")
def uci_model(files, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "uci.joblib"
    assert main(["fit", str(files / "docword.toy.txt"), "-o", str(path), "-k", str(K),
                 "--max-iter", "4", "--random-state", "0"]) == 0
    return path


@pytest.fixture(scope="module")
def text_model(files, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "text.joblib"
    assert main(["fit", str(files / "texts"), "-o", str(path), "-k", str(K),
                 "--max-iter", "8", "--random-state", "0"]) == 0
    return path


# ---------------------------------------------------------------- fit and its corpora
@pytest.mark.parametrize("corpus", ["docword.toy.txt", "docword.gz.txt.gz", "toy.ldac",
                                    "toy.mtx"])
def test_each_format_reads_the_same_counts(files, counts, uci_model, corpus):
    X, names = documents(files / corpus, "auto", joblib.load(uci_model))
    assert (X != counts).nnz == 0 and X.shape == counts.shape
    assert names == [str(d) for d in range(counts.shape[0])]


def test_fit_uci_names_words_from_the_vocab_file_and_is_seeded(files, uci_model, tmp_path,
                                                                capsys):
    model = joblib.load(uci_model)
    assert isinstance(model, LDA) and model.components_.shape == (K, W)
    assert list(model.vocabulary_) == WORDS
    again = joblib.load(fit(files, "docword.toy.txt", tmp_path, capsys))
    np.testing.assert_array_equal(again.components_, model.components_)


def test_fit_options_reach_the_model(files, tmp_path, capsys):
    path = fit(files, "toy.mtx", tmp_path, capsys, "--sampler", "sgrld", "--batch-size", 30,
               "--doc-topic-prior", 0.3, "--topic-word-prior", 0.02, "--vocab",
               files / "vocab.toy.txt")
    model = joblib.load(path)
    assert (model.sampler, model.batch_size_, model.n_iter_) == ("sgrld", 30, 4)
    assert (model.doc_topic_prior_, model.topic_word_prior_) == (0.3, 0.02)
    assert list(model.vocabulary_) == WORDS


def test_text_folder_topics_recover_the_themes(text_model, capsys):
    model = joblib.load(text_model)
    assert sorted(model.vocabulary_) == sorted(w for theme in THEMES for w in theme)
    status, out, _ = run(["topics", text_model, "-n", 5], capsys)
    assert status == 0 and out == format_topics(model, 5) + "\n"
    found = [{part.split('"')[1] for part in line.split(" + ")} for line in out.splitlines()]
    assert sorted(map(sorted, found)) == sorted(map(sorted, THEMES))


def test_progress_goes_to_stderr(files, tmp_path, capsys):
    status, out, err = run(["fit", files / "texts", "-o", tmp_path / "m", "-k", K,
                            "--max-iter", 2, "-vv", "--evaluate-every", 1], capsys)
    assert status == 0 and out == ""
    assert "held-out perplexity" in err and "wrote" in err


# ---------------------------------------------------------------- the other commands
def test_transform_writes_csv_by_document(files, text_model, tmp_path, capsys):
    status, out, _ = run(["transform", text_model, files / "texts"], capsys)
    assert status == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["document"] + [f"topic_{k}" for k in range(K)]
    assert [r[0] for r in rows[1:3]] == [str(Path("a", "doc00.txt")), str(Path("a", "doc02.txt"))]
    proportions = np.array([[float(p) for p in r[1:]] for r in rows[1:]])
    assert proportions.shape == (45, K)
    np.testing.assert_allclose(proportions.sum(axis=1), 1, atol=1e-5)
    status, _, _ = run(["transform", text_model, files / "texts", "-o", tmp_path / "t.csv"],
                       capsys)
    assert status == 0 and (tmp_path / "t.csv").read_text() == out


def test_perplexity_and_coherence_match_the_library(files, counts, uci_model, capsys):
    model = joblib.load(uci_model)
    status, out, _ = run(["perplexity", uci_model, files / "toy.ldac"], capsys)
    assert status == 0 and float(out) == pytest.approx(model.perplexity(counts), rel=1e-5)
    status, out, _ = run(["coherence", uci_model, files / "toy.mtx", "-n", 5], capsys)
    expected = coherence(model, counts, top_n=5)
    lines = out.splitlines()
    assert status == 0 and len(lines) == K + 1
    np.testing.assert_allclose([float(line.split(": ")[1]) for line in lines[:K]],
                               expected.per_topic, rtol=1e-5)
    assert lines[-1].startswith("mean: ")


def test_c_v_on_a_text_folder(files, text_model, capsys):
    status, out, _ = run(["coherence", text_model, files / "texts", "--measure", "c_v"],
                         capsys)
    assert status == 0
    assert 0 < float(out.splitlines()[-1].split(": ")[1]) <= 1


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("argv, message", [
    (["fit", "{files}/missing.txt", "-o", "{tmp}/m"], "missing.txt: no such file or folder"),
    (["fit", "{files}/binary.dat", "-o", "{tmp}/m"], "binary.dat: not a text file"),
    (["fit", "{files}/empty", "-o", "{tmp}/m"], "empty: no .txt files"),
    (["fit", "{files}/vocab.toy.txt", "-o", "{tmp}/m"], "expected three header lines"),
    (["fit", "{files}/texts", "-o", "{tmp}/no/such/m"], "no such folder to write"),
    (["fit", "{files}/texts", "--format", "uci", "-o", "{tmp}/m"], "a folder, but --format"),
    (["fit", "{files}/toy.mtx", "--vocab", "{files}/missing", "-o", "{tmp}/m"],
     "missing: no such file"),
    (["fit", "{files}/texts", "--vocab", "{files}/vocab.toy.txt", "-o", "{tmp}/m"],
     "--vocab is for"),
    (["topics", "{tmp}/missing.joblib"], "missing.joblib: no such file"),
    (["topics", "{files}/vocab.toy.txt"], "vocab.toy.txt: not a model file"),
    (["transform", "{text}", "{files}/toy.mtx"], "toy.mtx: 30 words, but the model has 15"),
    (["coherence", "{uci}", "{files}/toy.mtx", "--measure", "c_v"], "needs a folder of text"),
])
def test_data_errors_exit_1_with_one_line(files, uci_model, text_model, tmp_path, capsys,
                                          argv, message):
    paths = dict(files=files, tmp=tmp_path, uci=uci_model, text=text_model)
    status, out, err = run([a.format(**paths) for a in argv], capsys)
    assert status == 1 and out == ""
    assert message in err and err.count("\n") == 1 and err.startswith("simplexsg ")


def test_a_fitted_model_file_that_is_not_lda(tmp_path, capsys):
    joblib.dump({"not": "a model"}, tmp_path / "dict.joblib")
    status, _, err = run(["topics", tmp_path / "dict.joblib"], capsys)
    assert status == 1 and "not a fitted simplexsg LDA model (found dict)" in err


@pytest.mark.parametrize("argv", [[], ["fit"], ["fit", "x"], ["topics", "m", "-n", "0"],
                                  ["coherence", "m", "x", "--measure", "c_w2v"], ["frobnicate"]])
def test_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert "usage: simplexsg" in capsys.readouterr().err


# ---------------------------------------------------------------- as a program
def python_m(*argv):
    return subprocess.run([sys.executable, "-m", "simplexsg", *map(str, argv)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", ["", "fit", "topics", "transform", "perplexity",
                                     "coherence"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"] if command else ["--help"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: simplexsg {command}".rstrip())


def test_python_m_simplexsg_end_to_end(files, tmp_path):
    model = tmp_path / "m.joblib"
    fitted = python_m("fit", files / "texts", "-o", model, "-k", K, "--max-iter", 4,
                      "--random-state", 0)
    assert fitted.returncode == 0 and fitted.stdout == "" and "wrote" in fitted.stderr
    shown = python_m("topics", model, "-n", 3)
    assert shown.returncode == 0 and len(shown.stdout.splitlines()) == K
    bad = python_m("perplexity", model, files / "missing")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().endswith("missing: no such file or folder")
