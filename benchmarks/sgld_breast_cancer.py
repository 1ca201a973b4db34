"""BayesianLogisticRegression with each sampler against sklearn's LogisticRegression.

Data: ``sklearn.datasets.load_breast_cancer`` (569 rows, 30 features, 2 classes), split 75/25
(stratified, seeds 0, ..., --seeds - 1), with the features standardised on the training part
("standardised") or as they come ("raw": column scales from 0.003 to 570). Every method fits
the training part and is scored on the test part by accuracy and log-loss (of ``predict_proba``:
for the samplers, the sigmoid averaged over the posterior samples). The samplers' prior
N(0, s^2) on the standardised coefficients, with a flat intercept, matches sklearn's L2 penalty
with C = s^2 on standardised features (sklearn leaves the intercept unpenalised):
"sklearn-lbfgs" fits the features given, "sklearn-scaled" is StandardScaler followed by it.
Seconds are the wall time of ``fit``. The table gives medians over the splits.

    python benchmarks/sgld_breast_cancer.py --seeds 5 \\
        --out benchmarks/results/sgld_breast_cancer.json
"""
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from simplexsg import BayesianLogisticRegression
from simplexsg.sgmcmc.regression import SAMPLERS

from harness import cli
from harness.corpora import stratified_split
from harness.measure import medians, timed_fit


def methods(prior_scale, n_iter):
    """name -> function (seed) -> unfitted classifier."""
    table = {"sklearn-lbfgs": lambda seed: LogisticRegression(C=prior_scale ** 2, max_iter=10000),
             "sklearn-scaled": lambda seed: make_pipeline(
                 StandardScaler(), LogisticRegression(C=prior_scale ** 2, max_iter=10000))}
    for sampler in SAMPLERS:
        table[sampler] = lambda seed, sampler=sampler: BayesianLogisticRegression(
            prior_scale=prior_scale, sampler=sampler, n_iter=n_iter, random_state=seed)
    return table


def split(seed, raw=False):
    return stratified_split(*load_breast_cancer(return_X_y=True), seed, standardise=not raw)


def main():
    parser = cli.Parser(__file__, __doc__, seeds=5, quick=dict(seeds=2, n_iter=500),
                        seeds_help="splits (and samplers' seeds) 0, ..., N - 1 (default 5)")
    parser.add_argument("--n-iter", type=int, default=2000, help="sampler steps")
    parser.add_argument("--prior-scale", type=float, default=1.0)
    args = parser.parse_args()

    results = {
        "data": "load_breast_cancer, 75/25 stratified split per seed, standardised on train "
                "or raw",
        "prior_scale": args.prior_scale, "sklearn_C": args.prior_scale ** 2,
        "n_iter": args.n_iter, "methods": {},
    }
    print(f"{'features':>12} {'method':>14} {'accuracy':>9} {'log-loss':>9} {'seconds':>8}   "
          f"(medians over {args.seeds} splits)")
    for features in ("standardised", "raw"):
        splits = [split(seed, raw=features == "raw") for seed in range(args.seeds)]
        for name, make in methods(args.prior_scale, args.n_iter).items():
            runs = []
            for seed, (X_train, X_test, y_train, y_test) in enumerate(splits):
                model, seconds = timed_fit(make(seed), X_train, y_train)
                runs.append({"split": seed, "seconds": seconds,
                             "accuracy": accuracy_score(y_test, model.predict(X_test)),
                             "log_loss": log_loss(y_test, model.predict_proba(X_test))})
            summary = medians(runs, ("accuracy", "log_loss", "seconds"), "median_")
            results["methods"][f"{name} ({features})"] = {"runs": runs, **summary}
            print(f"{features:>12} {name:>14} {summary['median_accuracy']:9.4f} "
                  f"{summary['median_log_loss']:9.4f} {summary['median_seconds']:8.3f}",
                  flush=True)
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
