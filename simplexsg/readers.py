"""Corpora streamed from disk: UCI bag-of-words and LDA-C files, read lazily, gzip or plain.

Both readers are re-iterable gensim-style corpora (iterating yields each document as a list of
``(word_id, count)`` pairs, 0-based ids, empty documents included) with ``len()``,
``n_features`` and ``id2word``, so ``SCIRLDA().fit(corpus)`` streams them. ``iter_csr(n)``
yields CSR int64 blocks of ``n`` documents, the fast path the estimators use. Memory is one
block of lines at a time, whatever the number of documents. Malformed input raises ValueError
naming the file and line, and so does a damaged file, whenever the damage is met (at
construction or while streaming): a truncated or corrupt gzip file, or bytes that are not UTF-8
(named by line where the reader knows it). ``read_matrix_market`` reads a Matrix Market file
into memory, its errors raised the same way.

``read_corpus(path, format="auto")`` is the one entry point for a corpus file of any of these
formats (the command line reads its files through it): ``file_format`` tells them apart.
"""
import contextlib
import gzip
import io
import zlib
from itertools import islice
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

from ._ext._uci import plain_triples, triples_valid
from .corpus import bow_to_csr

#: Lines parsed at a time (LDA-C), and bytes of whole lines at a time (UCI).
CHUNK_LINES, CHUNK_BYTES = 1 << 16, 1 << 22
#: The corpus file formats: UCI bag-of-words, LDA-C, Matrix Market (documents as rows).
FILE_FORMATS = ("uci", "ldac", "mm")


def _open(path, binary=False):
    """A text (or binary) file handle, through gzip when the file starts with gzip's magic
    bytes."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb") if binary else gzip.open(path, "rt", encoding="utf-8")
    return open(path, "rb") if binary else open(path, encoding="utf-8")


#: What reading a damaged file raises: a truncated gzip file (EOFError), a corrupt one
#: (gzip.BadGzipFile, zlib.error), bytes that are not UTF-8 (UnicodeDecodeError).
_DAMAGE = (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError)


def _damage(path, exc):
    """The ValueError naming ``path`` for ``exc``, one of ``_DAMAGE``."""
    if isinstance(exc, EOFError):
        return ValueError(f"{path}: truncated gzip file: its compressed data ends early (a "
                          "download or copy cut short?)")
    if isinstance(exc, UnicodeDecodeError):
        return ValueError(f"{path}: {_not_utf8(exc)}")
    return ValueError(f"{path}: corrupt gzip file ({exc})")


@contextlib.contextmanager
def _reading(path):
    """Raise the errors of a damaged file (``_DAMAGE``) met in the block as ValueError naming
    ``path``. Around a generator's loop, it covers the errors met while streaming."""
    try:
        yield
    except _DAMAGE as exc:
        raise _damage(path, exc) from None


def _not_utf8(exc):
    return (f"not UTF-8 text (byte {exc.object[exc.start]:#04x}): corpus files are text, "
            "gzipped or not")


def _decode(data, path, first_line):
    """``data`` (bytes of whole lines, the first numbered ``first_line``) as UTF-8 text, or
    ValueError naming the file and the line of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise ValueError(f"{path}, line {line}: {_not_utf8(exc)}") from None


def read_head(path, n_lines):
    """The first ``n_lines`` lines of a file, gzipped or not, as text (fewer if it has
    fewer): what format detection reads. ValueError naming the file if it is damaged."""
    with _reading(path), _open(path, binary=True) as fh:
        return [_decode(raw, path, i + 1) for i, raw in enumerate(islice(fh, n_lines))]


def read_matrix_market(path):
    """A Matrix Market file (gzipped or not) as a CSR matrix, read into memory by
    ``scipy.io.mmread``; ValueError naming the file if it is not one or is damaged."""
    with _open(path) as fh:
        try:
            matrix, error = scipy.io.mmread(fh), None
        except _DAMAGE as exc:
            error = _damage(path, exc)
        except ValueError as exc:                   # scipy's: "Line 1: Not a Matrix ..."
            error = ValueError(f"{path}: not a Matrix Market file ({exc})")
        # scipy reads a text handle through a wrapper whose finaliser touches the handle; the
        # traceback of the exception keeps the wrapper alive, so the exception must be gone
        # before the handle closes ("Exception ignored ... I/O operation on closed file"
        # otherwise): it is, at the end of the except clause
    if error is not None:
        raise error
    return sp.csr_matrix(matrix)


def _read_vocabulary(vocab_path, n_words=None, corpus_path=None):
    """``{id: word}`` from a file of one word per line (line i: word i - 1)."""
    with _reading(vocab_path), _open(vocab_path, binary=True) as fh:
        words = _decode(fh.read(), vocab_path, 1).splitlines()
    if n_words is not None and len(words) != n_words:
        raise ValueError(f"{vocab_path}: {len(words)} words, but {corpus_path} has "
                         f"W = {n_words}")
    return dict(enumerate(words))


def _line_chunks(fh, size=CHUNK_BYTES):
    """Bytes of whole lines from the binary file ``fh``, about ``size`` at a time; a last line
    without its newline gets one."""
    rest = b""
    while chunk := fh.read(size):
        data = rest + chunk
        cut = data.rfind(b"\n") + 1
        if cut:
            yield data[:cut]
        rest = data[cut:]
    if rest:
        yield rest + b"\n"


def check_uci_triples(triples, n_docs, n_words, path, line_numbers):
    """ValueError naming the file and line of the first (docID, wordID, count) row of
    ``triples`` (n, 3) outside [1, D], [1, W] or >= 1; ``line_numbers`` (n,) of the rows."""
    for col, name, upper in ((0, "docID", n_docs), (1, "wordID", n_words), (2, "count", None)):
        bad = (triples[:, col] < 1) | ((triples[:, col] > upper) if upper else False)
        if bad.any():
            i = int(np.argmax(bad))
            limit = f"[1, {upper}]" if upper else ">= 1"
            raise ValueError(f"{path}, line {line_numbers[i]}: {name} {triples[i, col]} "
                             f"is not {limit}")


def _documents(blocks):
    """Documents as lists of (word_id, count) pairs from CSR blocks."""
    for block in blocks:
        for d in range(block.shape[0]):
            start, stop = block.indptr[d], block.indptr[d + 1]
            yield list(zip(block.indices[start:stop].tolist(), block.data[start:stop].tolist()))


class UCIBowCorpus:
    """A UCI bag-of-words corpus (``docword.*.txt[.gz]``, ``vocab.*.txt``) streamed from disk.

    docword: three header lines D, W, NNZ, then lines "docID wordID count" (1-based ids) sorted
    by docID, as the UCI repository's files are (``save_uci_bow`` writes them so); a repeated
    (doc, word) pair is summed. ``load_uci_bow`` reads the same files into memory (and accepts
    any order).

    Attributes
    ----------
    n_documents, n_features, nnz : the header's D, W, NNZ (``len(corpus)`` is D).
    id2word : dict id -> word from ``vocab_path``, or None.
    """

    def __init__(self, docword_path, vocab_path=None):
        self.path = Path(docword_path)
        header = read_head(self.path, 3)
        try:
            self.n_documents, self.n_features, self.nnz = (int(line) for line in header)
        except ValueError:
            raise ValueError(f"{self.path}: expected three header lines D, W, NNZ, got "
                             f"{header!r}") from None
        self.id2word = (None if vocab_path is None else
                        _read_vocabulary(vocab_path, self.n_features, self.path))

    def __len__(self):
        return self.n_documents

    def __iter__(self):
        return _documents(self.iter_csr(1024))

    def iter_triples(self, in_order=True):
        """(n, 3) int64 blocks of the data lines (docID, wordID, count), checked (in one pass,
        ``triples_valid``; a chunk that fails is checked again to name its first bad line);
        ``in_order``: the docIDs must not decrease, as streaming needs."""
        with _reading(self.path), _open(self.path, binary=True) as fh:
            for _ in range(3):
                fh.readline()
            line, last_doc, count = 4, 0, 0
            for data in _line_chunks(fh):
                numbers, block, n_lines = self._parse(data, line)
                line += n_lines
                if not triples_valid(block, last_doc, self.n_documents, self.n_features,
                                     in_order):
                    self._name_first_bad_line(block, numbers, last_doc)
                if len(block):
                    last_doc, count = int(block[-1, 0]), count + len(block)
                    yield block
        if count != self.nnz:
            raise ValueError(f"{self.path}: header says NNZ = {self.nnz}, found {count} lines")

    def _name_first_bad_line(self, block, numbers, last_doc):
        """Raise the ValueError that names the first line of ``block`` (line ``numbers[i]``
        for row i) out of range, else whose docID is below the one before it (the first row's:
        ``last_doc``)."""
        check_uci_triples(block, self.n_documents, self.n_features, self.path, numbers)
        bad = int(np.flatnonzero(np.diff(block[:, 0], prepend=last_doc) < 0)[0])
        raise ValueError(f"{self.path}, line {numbers[bad]}: docID {block[bad, 0]} after a "
                         "larger one: streaming needs lines sorted by docID (load_uci_bow "
                         "reads any order)")

    def _parse(self, data, first_line):
        """Line numbers and (n, 3) int64 triples of the non-blank lines of ``data`` (bytes of
        whole lines, the first numbered ``first_line``), and the number of lines. The
        common case (every line three integers and two single spaces) is parsed at once, in C
        (``plain_triples``); otherwise the lines are read as text, by one ``np.loadtxt`` call
        when they all hold three integers, else one by one, so that a malformed line is named."""
        block = plain_triples(data)
        if block is not None:
            return range(first_line, first_line + len(block)), block, len(block)
        lines = io.StringIO(_decode(data, self.path, first_line), newline=None).readlines()
        try:
            block = np.loadtxt(lines, dtype=np.int64, ndmin=2)
        except ValueError:
            block = None
        if block is not None and block.shape == (len(lines), 3):
            numbers = np.arange(first_line, first_line + len(lines))
        else:
            numbers = [first_line + i for i, text in enumerate(lines) if text.strip()]
            texts = [lines[n - first_line] for n in numbers]
            for n, text in zip(numbers, texts):
                fields = text.split()
                if len(fields) != 3 or not all(f.lstrip("-").isdigit() for f in fields):
                    raise ValueError(f"{self.path}, line {n}: expected 'docID wordID count' "
                                     f"(three integers), got {text.strip()!r}")
            block = np.array([text.split() for text in texts], dtype=np.int64).reshape(-1, 3)
        return numbers, block, len(lines)

    def iter_csr(self, batch_size):
        """CSR int64 blocks of ``batch_size`` consecutive documents (the last may be smaller),
        ``n_features`` columns, in docID order."""
        pending = [np.empty((0, 3), dtype=np.int64)]  # chunks of triples not in a block yet
        first = 0                                     # 0-based first document of the next block

        def block(n_rows):
            """The CSR block of the next n_rows documents, and the triples after them."""
            triples = np.concatenate(pending)
            # sorted by docID (1-based): row r starts at the first docID >= first + 1 + r
            indptr = np.searchsorted(triples[:, 0], np.arange(first + 1, first + n_rows + 2))
            cut = indptr[-1]
            X = sp.csr_matrix((triples[:cut, 2].copy(), triples[:cut, 1] - 1, indptr),
                              shape=(n_rows, self.n_features))
            X.sum_duplicates()                        # a repeated (doc, word) pair is summed
            return X, triples[cut:]

        for triples in self.iter_triples():
            pending.append(triples)
            # documents up to the last docID seen may still continue in the next lines
            while triples[-1, 0] - 1 >= first + batch_size:
                X, rest = block(batch_size)
                yield X
                pending, first = [rest], first + batch_size
        while first < self.n_documents:
            n_rows = min(batch_size, self.n_documents - first)
            X, rest = block(n_rows)
            yield X
            pending, first = [rest], first + n_rows


class LDACCorpus:
    """An LDA-C corpus (Blei's format; gensim's ``BleiCorpus``) streamed from disk.

    One document per line: "N id:count id:count ..." with N the number of pairs and 0-based
    word ids. ``n_features``: the vocabulary file's length when ``vocab_path`` is given (one
    word per line), else the largest id + 1, found with ``len()`` in one pass at construction.

    Attributes
    ----------
    n_documents, n_features, id2word (dict id -> word, or None).
    """

    def __init__(self, path, vocab_path=None):
        self.path = Path(path)
        self.id2word = None if vocab_path is None else _read_vocabulary(vocab_path)
        self.n_features = None if self.id2word is None else len(self.id2word)
        n_documents, largest = 0, -1
        for block in self._blocks():
            n_documents += block.shape[0]
            largest = max(largest, int(block.indices.max(initial=-1)))
        self.n_documents = n_documents
        if self.n_features is None:
            self.n_features = largest + 1
        elif largest >= self.n_features:
            raise ValueError(f"{self.path}: word id {largest} is beyond the {self.n_features} "
                             f"words of {vocab_path}")

    def __len__(self):
        return self.n_documents

    def __iter__(self):
        return _documents(self.iter_csr(1024))

    def _parse_line(self, text, line):
        fields = text.split()
        try:
            n = int(fields[0])
            pairs = [field.split(":") for field in fields[1:]]
            ids, counts = zip(*((int(w), int(c)) for w, c in pairs)) if pairs else ((), ())
        except (ValueError, IndexError):
            raise ValueError(f"{self.path}, line {line}: expected 'N id:count ...', got "
                             f"{text.strip()!r}") from None
        if n != len(ids) or min(ids, default=0) < 0 or min(counts, default=1) < 1:
            raise ValueError(f"{self.path}, line {line}: {n} pairs announced, {len(ids)} given, "
                             "ids must be >= 0 and counts >= 1")
        return ids, counts

    def _blocks(self, batch_size=CHUNK_LINES):
        """CSR blocks of ``batch_size`` lines; columns up to the largest id seen so far."""
        with _reading(self.path), _open(self.path, binary=True) as fh:
            line = 1
            while lines := list(islice(fh, batch_size)):
                try:
                    texts = [raw.decode("utf-8") for raw in lines]
                except UnicodeDecodeError:                # again, to name the line
                    texts = [_decode(raw, self.path, line + i) for i, raw in enumerate(lines)]
                parsed = [self._parse_line(text, line + i) for i, text in enumerate(texts)]
                lengths = [len(ids) for ids, _ in parsed]
                indices = np.fromiter((w for ids, _ in parsed for w in ids), dtype=np.int64)
                data = np.fromiter((c for _, cs in parsed for c in cs), dtype=np.int64)
                indptr = np.concatenate([[0], np.cumsum(lengths)])
                width = self.n_features or int(indices.max(initial=-1)) + 1
                X = sp.csr_matrix((data, indices, indptr), shape=(len(lines), width))
                X.sum_duplicates()
                yield X
                line += len(lines)

    def iter_csr(self, batch_size):
        """CSR int64 blocks of ``batch_size`` consecutive documents, ``n_features`` columns."""
        for X in self._blocks(batch_size):
            yield sp.csr_matrix((X.data, X.indices, X.indptr),
                                shape=(X.shape[0], self.n_features), dtype=np.int64)


def file_format(path):
    """The format of a corpus file, read from its first three lines: "mm" when it starts with
    "%%MatrixMarket", "ldac" when a line holds an "id:count" pair, else "uci". ValueError naming
    the file if it is damaged or not UTF-8 text."""
    head = read_head(path, 3)
    if head and head[0].startswith("%%MatrixMarket"):
        return "mm"
    return "ldac" if any(":" in line for line in head) else "uci"


def uci_vocabulary_path(path):
    """The ``vocab.NAME.txt`` beside a UCI ``docword.NAME.txt[.gz]``, or None."""
    path = Path(path)
    name = path.name.removesuffix(".gz")
    if not name.startswith("docword."):
        return None
    vocab = path.with_name("vocab." + name.removeprefix("docword."))
    return vocab if vocab.is_file() else None


def read_corpus(path, format="auto", vocabulary=None, *, stream=True, n_features=None):
    """A corpus file as ``fit`` takes it, and its words.

    Parameters
    ----------
    path : str or path-like
        A UCI, LDA-C or Matrix Market file, gzipped or not.
    format : {"auto", "uci", "ldac", "mm"}, default "auto"
        "auto": ``file_format(path)``.
    vocabulary : str or path-like, optional
        A file of one word per line (word i on line i + 1). UCI: default the ``vocab.NAME.txt``
        beside the file, if there is one.
    stream : bool, default True
        True: UCI and LDA-C files as streamed corpora (``UCIBowCorpus``, ``LDACCorpus``, which
        carry their words), so that memory stays one block of lines; False: every format as a
        CSR matrix. Matrix Market files are always read into memory.
    n_features : int, optional
        With ``stream=False``, the width of an LDA-C file's matrix (ValueError naming a word
        id beyond it; default its ``n_features``).

    Returns
    -------
    (X, id2word)
        The corpus, and ``{id: word}`` for a Matrix Market file with ``vocabulary`` (None
        otherwise: the streamed corpora name their words themselves).
    """
    if format == "auto":
        format = file_format(path)
    if format not in FILE_FORMATS:
        raise ValueError(f"format must be 'auto' or one of {FILE_FORMATS}, got {format!r}")
    if format == "mm":
        X = read_matrix_market(path)
        return X, None if vocabulary is None else _read_vocabulary(vocabulary, X.shape[1], path)
    if format == "uci":
        corpus = UCIBowCorpus(path, vocabulary or uci_vocabulary_path(path))
        if stream:
            return corpus, None
        return sp.vstack(list(corpus.iter_csr(CHUNK_LINES)), format="csr"), None
    corpus = LDACCorpus(path, vocabulary)
    if stream:
        return corpus, None
    return bow_to_csr(corpus, n_features or corpus.n_features), None
