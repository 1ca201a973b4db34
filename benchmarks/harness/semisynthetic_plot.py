"""The figures of ``lda_semisynthetic.py``: for each corpus (source and size), held-out
perplexity and topic recovery against training seconds, one curve per method, with the true
topics' and the unigram model's perplexity as the two ends of the scale."""
from simplexsg._optional import pyplot

#: Colour and marker of each method, the same in every panel.
STYLES = {"scir": ("C0", "o"), "tomotopy_2": ("C3", "s"), "tomotopy_1": ("C1", "s"),
          "gensim": ("C2", "^"), "sklearn": ("C4", "v")}


def plot_curves(results, png):
    """Write the figure of ``results`` (the JSON of ``lda_semisynthetic.py``) to ``png``: one
    row of two panels per corpus in ``results["runs"]`` (perplexity, then mean L1 recovery,
    against seconds on a log axis). No file when there is no run."""
    runs = results.get("runs", {})
    if not runs:
        return
    plt = pyplot()
    fig, axes = plt.subplots(len(runs), 2, figsize=(11, 3.6 * len(runs)), squeeze=False)
    for (key, entry), (ax, ax2) in zip(runs.items(), axes):
        refs = entry["references"]
        for method, result in entry["methods"].items():
            curve = sorted(result["curve"], key=lambda p: p["seconds"])
            colour, marker = STYLES.get(method, ("0.4", "x"))
            seconds = [p["seconds"] for p in curve]
            ax.plot(seconds, [p["perplexity"] for p in curve], marker=marker, color=colour,
                    label=method)
            ax2.plot(seconds, [p["recovery"] for p in curve], marker=marker, color=colour,
                     label=method)
        ax.axhline(refs["true_topics"], color="k", lw=0.8, ls="--", label="true topics")
        ax.axhline(refs["unigram"], color="0.6", lw=0.8, ls=":", label="unigram")
        top = refs["unigram"] + 0.5 * (refs["unigram"] - refs["true_topics"])
        ax.set(xscale="log", ylim=(0.97 * refs["true_topics"], top), xlabel="training seconds",
               ylabel="held-out perplexity",
               title=f"{entry['source']}, {entry['documents']:,} documents")
        ax2.set(xscale="log", yscale="log", xlabel="training seconds",
                ylabel="mean L1, true to fitted topics", title="recovery of the true topics")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
