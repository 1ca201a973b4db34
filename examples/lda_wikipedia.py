"""SCIR-LDA on the bundled Wikipedia sample: held-out perplexity, top words, a learning curve.

The corpus is the 250 Wikipedia articles gensim ships (``simplexsg.datasets.load_wiki_sample``:
200 training, 50 test articles). Perplexity is by document completion on the test articles
(``simplexsg.metrics``); the progress bar shows the latest held-out perplexity. Writes into
--out ``lda_wikipedia_perplexity.png`` (the perplexity against steps and training time, the
burn-in before the average shaded) and ``lda_wikipedia_uncertainty.png`` (four topics' top
words with 90% credible intervals from the kept topic samples).

    python examples/lda_wikipedia.py --out out
"""
import argparse
import time
from pathlib import Path

from simplexsg import SCIRLDA
from simplexsg._optional import pyplot
from simplexsg._validation import check_output_path
from simplexsg.datasets import load_wiki_sample
from simplexsg.lda.plots import plot_perplexity, plot_topic_uncertainty


def save(fig, path):
    fig.savefig(path, dpi=120)
    pyplot().close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out")
    parser.add_argument("--topics", type=int, default=20)
    parser.add_argument("--passes", type=int, default=None,
                        help="passes over the data (default: the estimator's, 20)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    png = check_output_path("--out", out / "lda_wikipedia_perplexity.png")
    intervals = check_output_path("--out", out / "lda_wikipedia_uncertainty.png")

    data = load_wiki_sample()
    print(f"{data.X_train.shape[0]} training and {data.X_test.shape[0]} test articles, "
          f"{data.X_train.shape[1]} words, {int(data.X_train.sum())} training tokens")
    lda = SCIRLDA(args.topics, max_iter=args.passes, n_jobs=args.n_jobs, random_state=args.seed,
                  evaluate_every=5, n_topic_samples=20, verbose=1)
    start = time.perf_counter()
    lda.fit(data.X_train, X_heldout=data.X_test, id2word=list(data.vocabulary))
    seconds = time.perf_counter() - start
    print(f"\nheld-out perplexity {lda.perplexity(data.X_test):.0f} after {seconds:.1f} s "
          f"({lda.n_batch_iter_} steps, {lda.n_documents_seen_} documents seen)\n")
    for k, words in enumerate(lda.top_words(10)):
        print(f"topic {k:2d}: {' '.join(word for word, _ in words)}")
    save(plot_perplexity(lda), png)
    save(plot_topic_uncertainty(lda, n=10, topics=range(4)), intervals)
    print(f"\nperplexity curve (burn-in shaded) written to {png}, top-word intervals to "
          f"{intervals}")


if __name__ == "__main__":
    main()
