"""The corpora of the command line (``simplexsg.cli``): the format of a path, and the
counts of ``fit`` and of the commands that read documents with a fitted model. Problems with
the user's files raise ``UserError`` or ValueError, which the command line reports in one
line (exit status 1)."""
from pathlib import Path

from .lda.inspection import feature_names
from .readers import file_format, read_corpus, read_head

FORMATS = ("auto", "uci", "ldac", "mm", "text")


class UserError(Exception):
    """A problem with the user's files: reported in one line, exit status 1."""


def corpus_format(path, fmt="auto"):
    """``fmt``, or for "auto" the format read from the path: a folder is "text", a file
    ``simplexsg.readers.file_format``'s. A file must be UTF-8 text, gzipped or not (else
    ValueError naming it)."""
    if path.is_dir():
        if fmt not in ("auto", "text"):
            raise UserError(f"{path}: a folder, but --format {fmt} names a file format")
        return "text"
    if fmt == "text":
        raise UserError(f"{path}: --format text needs a folder of .txt files")
    if fmt == "auto":
        return file_format(path)
    read_head(path, 1)                    # a damaged or binary file fails here, naming it
    return fmt


def existing(path, kind="file"):
    """``path`` as a Path, after checking it exists."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such {kind}")
    return path


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
    return read_corpus(path, fmt, vocab)


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
    X, _ = read_corpus(path, fmt, stream=False, n_features=model.n_features_in_)
    if X.shape[1] != model.n_features_in_:
        raise UserError(f"{path}: {X.shape[1]} words, but the model has "
                        f"{model.n_features_in_}")
    return X, [str(d) for d in range(X.shape[0])]


def tokens(path):
    """A text folder's documents as token lists, by the CountVectorizer's analyzer."""
    analyze = vectorizer().build_analyzer()
    return [analyze(text) for text in read_texts(text_files(path))]
