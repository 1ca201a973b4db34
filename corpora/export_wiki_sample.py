"""Write the bundled Wikipedia sample's train/test split as UCI bag-of-words files.

Tools outside Python (Mallet, R, the authors' reference code) can then fit and score on exactly the
split that ``simplexsg.datasets.load_wiki_sample`` gives (same preprocessing, same permutation):

    python corpora/export_wiki_sample.py --out corpora/wiki_sample

writes ``docword.wiki_train.txt`` (200 documents), ``docword.wiki_test.txt`` (50 documents) and
``vocab.wiki.txt`` (12,623 words; wordID i is line i) into --out.
"""
import argparse
from pathlib import Path

from simplexsg.datasets import load_wiki_sample, save_uci_bow


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="corpora/wiki_sample", help="output directory")
    parser.add_argument("--n-test", type=int, default=50)
    parser.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    data = load_wiki_sample(n_test=args.n_test, random_state=args.random_state)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_uci_bow(data.X_train, out / "docword.wiki_train.txt", data.vocabulary,
                 out / "vocab.wiki.txt")
    save_uci_bow(data.X_test, out / "docword.wiki_test.txt")
    print(f"wrote {data.X_train.shape[0]} train and {data.X_test.shape[0]} test documents, "
          f"{data.vocabulary.size} words, to {out}")


if __name__ == "__main__":
    main()
