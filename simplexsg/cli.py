"""The ``simplexsg`` command line (also ``python -m simplexsg``): fit an LDA model to a corpus
file or a folder of text files, then print its topics, its documents' topic proportions,
its held-out perplexity or its topics' coherence.

Corpora: UCI bag-of-words (``docword.NAME.txt[.gz]``, with ``vocab.NAME.txt`` beside it
read automatically), LDA-C (Blei's ``N id:count ...``), Matrix Market (documents as rows,
as gensim's ``MmCorpus`` writes), or a folder of ``.txt`` files (searched recursively, in
sorted order), counted by scikit-learn's ``CountVectorizer`` with its English stop words.
Models are ``joblib`` files holding the fitted ``LDA``; ``joblib.load`` reads them (a
pickle: load only files you trust).

Exit status: 0 on success, 2 for a malformed command line (argparse's), 1 when a file is
missing, unreadable or malformed, with a one-line message on stderr; 130 on Ctrl-C.
"""
import argparse
import contextlib
import csv
import os
import sys
from pathlib import Path

import scipy.io
import scipy.sparse as sp

from .corpus import bow_to_csr
from .lda import LDA
from .lda.inspection import MEASURES, TEXT_MEASURES, coherence, feature_names, format_topics
from .readers import CHUNK_LINES, LDACCorpus, UCIBowCorpus, _open, _read_vocabulary

FORMATS = ("auto", "uci", "ldac", "mm", "text")


class UserError(Exception):
    """A problem with the user's files: reported in one line, exit status 1."""


# ---------------------------------------------------------------- corpora
def corpus_format(path, fmt="auto"):
    """``fmt``, or for "auto" the format read from the path: a folder is "text"; a file
    starting with "%%MatrixMarket" is "mm"; one with "id:count" pairs in its first three
    lines "ldac"; anything else "uci". A file must be UTF-8 text, gzipped or not."""
    if path.is_dir():
        if fmt not in ("auto", "text"):
            raise UserError(f"{path}: a folder, but --format {fmt} names a file format")
        return "text"
    if fmt == "text":
        raise UserError(f"{path}: --format text needs a folder of .txt files")
    try:
        with _open(path) as fh:
            head = [fh.readline() for _ in range(3)]
    except UnicodeDecodeError:
        raise UserError(f"{path}: not a text file (UTF-8, gzipped or not)") from None
    if fmt != "auto":
        return fmt
    if head[0].startswith("%%MatrixMarket"):
        return "mm"
    return "ldac" if any(":" in line for line in head) else "uci"


def existing(path, kind="file"):
    """``path`` as a Path, after checking it exists."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such {kind}")
    return path


def uci_vocabulary(path):
    """The ``vocab.NAME.txt`` beside a UCI ``docword.NAME.txt[.gz]``, or None."""
    name = path.name.removesuffix(".gz")
    if not name.startswith("docword."):
        return None
    vocab = path.with_name("vocab." + name.removeprefix("docword."))
    return vocab if vocab.is_file() else None


def text_files(folder):
    """The folder's ``.txt`` files, recursively, sorted; at least one."""
    files = sorted(p for p in folder.rglob("*.txt") if p.is_file())
    if not files:
        raise UserError(f"{folder}: no .txt files in this folder")
    return files


def read_texts(files):
    """The files' contents (UTF-8; undecodable bytes replaced)."""
    return [f.read_text(encoding="utf-8", errors="replace") for f in files]


def vectorizer(**kwargs):
    """The CountVectorizer of text folders: scikit-learn's English stop words."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(stop_words="english", **kwargs)


def training_corpus(args):
    """``(X, id2word)`` for ``fit``: UCI and LDA-C files streamed from disk (they carry their
    vocabulary), Matrix Market and text folders as CSR counts."""
    path = existing(args.corpus, "file or folder")
    fmt = corpus_format(path, args.format)
    vocab = existing(args.vocab) if args.vocab else None
    if fmt == "text":
        if vocab is not None:
            raise UserError(f"{path}: a text folder makes its own vocabulary; --vocab is for "
                            "UCI, LDA-C and Matrix Market files")
        counter = vectorizer(min_df=args.min_df, max_df=args.max_df)
        X = counter.fit_transform(read_texts(text_files(path)))
        return X, dict(enumerate(counter.get_feature_names_out()))
    if fmt == "uci":
        return UCIBowCorpus(path, vocab or uci_vocabulary(path)), None
    if fmt == "ldac":
        return LDACCorpus(path, vocab), None
    X = matrix_market(path)
    return X, None if vocab is None else _read_vocabulary(vocab, X.shape[1], path)


def matrix_market(path):
    """A Matrix Market file as CSR (documents as rows)."""
    with _open(path) as fh:
        return sp.csr_matrix(scipy.io.mmread(fh))


def documents(path, fmt, model):
    """``(X, names)`` for the commands that read documents with a fitted model: counts
    (n_docs, the model's W words) and a name per document (the file for a text folder, else
    its 0-based row)."""
    path = existing(path, "file or folder")
    fmt = corpus_format(path, fmt)
    if fmt == "text":
        named = getattr(model, "vocabulary_", None) is not None or hasattr(model,
                                                                            "feature_names_in_")
        if not named:
            raise UserError("the model has no vocabulary (it was fitted without one): text "
                            "folders need the words")
        files = text_files(path)
        counter = vectorizer(vocabulary=list(feature_names(model)))
        return counter.transform(read_texts(files)), [str(f.relative_to(path)) for f in files]
    if fmt == "uci":
        X = sp.vstack(list(UCIBowCorpus(path).iter_csr(CHUNK_LINES)), format="csr")
    elif fmt == "ldac":
        X = bow_to_csr(LDACCorpus(path), model.n_features_in_)
    else:
        X = matrix_market(path)
    if X.shape[1] != model.n_features_in_:
        raise UserError(f"{path}: {X.shape[1]} words, but the model has "
                        f"{model.n_features_in_}")
    return X, [str(d) for d in range(X.shape[0])]


def tokens(path):
    """A text folder's documents as token lists, by the CountVectorizer's analyzer."""
    analyze = vectorizer().build_analyzer()
    return [analyze(text) for text in read_texts(text_files(path))]


# ---------------------------------------------------------------- models
def load_model(path):
    """The fitted LDA in a joblib file written by ``simplexsg fit``."""
    import joblib

    path = existing(path)
    try:
        model = joblib.load(path)
    except Exception as exc:                 # joblib/pickle raise many types on foreign files
        raise UserError(f"{path}: not a model file ({type(exc).__name__}: {exc})") from None
    if not isinstance(model, LDA) or not hasattr(model, "components_"):
        raise UserError(f"{path}: not a fitted simplexsg LDA model "
                        f"(found {type(model).__name__})")
    return model


def save_model(model, path):
    """Write the model with joblib, atomically (a temporary file renamed over ``path``)."""
    import joblib

    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    joblib.dump(model, temporary)
    os.replace(temporary, path)


# ---------------------------------------------------------------- commands
def cmd_fit(args):
    if not Path(args.output).parent.is_dir():
        raise UserError(f"{args.output}: no such folder to write the model in")
    X, id2word = training_corpus(args)
    model = LDA(args.n_components, sampler=args.sampler, doc_topic_prior=args.doc_topic_prior,
                topic_word_prior=args.topic_word_prior, batch_size=args.batch_size,
                max_iter=args.max_iter, max_time=args.max_time, tol=args.tol,
                n_jobs=args.n_jobs, random_state=args.random_state, verbose=args.verbose,
                evaluate_every=args.evaluate_every)
    with contextlib.redirect_stdout(sys.stderr):      # progress lines go to stderr
        model.fit(X, id2word=id2word)
    save_model(model, args.output)
    print(f"simplexsg: {model.n_components} topics, {model.n_features_in_} words, "
          f"{model.n_batch_iter_} steps in {model.training_seconds_:.1f} s "
          f"({model.stop_reason_}); wrote {args.output}", file=sys.stderr)


def cmd_topics(args):
    print(format_topics(load_model(args.model), args.top_n))


def cmd_transform(args):
    model = load_model(args.model)
    X, names = documents(args.corpus, args.format, model)
    proportions = model.transform(X)
    with output(args.output) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["document"] + [f"topic_{k}" for k in range(proportions.shape[1])])
        writer.writerows([name] + [f"{p:.6g}" for p in row]
                         for name, row in zip(names, proportions))


def cmd_perplexity(args):
    model = load_model(args.model)
    X, _ = documents(args.corpus, args.format, model)
    print(f"{model.perplexity(X):.6g}")


def cmd_coherence(args):
    model = load_model(args.model)
    if args.measure in TEXT_MEASURES:
        path = existing(args.corpus, "folder")
        if corpus_format(path, args.format) != "text":
            raise UserError(f"{path}: measure {args.measure} needs a folder of text files "
                            "(word order); counts support u_mass only")
        data = tokens(path)
    else:
        data, _ = documents(args.corpus, args.format, model)
    result = coherence(model, data, measure=args.measure, top_n=args.top_n)
    for k, value in enumerate(result.per_topic):
        print(f"{k}: {value:.6g}")
    print(f"mean: {result.mean:.6g}")


@contextlib.contextmanager
def output(path):
    """A text file to write, or stdout for "-"."""
    if path == "-":
        yield sys.stdout
    else:
        with open(path, "w", encoding="utf-8", newline="") as fh:
            yield fh


# ---------------------------------------------------------------- parser
def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def add_corpus(parser, help_text):
    parser.add_argument("corpus", help=help_text)
    parser.add_argument("--format", choices=FORMATS, default="auto",
                        help="corpus format (default: read from the path; see 'simplexsg -h')")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="simplexsg", description="Latent Dirichlet allocation by SCIR / SGRLD.",
        epilog="Corpora: UCI bag-of-words (docword.NAME.txt[.gz], vocab.NAME.txt beside it), "
               "LDA-C (N id:count ...), Matrix Market (documents as rows), or a folder of .txt "
               "files (CountVectorizer, English stop words). Exit status 1: a missing, "
               "unreadable or malformed file; 2: a malformed command line.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fit = commands.add_parser("fit", help="fit a model to a corpus and save it",
                              description="Fit LDA to a corpus; write the model (joblib).")
    add_corpus(fit, "training corpus: a file or a folder of .txt files")
    fit.add_argument("-o", "--output", required=True, help="model file to write")
    fit.add_argument("--vocab", help="vocabulary file, one word per line (UCI, LDA-C, Matrix "
                                     "Market)")
    fit.add_argument("-k", "--n-components", type=positive_int, default=10,
                     help="number of topics (default 10)")
    fit.add_argument("--sampler", choices=("scir", "sgrld"), default="scir")
    fit.add_argument("--doc-topic-prior", type=float, help="alpha (default 0.1)")
    fit.add_argument("--topic-word-prior", type=float, help="beta (default 0.1)")
    fit.add_argument("--batch-size", type=positive_int, help="documents per step")
    fit.add_argument("--max-iter", type=positive_int, help="passes over the corpus, at most")
    fit.add_argument("--max-time", type=float, help="training budget in seconds")
    fit.add_argument("--tol", type=float, help="stop when the convergence check stalls")
    fit.add_argument("--evaluate-every", type=int, default=0,
                     help="steps between perplexity evaluations (shown with -vv)")
    fit.add_argument("--n-jobs", type=int, default=1, help="threads (-1: all cores)")
    fit.add_argument("--random-state", type=int, help="seed: same seed and data, same model")
    fit.add_argument("--min-df", type=int, default=1,
                     help="text folders: drop words in fewer documents (default 1)")
    fit.add_argument("--max-df", type=float, default=1.0,
                     help="text folders: drop words in more than this fraction of documents")
    fit.add_argument("-v", "--verbose", action="count", default=0,
                     help="progress bar on stderr (needs tqdm); -vv also evaluation lines")
    fit.set_defaults(run=cmd_fit)

    topics = commands.add_parser("topics", help="print each topic's top words",
                                 description="Print each topic's top words, gensim style.")
    topics.add_argument("model")
    topics.add_argument("-n", "--top-n", type=positive_int, default=10)
    topics.set_defaults(run=cmd_topics)

    transform = commands.add_parser("transform", help="documents' topic proportions to CSV",
                                    description="Write each document's topic proportions "
                                                "(Gibbs fold-in) as CSV: document, topic_0, ...")
    transform.add_argument("model")
    add_corpus(transform, "documents: a file or a folder of .txt files")
    transform.add_argument("-o", "--output", default="-", help="CSV file (default stdout)")
    transform.set_defaults(run=cmd_transform)

    perplexity = commands.add_parser("perplexity", help="held-out perplexity of documents",
                                     description="Print the held-out perplexity (document "
                                                 "completion) of the documents.")
    perplexity.add_argument("model")
    add_corpus(perplexity, "test documents: a file or a folder of .txt files")
    perplexity.set_defaults(run=cmd_perplexity)

    coherent = commands.add_parser("coherence", help="topic coherence (gensim)",
                                   description="Print each topic's coherence and the mean "
                                               "(gensim's CoherenceModel).")
    coherent.add_argument("model")
    add_corpus(coherent, "reference documents (a text folder for c_v, c_uci, c_npmi)")
    coherent.add_argument("--measure", choices=MEASURES, default="u_mass")
    coherent.add_argument("-n", "--top-n", type=positive_int, default=10)
    coherent.set_defaults(run=cmd_coherence)
    return parser


def main(argv=None):
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (UserError, OSError, ValueError, MemoryError, ImportError) as exc:
        print(f"simplexsg {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"simplexsg {args.command}: interrupted", file=sys.stderr)
        return 130
    return 0
