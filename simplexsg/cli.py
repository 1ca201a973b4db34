"""The ``simplexsg`` command line (also ``python -m simplexsg``): fit an LDA model to a corpus
file or a folder of text files, then print its topics, its documents' topic proportions,
its held-out perplexity or its topics' coherence.

Corpora: UCI bag-of-words (``docword.NAME.txt[.gz]``, with ``vocab.NAME.txt`` beside it
read automatically), LDA-C (Blei's ``N id:count ...``), Matrix Market (documents as rows,
as gensim's ``MmCorpus`` writes), or a folder of ``.txt`` files (searched recursively, in
sorted order), counted by scikit-learn's ``CountVectorizer`` with its English stop words.
Models are ``joblib`` files holding the fitted ``LDA``; ``joblib.load`` reads them (a
pickle: load only files you trust).

``fit`` checks that its ``-o`` file can be written before it reads the corpus, and writes it
atomically (``atomic_dump``). If writing fails after training all the same (a full disk), the
model goes to a new file named like it in the current folder, else in the temporary folder,
and the one-line error says where (exit status 1). Ctrl-C during training saves the
unfinished model to ``-o`` and says so (exit status 130); ``--checkpoint-every N`` also saves
it every N steps; ``fit ... --resume``, the same command again, continues it to the model
the uninterrupted fit would have made, bit for bit.

Exit status: 0 on success; 1 when a file is missing, unreadable, malformed or damaged (a
truncated gzip file, bytes that are not UTF-8), or cannot be written, with a one-line message
on stderr; 2 for a malformed command line (argparse's); 130 on Ctrl-C; 141 when stdout is a
pipe closed early (``... | head``): output stops quietly, as for the programs killed by
SIGPIPE, whose status the shell shows as 141.
"""
import argparse
import contextlib
import csv
import hashlib
import os
import secrets
import sys
import tempfile
from pathlib import Path

from ._cli_corpora import (FORMATS, UserError, corpus_format, documents, existing, tokens,
                           training_corpus)
from ._fitting import atomic_dump, result_params
from ._validation import check_output_path
from .lda import LDA
from .lda.inspection import MEASURES, TEXT_MEASURES, coherence, format_topics
from .readers import LDACCorpus, UCIBowCorpus


# ---------------------------------------------------------------- models
def load_model(path):
    """The fitted LDA in a joblib file written by ``simplexsg fit``."""
    import joblib

    path = existing(path)
    try:
        model = joblib.load(path)
    except Exception as exc:                 # joblib/pickle raise many types on foreign files
        raise UserError(f"{path}: not a model file ({type(exc).__name__}: {exc})") from None
    if not isinstance(model, LDA) or not hasattr(model, "components_"):
        raise UserError(f"{path}: not a fitted simplexsg LDA model "
                        f"(found {type(model).__name__})")
    return model


def interrupted_model(path):
    """The unfinished LDA fit in ``path`` (a checkpoint, or a model saved on Ctrl-C)."""
    model = load_model(path)
    if not getattr(model, "interrupted_", False):
        raise UserError(f"{path}: its fit is finished ({model.stop_reason_}): nothing to "
                        "resume; leave out --resume to fit anew")
    return model


def save_model(model, path):
    """Write the model to ``path`` (``atomic_dump``), or if that fails (a full disk) to a new
    file named like it in the current folder, else in the temporary folder: the trained model
    is not lost. Returns ``(where, problem)``: the file written, and None or why ``path``
    could not be; UserError if no file could be written."""
    try:
        atomic_dump(model, path)
        return path, None
    except OSError as exc:
        problem = f"cannot write {path} ({exc.strerror or exc})"
    tried = [path.absolute().parent]
    for folder in (Path.cwd(), Path(tempfile.gettempdir())):
        if any(folder.samefile(other) for other in tried if other.is_dir()):
            continue
        tried.append(folder)
        where = folder / f"{path.stem}-{secrets.token_hex(4)}{path.suffix}"
        try:
            atomic_dump(model, where)
            return where, problem
        except OSError:
            continue
    raise UserError(f"{problem}, nor a copy in {' or '.join(map(str, tried[1:]))}: the "
                    "trained model is lost")


def file_hash(path):
    """A hash of a file's bytes: what ``--resume`` checks a streamed corpus by (LDA checks
    a stream by its size only, and the other corpora by their counts)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "blake2b").hexdigest()


# ---------------------------------------------------------------- commands
def fit_params(args, output):
    """The LDA parameters of ``fit``'s options."""
    every = args.checkpoint_every
    return dict(n_components=args.n_components, sampler=args.sampler,
                doc_topic_prior=args.doc_topic_prior, topic_word_prior=args.topic_word_prior,
                batch_size=args.batch_size, max_iter=args.max_iter, max_time=args.max_time,
                tol=args.tol, n_jobs=args.n_jobs, random_state=args.random_state,
                verbose=args.verbose, evaluate_every=args.evaluate_every,
                checkpoint_every=every, checkpoint_path=output if every else None)


def resume(model, params, path, corpus_hash):
    """The interrupted ``model`` of ``path`` set to continue with ``params``, after checking
    that they (and the streamed corpus's ``corpus_hash``) are those it was started with; LDA
    itself checks the counts and the parameters the options do not set."""
    stored = result_params(model)
    differ = [f"--{name.replace('_', '-')} was {stored[name]}, now {value}"
              for name, value in params.items() if name in stored and stored[name] != value]
    if differ:
        raise UserError(f"{path}: --resume needs the options of the interrupted fit: "
                        + "; ".join(differ))
    if getattr(model, "_cli_corpus_hash", corpus_hash) != corpus_hash:
        raise UserError(f"{path}: --resume needs the corpus of the interrupted fit, and this "
                        "file's content differs")
    return model.set_params(warm_start=True, **params)


def cmd_fit(args):
    output = check_output_path("--output", args.output)
    model = interrupted_model(output) if args.resume else None
    X, id2word = training_corpus(args)
    corpus_hash = file_hash(X.path) if isinstance(X, (UCIBowCorpus, LDACCorpus)) else None
    params = fit_params(args, output)
    if model is None:
        model = LDA(**params)
        model._cli_corpus_hash = corpus_hash          # kept in checkpoints, for --resume
    else:
        resume(model, params, output, corpus_hash)
    try:
        with contextlib.redirect_stdout(sys.stderr):  # progress lines go to stderr
            model.fit(X, id2word=id2word)
    except (KeyboardInterrupt, BrokenPipeError) as exc:   # Ctrl-C; stderr's reader gone
        if getattr(model, "stop_reason_", None) != "interrupted":
            raise                                      # not training yet: nothing to save
        where, problem = save_model(model, output)
        if isinstance(exc, BrokenPipeError):
            raise                                      # saved; nobody left to tell (141)
        hint = "" if problem is None else f" ({problem})"
        print(f"simplexsg fit: interrupted after {model.n_batch_iter_} steps; saved the "
              f"unfinished model to {where}{hint}; to continue it, run the same command with "
              f"--resume{'' if problem is None else f' -o {where}'}", file=sys.stderr)
        return 130
    where, problem = save_model(model, output)
    if problem is not None:
        raise UserError(f"{problem}; saved the model to {where} instead")
    print(f"simplexsg: {model.n_components} topics, {model.n_features_in_} words, "
          f"{model.n_batch_iter_} steps in {model.training_seconds_:.1f} s "
          f"({model.stop_reason_}); wrote {output}", file=sys.stderr)


def cmd_topics(args):
    print(format_topics(load_model(args.model), args.top_n))


def cmd_transform(args):
    if args.output != "-":
        check_output_path("--output", args.output)
    model = load_model(args.model)
    X, names = documents(args.corpus, args.format, model)
    proportions = model.transform(X)
    with output(args.output) as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["document"] + [f"topic_{k}" for k in range(proportions.shape[1])])
        writer.writerows([name] + [f"{p:.6g}" for p in row]
                         for name, row in zip(names, proportions))


def cmd_perplexity(args):
    model = load_model(args.model)
    X, _ = documents(args.corpus, args.format, model)
    print(f"{model.perplexity(X):.6g}")


def cmd_coherence(args):
    model = load_model(args.model)
    if args.measure in TEXT_MEASURES:
        path = existing(args.corpus, "folder")
        if corpus_format(path, args.format) != "text":
            raise UserError(f"{path}: measure {args.measure} needs a folder of text files "
                            "(word order); counts support u_mass only")
        data = tokens(path)
    else:
        data, _ = documents(args.corpus, args.format, model)
    result = coherence(model, data, measure=args.measure, top_n=args.top_n)
    for k, value in enumerate(result.per_topic):
        print(f"{k}: {value:.6g}")
    print(f"mean: {result.mean:.6g}")


@contextlib.contextmanager
def output(path):
    """A text file to write, or stdout for "-"."""
    if path == "-":
        yield sys.stdout
    else:
        with open(path, "w", encoding="utf-8", newline="") as fh:
            yield fh


# ---------------------------------------------------------------- parser
def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def add_corpus(parser, help_text):
    parser.add_argument("corpus", help=help_text)
    parser.add_argument("--format", choices=FORMATS, default="auto",
                        help="corpus format (default: read from the path; see 'simplexsg -h')")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="simplexsg", description="Latent Dirichlet allocation by SCIR / SGRLD.",
        epilog="Corpora: UCI bag-of-words (docword.NAME.txt[.gz], vocab.NAME.txt beside it), "
               "LDA-C (N id:count ...), Matrix Market (documents as rows), or a folder of .txt "
               "files (CountVectorizer, English stop words). Exit status 1: a missing, "
               "unreadable, malformed or damaged file, or one that cannot be written; 2: a "
               "malformed command line; 130: Ctrl-C; 141: stdout closed early (| head).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fit = commands.add_parser("fit", help="fit a model to a corpus and save it",
                              description="Fit LDA to a corpus; write the model (joblib). "
                                          "Ctrl-C saves the unfinished model to -o; --resume "
                                          "continues it.")
    add_corpus(fit, "training corpus: a file or a folder of .txt files")
    fit.add_argument("-o", "--output", required=True, help="model file to write")
    fit.add_argument("--vocab", help="vocabulary file, one word per line (UCI, LDA-C, Matrix "
                                     "Market)")
    fit.add_argument("-k", "--n-components", type=positive_int, default=10,
                     help="number of topics (default 10)")
    fit.add_argument("--sampler", choices=("scir", "sgrld"), default="scir")
    fit.add_argument("--doc-topic-prior", type=float, help="alpha (default 0.1)")
    fit.add_argument("--topic-word-prior", type=float, help="beta (default 0.1)")
    fit.add_argument("--batch-size", type=positive_int, help="documents per step")
    fit.add_argument("--max-iter", type=positive_int, help="passes over the corpus, at most")
    fit.add_argument("--max-time", type=float, help="training budget in seconds")
    fit.add_argument("--tol", type=float, help="stop when the convergence check stalls")
    fit.add_argument("--evaluate-every", type=int, default=0,
                     help="steps between perplexity evaluations (shown with -vv)")
    fit.add_argument("--n-jobs", type=int, default=1, help="threads (-1: all cores)")
    fit.add_argument("--random-state", type=int, help="seed: same seed and data, same model")
    fit.add_argument("--min-df", type=int, default=1,
                     help="text folders: drop words in fewer documents (default 1)")
    fit.add_argument("--max-df", type=float, default=1.0,
                     help="text folders: drop words in more than this fraction of documents")
    fit.add_argument("-v", "--verbose", action="count", default=0,
                     help="progress bar on stderr (needs tqdm); -vv also evaluation lines")
    fit.add_argument("--checkpoint-every", type=positive_int, metavar="N",
                     help="also save the unfinished model to -o every N steps (Ctrl-C saves "
                          "it in any case)")
    fit.add_argument("--resume", action="store_true",
                     help="continue the unfinished fit saved in -o (on Ctrl-C or by "
                          "--checkpoint-every): give the same corpus and options")
    fit.set_defaults(run=cmd_fit)

    topics = commands.add_parser("topics", help="print each topic's top words",
                                 description="Print each topic's top words, gensim style.")
    topics.add_argument("model")
    topics.add_argument("-n", "--top-n", type=positive_int, default=10)
    topics.set_defaults(run=cmd_topics)

    transform = commands.add_parser("transform", help="documents' topic proportions to CSV",
                                    description="Write each document's topic proportions "
                                                "(Gibbs fold-in) as CSV: document, topic_0, ...")
    transform.add_argument("model")
    add_corpus(transform, "documents: a file or a folder of .txt files")
    transform.add_argument("-o", "--output", default="-", help="CSV file (default stdout)")
    transform.set_defaults(run=cmd_transform)

    perplexity = commands.add_parser("perplexity", help="held-out perplexity of documents",
                                     description="Print the held-out perplexity (document "
                                                 "completion) of the documents.")
    perplexity.add_argument("model")
    add_corpus(perplexity, "test documents: a file or a folder of .txt files")
    perplexity.set_defaults(run=cmd_perplexity)

    coherent = commands.add_parser("coherence", help="topic coherence (gensim)",
                                   description="Print each topic's coherence and the mean "
                                               "(gensim's CoherenceModel).")
    coherent.add_argument("model")
    add_corpus(coherent, "reference documents (a text folder for c_v, c_uci, c_npmi)")
    coherent.add_argument("--measure", choices=MEASURES, default="u_mass")
    coherent.add_argument("-n", "--top-n", type=positive_int, default=10)
    coherent.set_defaults(run=cmd_coherence)
    return parser


def run(argv):
    """Parse the command line and run the command; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except BrokenPipeError:
        raise                           # for main: not a problem of the user's files
    except (UserError, OSError, ValueError, MemoryError, ImportError) as exc:
        print(f"simplexsg {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"simplexsg {args.command}: interrupted", file=sys.stderr)
        return 130


def main(argv=None):
    """Run the command line; return the exit status."""
    try:
        try:
            return run(argv)
        finally:
            sys.stdout.flush()          # so that a closed pipe shows here, not at exit
    except BrokenPipeError:
        # stdout is a pipe whose reader has gone (``| head``): stop quietly, with the status
        # of the programs SIGPIPE kills; Python's advice (docs of signal, "Note on SIGPIPE"):
        # point stdout at devnull, so that flushing it at exit does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
