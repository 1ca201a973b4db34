"""SCIR-LDA on the bundled Wikipedia sample: held-out perplexity, top words, a learning curve.

The corpus is the 250 Wikipedia articles gensim ships (``simplexsg.datasets.load_wiki_sample``:
200 training, 50 test articles). Perplexity is by document completion on the test articles
(``simplexsg.metrics``). Writes ``lda_wikipedia_perplexity.png`` into --out.

    python examples/lda_wikipedia.py --out out
"""
import argparse
import time
from pathlib import Path

import numpy as np

from simplexsg import SCIRLDA
from simplexsg.datasets import load_wiki_sample
from simplexsg._optional import pyplot


def plot_history(history, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([h["documents"] for h in history], [h["perplexity"] for h in history], marker=".")
    ax.set_xlabel("documents seen")
    ax.set_ylabel("held-out perplexity (document completion)")
    ax.set_title("SCIR-LDA, bundled Wikipedia sample")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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

    data = load_wiki_sample()
    print(f"{data.X_train.shape[0]} training and {data.X_test.shape[0]} test articles, "
          f"{data.X_train.shape[1]} words, {int(data.X_train.sum())} training tokens")
    lda = SCIRLDA(args.topics, max_iter=args.passes, n_jobs=args.n_jobs, random_state=args.seed,
                  evaluate_every=5, verbose=1)
    start = time.perf_counter()
    lda.fit(data.X_train, X_heldout=data.X_test)
    seconds = time.perf_counter() - start
    print(f"\nheld-out perplexity {lda.perplexity(data.X_test):.0f} after {seconds:.1f} s "
          f"({lda.n_batch_iter_} steps, {lda.n_documents_seen_} documents seen)\n")
    for k, topic in enumerate(lda.components_):
        print(f"topic {k:2d}: {' '.join(data.vocabulary[np.argsort(topic)[::-1][:10]])}")
    png = out / "lda_wikipedia_perplexity.png"
    plot_history(lda.history_, png)
    print(f"\nperplexity curve written to {png}")


if __name__ == "__main__":
    main()
