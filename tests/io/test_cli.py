"""The ``simplexsg`` command line (#16 item 6), run end to end on small corpora it writes:
``main(argv)`` in process, and ``python -m simplexsg`` as a subprocess (pipes, signals)."""
import csv
import errno
import gzip
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import joblib
import numpy as np
import pytest
import scipy.io

import simplexsg.cli as cli
import simplexsg.lda.training as training
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
    # damaged files: gzip cut in half (the UCI header survives), gzip with a wrong CRC
    for name in ("docword.toy.txt", "toy.ldac"):
        packed = gzip.compress((root / name).read_bytes())
        (root / f"cut.{name}.gz").write_bytes(packed[:len(packed) // 2])
    packed = bytearray(gzip.compress((root / "docword.toy.txt").read_bytes()))
    packed[-8] ^= 0xFF
    (root / "crc.docword.txt.gz").write_bytes(bytes(packed))
    (root / "not.mtx").write_text("hello world\nthis is not a matrix\n")
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
    assert "perplexity" in err and "wrote" in err


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
    (["fit", "{files}/binary.dat", "-o", "{tmp}/m"],
     "binary.dat, line 2: not UTF-8 text (byte 0x80)"),
    (["fit", "{files}/empty", "-o", "{tmp}/m"], "empty: no .txt files"),
    (["fit", "{files}/vocab.toy.txt", "-o", "{tmp}/m"], "expected three header lines"),
    (["fit", "{files}/texts", "-o", "{tmp}/no/such/m"], "/no/such' does not exist"),
    (["fit", "{files}/cut.docword.toy.txt.gz", "-o", "{tmp}/m"], "gz: truncated gzip file"),
    (["fit", "{files}/cut.toy.ldac.gz", "-o", "{tmp}/m"], "gz: truncated gzip file"),
    (["fit", "{files}/crc.docword.txt.gz", "-o", "{tmp}/m"], "gz: corrupt gzip file (CRC"),
    (["perplexity", "{uci}", "{files}/cut.docword.toy.txt.gz"], "gz: truncated gzip file"),
    (["fit", "{files}/not.mtx", "--format", "mm", "-o", "{tmp}/m"],
     "not.mtx: not a Matrix Market file"),
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_python_m_damaged_files_print_one_line(files, tmp_path):
    """Only the message on stderr: no traceback, nor scipy's 'Exception ignored ... I/O
    operation on closed file' after it (its reader's wrapper outlived the file handle)."""
    for argv in (["--format", "mm", files / "not.mtx"], [files / "cut.docword.toy.txt.gz"]):
        bad = python_m("fit", *argv, "-o", tmp_path / "m")
        assert bad.returncode == 1 and bad.stdout == ""
        assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("simplexsg fit: error: ")


# ---------------------------------------------------------------- the output file
@pytest.mark.parametrize("where, message", [
    ("{tmp}", "is a folder"), ("{tmp}/no/such/m", "does not exist"),
    ("/proc/m.joblib", "cannot write in '/proc'")])
def test_output_is_checked_before_the_corpus_is_read(files, uci_model, tmp_path, capsys,
                                                     monkeypatch, where, message):
    if where.startswith("/proc") and not Path("/proc/self").is_dir():
        pytest.skip("no /proc")

    def not_now(*args):
        raise AssertionError("the corpus was read before the output was checked")

    monkeypatch.setattr(cli, "training_corpus", not_now)
    monkeypatch.setattr(cli, "documents", not_now)
    output = where.format(tmp=tmp_path)
    for argv in (["fit", files / "texts", "-o", output],
                 ["transform", uci_model, files / "toy.mtx", "-o", output]):
        status, out, err = run(argv, capsys)
        assert status == 1 and out == "" and err.count("\n") == 1
        assert f"error: --output '{output}'" in err and message in err


@pytest.mark.parametrize("same_folder", [False, True])
def test_a_model_that_cannot_be_written_after_training_is_saved_elsewhere(
        files, uci_model, tmp_path, capsys, monkeypatch, same_folder):
    """A full disk after training: the model goes to a new file named like -o in the
    current folder, or the temporary folder when that is -o's folder too."""
    output, dump = tmp_path / "out" / "m.joblib", cli.atomic_dump

    def disk_full(obj, path):                   # -o's disk is full, the others are not
        if Path(path) == output:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        dump(obj, path)

    monkeypatch.setattr(cli, "atomic_dump", disk_full)
    for folder in ("out", "cwd", "tmp"):
        (tmp_path / folder).mkdir()
    monkeypatch.chdir(tmp_path / ("out" if same_folder else "cwd"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    status, _, err = run(["fit", files / "docword.toy.txt", "-o", tmp_path / "out" / "m.joblib",
                          "-k", K, "--max-iter", 4, "--random-state", 0], capsys)
    assert status == 1 and err.count("\n") == 1
    assert f"cannot write {tmp_path / 'out' / 'm.joblib'} (No space left on device)" in err
    [saved] = (tmp_path / ("tmp" if same_folder else "cwd")).glob("m-*.joblib")
    assert err.endswith(f"; saved the model to {saved} instead\n")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []
    np.testing.assert_array_equal(joblib.load(saved).components_,
                                  joblib.load(uci_model).components_)


# ---------------------------------------------------------------- Ctrl-C, checkpoints, --resume
class StopAfterCall:
    """Wraps a function of the training module; raises KeyboardInterrupt once its ``n``-th
    call has done its work (tests/lda/test_lda_interrupt.py's, as Ctrl-C mid-fit)."""

    def __init__(self, function, n):
        self.function, self.n, self.calls = function, n, 0

    def __call__(self, *args, **kwargs):
        result = self.function(*args, **kwargs)
        self.calls += 1
        if self.calls == self.n:
            raise KeyboardInterrupt
        return result


UCI_FIT = ["-k", K, "--max-iter", 4, "--random-state", 0]      # as uci_model's (8 steps)


def interrupted_fit(files, path, capsys, monkeypatch, steps=5, *options):
    """``fit`` of docword.toy.txt to ``path`` with Ctrl-C after ``steps`` steps: its stderr."""
    with monkeypatch.context() as patch:
        patch.setattr(training, "step_topics", StopAfterCall(training.step_topics, steps + 1))
        status, out, err = run(["fit", files / "docword.toy.txt", "-o", path, *UCI_FIT,
                                *options], capsys)
    assert status == 130 and out == ""
    return err


def test_ctrl_c_saves_the_model_and_resume_gives_the_uninterrupted_fit(
        files, uci_model, tmp_path, capsys, monkeypatch):
    path = tmp_path / "m.joblib"
    err = interrupted_fit(files, path, capsys, monkeypatch)
    assert err == (f"simplexsg fit: interrupted after 5 steps; saved the unfinished model to "
                   f"{path}; to continue it, run the same command with --resume\n")
    saved = joblib.load(path)
    assert saved.interrupted_ and saved.stop_reason_ == "interrupted"
    assert saved.n_batch_iter_ == 5
    status, _, err = run(["fit", files / "docword.toy.txt", "-o", path, *UCI_FIT, "--resume",
                          "--n-jobs", 2], capsys)           # threads may change
    assert status == 0 and "8 steps" in err
    resumed, reference = joblib.load(path), joblib.load(uci_model)
    assert not resumed.interrupted_ and resumed.stop_reason_ == "max_iter"
    for name in ("components_", "topic_state_"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(reference, name))


def test_checkpoint_every_writes_the_output_during_the_fit(files, tmp_path, capsys,
                                                           monkeypatch):
    written = []
    monkeypatch.setattr(training, "write_checkpoint",
                        lambda model, path: written.append((model.n_batch_iter_, path)))
    path = fit(files, "docword.toy.txt", tmp_path, capsys, "--checkpoint-every", 3)
    assert written == [(3, path), (6, path)]


@pytest.mark.parametrize("argv, message", [
    (["{files}/docword.toy.txt", "-o", "{done}"], "its fit is finished (max_iter): nothing to "
                                                  "resume; leave out --resume"),
    (["{files}/docword.toy.txt", "-o", "{tmp}/missing"], "missing: no such file"),
    (["{files}/docword.toy.txt", "-o", "{cut}", "-k", 4, "--max-iter", 5],
     "needs the options of the interrupted fit: --n-components was 3, now 4; --max-iter was 4, "
     "now 5"),
    (["{files}/other/docword.toy.txt", "-o", "{cut}"],
     "needs the corpus of the interrupted fit, and this file's content differs"),
    (["{files}/toy.mtx", "-o", "{cut}"], "content differs"),
])
def test_resume_refuses_what_it_cannot_continue(files, uci_model, tmp_path, capsys,
                                                monkeypatch, argv, message):
    cut = tmp_path / "cut.joblib"
    interrupted_fit(files, cut, capsys, monkeypatch)
    other = files / "other" / "docword.toy.txt"     # the same D, W and NNZ, other counts
    if not other.exists():
        other.parent.mkdir()
        lines = (files / "docword.toy.txt").read_text().splitlines()
        first, second = lines[3].split(), lines[4].split()
        lines[3], lines[4] = (" ".join(first[:2] + second[2:]), " ".join(second[:2] + first[2:]))
        other.write_text("\n".join(lines) + "\n")
    before = cut.read_bytes()
    paths = dict(files=files, tmp=tmp_path, cut=cut, done=uci_model)
    argv = [str(a).format(**paths) for a in argv]
    status, out, err = run(["fit", *argv[:3], *UCI_FIT, *argv[3:], "--resume"], capsys)
    assert status == 1 and out == "" and err.count("\n") == 1
    assert message in err and err.startswith("simplexsg fit: error: ")
    assert cut.read_bytes() == before


@pytest.mark.slow
def test_python_m_ctrl_c_during_a_checkpointed_fit(files, tmp_path, capsys):
    """SIGINT to the program after its first checkpoint is written: the unfinished model is
    saved with one line on stderr, exit status 130; --resume continues it."""
    path = tmp_path / "m.joblib"
    argv = ["fit", files / "docword.toy.txt", "-o", path, "-k", K, "--max-iter", 10 ** 6,
            "--checkpoint-every", 200]
    # SIGINT as a shell's foreground job has it, even if this test runs with it ignored
    program = subprocess.Popen([sys.executable, "-m", "simplexsg", *map(str, argv)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline and program.poll() is None:
            time.sleep(0.05)
        assert path.exists() and program.poll() is None
        # sent again rather than hang if lost: a KeyboardInterrupt raised just after a
        # checkpoint's os.replace becomes atomic_dump's cleanup error (FileNotFoundError),
        # which write_checkpoint swallows with a warning (a library defect, rarely hit here)
        for _ in range(10):
            time.sleep(0.1)
            program.send_signal(signal.SIGINT)
            try:
                out, err = program.communicate(timeout=3)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            pytest.fail("SIGINT did not stop the fit")
    finally:
        program.kill()
        program.wait()
    assert program.returncode == 130 and out == ""
    assert err.startswith("simplexsg fit: interrupted after ") and err.count("\n") == 1
    assert err.endswith(f"saved the unfinished model to {path}; to continue it, run the same "
                        "command with --resume\n")
    saved = joblib.load(path)
    assert saved.interrupted_ and saved.n_batch_iter_ >= 1
    status, _, err = run([*argv, "--resume", "--max-time", 0.01], capsys)
    resumed = joblib.load(path)
    assert status == 0 and resumed.stop_reason_ == "max_time" and not resumed.interrupted_
    assert resumed.n_batch_iter_ == saved.n_batch_iter_ + 1


# ---------------------------------------------------------------- a closed pipe
@pytest.mark.parametrize("command", [["topics", "{model}"],
                                     ["transform", "{model}", "{files}/toy.ldac"],
                                     ["perplexity", "{model}", "{files}/toy.ldac"],
                                     ["coherence", "{model}", "{files}/toy.ldac"]])
def test_stdout_closed_early_stops_quietly_with_status_141(files, uci_model, capsys,
                                                           monkeypatch, command):
    """As ``... | head -1``: the reader of stdout has gone before the output is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    with open(write_end, "w") as pipe:
        monkeypatch.setattr(sys, "stdout", pipe)
        status = main([a.format(model=uci_model, files=files) for a in command])
        monkeypatch.undo()
    assert status == 141 and capsys.readouterr().err == ""


def test_python_m_into_head(files, uci_model):
    """``python -m simplexsg transform ... | head -1``, the reader gone before the output is
    written: no message, status 141."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        program = subprocess.run([sys.executable, "-m", "simplexsg", "transform",
                                  str(uci_model), str(files / "toy.ldac")], stdout=write_end,
                                 stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert program.returncode == 141 and program.stderr == ""


def test_fit_whose_stderr_reader_has_gone_saves_the_unfinished_model(files, tmp_path,
                                                                      monkeypatch):
    """As ``fit ... -vv 2>&1 | head -1``, the reader gone once training has started (the
    first evaluation line fails, undoing its step): the unfinished model is saved to -o, the
    status is 141."""
    class GoneAfterStart(io.StringIO):
        def write(self, text):
            if "perplexity" in text or self.getvalue().count("perplexity"):
                raise BrokenPipeError(errno.EPIPE, "Broken pipe")
            return super().write(text)

    path = tmp_path / "m.joblib"
    with open(os.devnull, "w") as devnull:
        monkeypatch.setattr(sys, "stdout", devnull)
        monkeypatch.setattr(sys, "stderr", GoneAfterStart())
        status = main([str(a) for a in ["fit", files / "toy.mtx", "-o", path, *UCI_FIT,
                                        "-vv", "--evaluate-every", 1]])
        monkeypatch.undo()
    assert status == 141
    saved = joblib.load(path)
    assert saved.interrupted_ and saved.stop_reason_ == "interrupted"
