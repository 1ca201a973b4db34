"""Rows for the DP mixture's kernel benchmarks: the first rows of a folder that ``dp_scale.py``
prepared (an ``N<rows>`` folder holding ``docword.txt``), read in blocks, never the whole file."""
import scipy.sparse as sp

from simplexsg.readers import UCIBowCorpus

BLOCK = 10_000                  # rows read at a time


def first_rows(folder, n_rows):
    """The first ``n_rows`` rows of ``folder / "docword.txt"`` (fewer if the file has fewer),
    CSR."""
    blocks, read = [], 0
    for X in UCIBowCorpus(folder / "docword.txt").iter_csr(BLOCK):
        blocks.append(sp.csr_matrix(X))
        read += X.shape[0]
        if read >= n_rows:
            break
    return sp.vstack(blocks, format="csr")[:n_rows]
