"""The paper's Figure 3a on the bundled corpus: held-out perplexity against documents seen,
SCIR-LDA against SGRLD-LDA, each with its default (tuned) step sizes, at matched priors.

Data: ``load_wiki_sample()``; K = 20, alpha = 0.1, beta in {0.01, 0.1}; 3 seeds. Perplexity is
``LDA.perplexity`` on the 50 test articles (document completion, Gibbs fold-in) every 10 steps of
50 documents. Writes JSON and a PNG to --out.

    python benchmarks/lda_scir_vs_sgrld.py --out benchmarks/results
"""
import argparse
import json
from pathlib import Path

import numpy as np

from simplexsg import LDA
from simplexsg.datasets import load_wiki_sample

SAMPLERS, BETAS, K, ALPHA = ("scir", "sgrld"), (0.01, 0.1), 20, 0.1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    data = load_wiki_sample()
    curves = {}
    for beta in BETAS:
        for sampler in SAMPLERS:
            runs = []
            for seed in range(args.seeds):
                model = LDA(K, sampler=sampler, doc_topic_prior=ALPHA, topic_word_prior=beta,
                            evaluate_every=10, random_state=seed, n_jobs=2)
                model.fit(data.X_train, X_heldout=data.X_test)
                runs.append(model.history_)
            curves[f"{sampler} beta={beta}"] = runs
            final = [run[-1]["perplexity"] for run in runs]
            print(f"{sampler:>5} beta={beta:<5} final perplexity per seed: "
                  + ", ".join(f"{p:.0f}" for p in final) + f" (median {np.median(final):.0f})",
                  flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "lda_scir_vs_sgrld.json").write_text(json.dumps(curves, indent=2))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(BETAS), figsize=(6 * len(BETAS), 4.5))
    for ax, beta in zip(axes, BETAS):
        for sampler, color in zip(SAMPLERS, ("C0", "C3")):
            for i, run in enumerate(curves[f"{sampler} beta={beta}"]):
                ax.plot([h["documents"] for h in run], [h["perplexity"] for h in run],
                        color=color, alpha=0.7, label=sampler.upper() if i == 0 else None)
        ax.set_xlabel("documents seen")
        ax.set_ylabel("held-out perplexity")
        ax.set_title(f"K = {K}, alpha = {ALPHA}, beta = {beta}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "lda_scir_vs_sgrld.png", dpi=120)
    print(f"written {out / 'lda_scir_vs_sgrld.json'} and .png")


if __name__ == "__main__":
    main()
