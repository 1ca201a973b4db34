"""Optional dependencies, imported on use with a message that names the extra to install."""


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend (extra: ``simplexsg[plot]``)."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'simplexsg[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def tqdm():
    """tqdm's progress bar class (extra: ``simplexsg[progress]``)."""
    try:
        from tqdm.auto import tqdm as progress_bar
    except ImportError:
        raise ImportError("progress bars need tqdm: pip install 'simplexsg[progress]'") from None
    return progress_bar
