"""Lazy corpus readers (#11 item 1): UCI bag-of-words and LDA-C files streamed from disk."""
import gc
import gzip
import io
import re
import shutil
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from gensim.corpora import BleiCorpus, MmCorpus
from hypothesis import given, settings
from hypothesis import strategies as st

from simplexsg import SCIRLDA, readers
from simplexsg._ext._uci import plain_triples
from simplexsg.datasets import (LDACCorpus, UCIBowCorpus, load_uci_bow, make_lda_corpus,
                                save_uci_bow)

N_WORDS = 40


@pytest.fixture(scope="module")
def counts():
    X = make_lda_corpus(300, N_WORDS, 3, doc_length=20, random_state=0)[0].tolil()
    X[[0, 7, 150, 298, 299]] = 0          # empty documents: first, inside, and at the end
    return X.tocsr()


def documents(X):
    return [list(zip(X[i].indices.tolist(), X[i].data.tolist())) for i in range(X.shape[0])]


class ListStream:
    """A plain re-iterable corpus (no ``iter_csr``): the generic streaming path."""

    def __init__(self, docs):
        self.docs = docs

    def __len__(self):
        return len(self.docs)

    def __iter__(self):
        return iter(self.docs)


@pytest.fixture(scope="module")
def uci_files(counts, tmp_path_factory):
    folder = tmp_path_factory.mktemp("uci")
    vocabulary = [f"w{i}" for i in range(N_WORDS)]
    save_uci_bow(counts, folder / "docword.txt", vocabulary, folder / "vocab.txt")
    with open(folder / "docword.txt", "rb") as src, \
            gzip.open(folder / "docword.txt.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return folder


@pytest.mark.parametrize("name", ["docword.txt", "docword.txt.gz"])
@pytest.mark.parametrize("batch", [1, 7, 64, 1000])
def test_uci_corpus_round_trips_save_uci_bow(counts, uci_files, name, batch):
    corpus = UCIBowCorpus(uci_files / name, uci_files / "vocab.txt")
    assert (len(corpus), corpus.n_features, corpus.nnz) == (300, N_WORDS, counts.nnz)
    assert corpus.id2word[5] == "w5"
    blocks = list(corpus.iter_csr(batch))
    assert all(b.shape[0] == batch for b in blocks[:-1]) and blocks[-1].shape[0] <= batch
    np.testing.assert_array_equal(sp.vstack(blocks).toarray(), counts.toarray())
    assert list(corpus) == documents(counts)                  # re-iterable, empty ones included
    assert list(corpus) == documents(load_uci_bow(uci_files / name)[0])


def write(path, text):
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, message", [
    ("3\n4\n2\n1 1 2\n1 2\n", "line 5: expected 'docID wordID count'"),
    ("3\n4\n2\n1 1 2\n1 x 1\n", "line 5: expected"),
    ("3\n4\n2\n1 1 2\n4 1 1\n", r"line 5: docID 4 is not \[1, 3\]"),
    ("3\n4\n2\n1 1 2\n1 5 1\n", r"line 5: wordID 5 is not \[1, 4\]"),
    ("3\n4\n2\n1 1 2\n1 2 0\n", "line 5: count 0 is not >= 1"),
    ("3\n4\n2\n2 1 2\n1 2 1\n", "line 5: docID 1 after a larger one"),
    ("3\n4\n3\n1 1 2\n1 2 1\n", "header says NNZ = 3, found 2"),
])
def test_uci_corpus_names_the_malformed_line(tmp_path, body, message):
    corpus = UCIBowCorpus(write(tmp_path / "docword.txt", body))
    with pytest.raises(ValueError, match=message):
        list(corpus.iter_csr(2))


@pytest.mark.parametrize("text", [
    b"1 2 3\n\n4 5 6\n",              # a blank line
    b"1 2 3\n-4 5 6\n",                # a sign
    b"1 2 3\n4\t5 6\n",               # a tab
    b"1 2 3\r\n4 5 6\r\n",           # CR LF
    b"1 2 3\n4 5\n",                   # two fields
    b"1 2 3 4\n5 6 7\n",               # four fields
    b"1 2  3\n4 5 6\n",                # two spaces in a row
    b" 1 2 3\n4 5 6 \n",               # leading and trailing spaces
    b"1 2\n3 4 5 6\n",                 # fields that add up, lines that do not
    b"1 2 99999999999999999999\n",     # beyond int64
])
def test_only_plain_lines_are_parsed_at_once(text):
    assert plain_triples(text) is None
    np.testing.assert_array_equal(plain_triples(b"1 2 3\n40 5 600\n"),
                                  [[1, 2, 3], [40, 5, 600]])


PLAIN_LINE = re.compile(rb"([0-9]+) ([0-9]+) ([0-9]+)")


def reference_triples(data):
    """What plain_triples must return, line by line in Python: the triples when every line
    of ``data`` (ending in a newline) is plain and fits int64, else None."""
    rows = []
    for line in data.split(b"\n")[:-1]:
        match = PLAIN_LINE.fullmatch(line)
        if match is None or any(int(g) > np.iinfo(np.int64).max for g in match.groups()):
            return None
        rows.append([int(g) for g in match.groups()])
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, np.iinfo(np.int64).max)] * 3), max_size=20))
def test_plain_triples_parses_every_int64(rows):
    data = b"".join(b"%d %d %d\n" % row for row in rows)
    expected = np.array(rows, dtype=np.int64).reshape(-1, 3)
    np.testing.assert_array_equal(plain_triples(data), expected)


@settings(max_examples=500, deadline=None)
@given(st.text("0123456789 \n\t\r-", max_size=60).map(lambda t: t.encode() + b"\n"),
       st.sampled_from([b"", b"9223372036854775807 1 1\n", b"9223372036854775808 1 1\n"]))
def test_plain_triples_agrees_with_a_line_by_line_parser(text, prefix):
    data = prefix + text
    expected = reference_triples(data)
    found = plain_triples(data)
    if expected is None:
        assert found is None
    else:
        np.testing.assert_array_equal(found, expected)


def test_chunks_of_whole_lines_and_line_numbers_across_them(tmp_path, monkeypatch):
    chunks = list(readers._line_chunks(io.BytesIO(b"12 3\n4 56\n7 8 9"), size=4))
    assert b"".join(chunks) == b"12 3\n4 56\n7 8 9\n"
    assert all(chunk.endswith(b"\n") for chunk in chunks)
    # a malformed line far into the file is named, whatever the chunks; so is a docID below
    # the one before it, also where the two lines fall in different chunks
    bodies = {"line 44: expected": "3\n4\n60\n" + "1 1 1\n" * 40 + "1 1 x\n" + "1 1 1\n" * 19,
              "line 44: docID 1 after a larger one":
              "3\n4\n60\n" + "1 1 1\n" * 20 + "2 1 1\n" * 20 + "1 1 1\n" * 20}
    line_chunks = readers._line_chunks
    for size in (7, 64, 1 << 20):
        monkeypatch.setattr(readers, "_line_chunks", lambda fh, size=size: line_chunks(fh, size))
        for message, body in bodies.items():
            with pytest.raises(ValueError, match=message):
                list(UCIBowCorpus(write(tmp_path / "docword.txt", body)).iter_csr(2))


def test_uci_corpus_rejects_a_bad_header_or_vocabulary(tmp_path):
    with pytest.raises(ValueError, match="three header lines"):
        UCIBowCorpus(write(tmp_path / "a.txt", "3\nfour\n1\n1 1 1\n"))
    docword = write(tmp_path / "b.txt", "1\n3\n1\n1 1 1\n")
    with pytest.raises(ValueError, match="2 words, but .* has W = 3"):
        UCIBowCorpus(docword, write(tmp_path / "v.txt", "a\nb\n"))


def test_ldac_corpus_round_trips_gensims_blei_format(counts, tmp_path):
    path = tmp_path / "corpus.lda-c"
    BleiCorpus.serialize(str(path), documents(counts),
                         id2word={i: f"w{i}" for i in range(N_WORDS)})
    corpus = LDACCorpus(path, tmp_path / "corpus.lda-c.vocab")
    assert (len(corpus), corpus.n_features, corpus.id2word[3]) == (300, N_WORDS, "w3")
    np.testing.assert_array_equal(sp.vstack(list(corpus.iter_csr(64))).toarray(),
                                  counts.toarray())
    assert list(corpus) == documents(counts)
    bare = LDACCorpus(path)                                  # no vocabulary: largest id + 1
    assert bare.n_features == counts.indices.max() + 1


@pytest.mark.parametrize("body, message", [
    ("2 0:1 3:2\n2 1:1\n", "line 2: 2 pairs announced, 1 given"),
    ("1 0:1\n1 a:1\n", "line 2: expected 'N id:count"),
    ("1 0:1\n1 2:0\n", "line 2: .* counts >= 1"),
])
def test_ldac_corpus_names_the_malformed_line(tmp_path, body, message):
    with pytest.raises(ValueError, match=message):
        LDACCorpus(write(tmp_path / "c.lda-c", body))


def test_fit_streams_a_reader_like_any_corpus(counts, uci_files):
    corpus = UCIBowCorpus(uci_files / "docword.txt.gz", uci_files / "vocab.txt")
    model = SCIRLDA(3, max_iter=3, random_state=0).fit(corpus)
    assert model.vocabulary_[7] == "w7" and model.n_features_in_ == N_WORDS
    generic = SCIRLDA(3, max_iter=3, random_state=0).fit(
        ListStream(documents(counts)), id2word=corpus.id2word)
    np.testing.assert_array_equal(model.components_, generic.components_)
    with pytest.raises(ValueError, match="the corpus has 40 words, but id2word has 3"):
        SCIRLDA(3, max_iter=1).fit(corpus, id2word={0: "a", 1: "b", 2: "c"})


def test_gensim_mmcorpus_takes_id2word_or_its_header_size(counts, tmp_path):
    """With id2word, a gensim MmCorpus streams like any corpus; without, its header's
    ``num_terms`` is the vocabulary size (as in tests/lda/test_lda_edge_inputs.py)."""
    MmCorpus.serialize(str(tmp_path / "c.mm"), documents(counts))
    mm = MmCorpus(str(tmp_path / "c.mm"))
    id2word = {i: f"w{i}" for i in range(N_WORDS)}
    model = SCIRLDA(3, max_iter=3, random_state=0).fit(mm, id2word=id2word)
    generic = SCIRLDA(3, max_iter=3, random_state=0).fit(ListStream(documents(counts)),
                                                         id2word=id2word)
    np.testing.assert_array_equal(model.components_, generic.components_)
    assert SCIRLDA(3, max_iter=1).fit(mm).n_features_in_ == mm.num_terms


# ---------------------------------------------------------------- damaged files (#35 item 4)
def ldac_text(X):
    return "".join(f"{row.nnz} " + " ".join(f"{j}:{c}" for j, c in zip(row.indices, row.data))
                   + "\n" for row in X)


@pytest.fixture
def damaged(counts, uci_files, tmp_path):
    """Gzipped UCI and LDA-C files cut in half, with an invalid first deflate block type
    (zlib.error), or with a wrong CRC (gzip.BadGzipFile)."""
    texts = {"docword.txt": (uci_files / "docword.txt").read_bytes(),
             "c.ldac": ldac_text(counts).encode()}
    for name, data in texts.items():
        packed = gzip.compress(data, mtime=0)
        middle = len(packed) // 2
        (tmp_path / f"cut.{name}.gz").write_bytes(packed[:middle])
        (tmp_path / f"zlib.{name}.gz").write_bytes(packed[:10] + b"\xff" + packed[11:])
        (tmp_path / f"crc.{name}.gz").write_bytes(packed[:-8] + bytes([packed[-8] ^ 0xFF])
                                                  + packed[-7:])
    return tmp_path


def test_a_truncated_gzip_file_is_named_where_it_is_met(damaged):
    """The header survives the cut: UCIBowCorpus meets the end while streaming, LDACCorpus
    (which counts its documents at construction) then; no bare EOFError either way."""
    cut = damaged / "cut.docword.txt.gz"
    corpus = UCIBowCorpus(cut)
    assert (corpus.n_documents, corpus.n_features) == (300, N_WORDS)
    message = re.escape(f"{cut}: truncated gzip file: its compressed data ends early")
    for read in (lambda: list(corpus.iter_csr(64)), lambda: list(corpus),
                 lambda: load_uci_bow(cut)):
        with pytest.raises(ValueError, match=message):
            read()
    with pytest.raises(ValueError, match=re.escape(f"{damaged / 'cut.c.ldac.gz'}: truncated")):
        LDACCorpus(damaged / "cut.c.ldac.gz")


@pytest.mark.parametrize("kind, error", [("zlib", "Error -3 while decompressing data: "
                                                 "invalid block type"),
                                         ("crc", "CRC check failed")])
def test_a_corrupt_gzip_file_is_named(damaged, kind, error):
    for name, read in (("docword.txt", lambda path: list(UCIBowCorpus(path).iter_csr(64))),
                       ("docword.txt", load_uci_bow), ("c.ldac", LDACCorpus)):
        path = damaged / f"{kind}.{name}.gz"
        with pytest.raises(ValueError, match=re.escape(f"{path}: corrupt gzip file ({error}")):
            read(path)


@pytest.mark.parametrize("gzipped", [False, True])
def test_bytes_that_are_not_utf8_are_named_by_file_and_line(tmp_path, gzipped):
    def save(name, data):
        path = tmp_path / (name + ".gz" if gzipped else name)
        path.write_bytes(gzip.compress(data) if gzipped else data)
        return path

    cases = [(lambda p: list(UCIBowCorpus(p).iter_csr(8)), "d.txt",
              b"2\n3\n2\n1 1 2\n2 3 \xe9\n", 5, 0xE9),   # the body: while streaming
             (UCIBowCorpus, "h.txt", b"2\n3\xff\n1\n1 1 2\n", 2, 0xFF),   # the header
             (LDACCorpus, "c.ldac", b"1 0:2\n0\n1 1:1\x80\n", 3, 0x80),
             (lambda p: UCIBowCorpus(tmp_path / "d.txt", p), "vocab.txt", b"a\nb\xc3(\nc\n",
              2, 0xC3),
             (UCIBowCorpus, "binary.dat", bytes(range(256)) * 4, 2, 0x80)]
    (tmp_path / "d.txt").write_bytes(b"2\n3\n1\n1 1 2\n")
    for read, name, data, line, byte in cases:
        path = save(name, data)
        with pytest.raises(ValueError, match=re.escape(f"{path}, line {line}: not UTF-8 text "
                                                       f"(byte {byte:#04x})")):
            read(path)


def test_read_matrix_market_names_the_file_and_leaves_nothing_behind(counts, tmp_path,
                                                                      monkeypatch):
    """Its errors name the file, and scipy's reader is released before the file is closed:
    no "Exception ignored ... I/O operation on closed file" (unraisable) after them."""
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    scipy.io.mmwrite(tmp_path / "c.mtx", counts)
    packed = gzip.compress((tmp_path / "c.mtx").read_bytes())
    (tmp_path / "c.mtx.gz").write_bytes(packed)
    (tmp_path / "cut.mtx.gz").write_bytes(packed[:len(packed) // 2])
    (tmp_path / "bytes.mtx").write_bytes(b"%%MatrixMarket matrix coordinate integer general\n"
                                         b"2 2 1\n1 1 \xff\n")
    for name in ("c.mtx", "c.mtx.gz"):
        X = readers.read_matrix_market(tmp_path / name)
        assert sp.isspmatrix_csr(X) and (X != counts).nnz == 0
    for name, message in [("uci/docword.txt", "not a Matrix Market file (Line 1: Not a Matrix"),
                          ("cut.mtx.gz", "truncated gzip file"),
                          ("bytes.mtx", "not UTF-8 text (byte 0xff)")]:
        path = tmp_path / name
        if name.startswith("uci/"):
            path.parent.mkdir()
            save_uci_bow(counts, path)
        with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
            readers.read_matrix_market(path)
    gc.collect()
    assert unraisable == []


# ---------------------------------------------------------------- read_corpus
@pytest.fixture
def corpus_files(counts, tmp_path):
    """The same counts as a UCI file (with its vocabulary beside it), an LDA-C file and a
    Matrix Market file, gzipped where the name says so."""
    words = [f"w{j}" for j in range(N_WORDS)]
    uci = tmp_path / "docword.c.txt.gz"
    save_uci_bow(counts, uci, vocabulary=words, vocab_path=tmp_path / "vocab.c.txt")
    ldac = tmp_path / "c.ldac"
    BleiCorpus.serialize(str(ldac), documents(counts), id2word=dict(enumerate(words)))
    mm = tmp_path / "c.mm"
    MmCorpus.serialize(str(mm), documents(counts), id2word=dict(enumerate(words)))
    return {"uci": uci, "ldac": ldac, "mm": mm}


def test_file_format_tells_the_three_formats_apart(corpus_files):
    for fmt, path in corpus_files.items():
        assert readers.file_format(path) == fmt


def test_read_corpus_gives_the_same_counts_streamed_or_in_memory(counts, corpus_files):
    for fmt, path in corpus_files.items():
        X, id2word = readers.read_corpus(path, stream=False, n_features=N_WORDS)
        np.testing.assert_array_equal(X.toarray(), counts.toarray(), err_msg=fmt)
        vocabulary = path.with_name(path.name + ".vocab") if fmt == "ldac" else None  # gensim's
        streamed, _ = readers.read_corpus(path, vocabulary=vocabulary)
        if fmt != "mm":                              # Matrix Market is always in memory
            assert not sp.issparse(streamed)
            stacked = sp.vstack(list(streamed.iter_csr(64)), format="csr")
            np.testing.assert_array_equal(stacked.toarray(), counts.toarray(), err_msg=fmt)
    uci, _ = readers.read_corpus(corpus_files["uci"])
    assert uci.id2word[3] == "w3"                      # the vocab file beside it, found


def test_read_corpus_names_a_bad_format_and_an_lda_c_id_beyond_the_width(corpus_files):
    with pytest.raises(ValueError, match="format must be 'auto' or one of"):
        readers.read_corpus(corpus_files["uci"], format="csv")
    with pytest.raises(ValueError, match=r"word ids must lie in \[0, 5\)"):
        readers.read_corpus(corpus_files["ldac"], stream=False, n_features=5)
