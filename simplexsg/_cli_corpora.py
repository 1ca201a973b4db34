"""The corpora of the command line (``simplexsg.cli``): the format of a path, and the
counts of ``fit`` and of the commands that read documents with a fitted model. Problems with
the user's files raise ``UserError`` or ValueError, which the command line reports in one
line (exit status 1)."""
from pathlib import Path

import scipy.sparse as sp

from .corpus import bow_to_csr
from .lda.inspection import feature_names
from .readers import (CHUNK_LINES, LDACCorpus, UCIBowCorpus, _read_vocabulary, read_head,
                      read_matrix_market)

FORMATS = ("auto", "uci", "ldac", "mm", "text")


class UserError(Exception):
    """A problem with the user's files: reported in one line, exit status 1."""


def corpus_format(path, fmt="auto"):
    """``fmt``, or for "auto" the format read from the path: a folder is "text"; a file
    starting with "%%MatrixMarket" is "mm"; one with "id:count" pairs in its first three
    lines "ldac"; anything else "uci". A file must be UTF-8 text, gzipped or not (else
    ValueError naming it)."""
    if path.is_dir():
        if fmt not in ("auto", "text"):
            raise UserError(f"{path}: a folder, but --format {fmt} names a file format")
        return "text"
    if fmt == "text":
        raise UserError(f"{path}: --format text needs a folder of .txt files")
    head = read_head(path, 3)
    if fmt != "auto":
        return fmt
    if head and head[0].startswith("%%MatrixMarket"):
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
    X = read_matrix_market(path)
    return X, None if vocab is None else _read_vocabulary(vocab, X.shape[1], path)


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
        X = read_matrix_market(path)
    if X.shape[1] != model.n_features_in_:
        raise UserError(f"{path}: {X.shape[1]} words, but the model has "
                        f"{model.n_features_in_}")
    return X, [str(d) for d in range(X.shape[0])]


def tokens(path):
    """A text folder's documents as token lists, by the CountVectorizer's analyzer."""
    analyze = vectorizer().build_analyzer()
    return [analyze(text) for text in read_texts(text_files(path))]
