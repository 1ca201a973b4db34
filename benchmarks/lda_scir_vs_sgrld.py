"""The paper's Figure 3a on the bundled corpus: held-out perplexity against documents seen,
SCIR-LDA against SGRLD-LDA, each with its default (tuned) step sizes, at matched priors.

Data: ``load_wiki_sample()``; K = 20, alpha = 0.1, beta in {0.01, 0.1}; 3 seeds. Perplexity is
``LDA.perplexity`` on the 50 test articles (document completion, Gibbs fold-in) every 10 steps of
50 documents. Writes the JSON to --out and the PNG beside it.

    python benchmarks/lda_scir_vs_sgrld.py --out benchmarks/results/lda_scir_vs_sgrld.json
"""
import numpy as np

from simplexsg import LDA
from simplexsg._optional import pyplot
from simplexsg.datasets import load_wiki_sample

from harness import cli

SAMPLERS, BETAS, K, ALPHA = ("scir", "sgrld"), (0.01, 0.1), 20, 0.1


def plot(results, path):
    plt = pyplot()
    fig, axes = plt.subplots(1, len(BETAS), figsize=(6 * len(BETAS), 4.5))
    for ax, beta in zip(axes, BETAS):
        for sampler, color in zip(SAMPLERS, ("C0", "C3")):
            for i, run in enumerate(results["curves"][f"{sampler} beta={beta}"]):
                ax.plot([h["documents"] for h in run], [h["perplexity"] for h in run],
                        color=color, alpha=0.7, label=sampler.upper() if i == 0 else None)
        ax.set_xlabel("documents seen")
        ax.set_ylabel("held-out perplexity")
        ax.set_title(f"K = {K}, alpha = {ALPHA}, beta = {beta}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(seeds=1), seeds=3)
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
    cli.write_results({"seeds": args.seeds, "curves": curves}, args.out, plot)


if __name__ == "__main__":
    main()
