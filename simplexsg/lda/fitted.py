"""The methods of a fitted LDA that read its topics: top words, topic text, coherence, credible
intervals of the top words, exports to gensim and pyLDAvis. ``LDA`` inherits them from
``TopicMethods``; each calls its namesake in ``simplexsg.lda.inspection``, ``uncertainty`` or
``export``."""
from . import export, inspection, uncertainty


class TopicMethods:
    """``LDA``'s methods over its fitted topics (``components_``, ``topic_samples_``)."""

    def top_words(self, n=10):
        """Each topic's ``n`` most probable words with their probabilities
        (``simplexsg.lda.inspection.top_words``).

        Parameters
        ----------
        n : int, default 10

        Returns
        -------
        list of K lists of (word, probability)
            Most probable first; words from ``vocabulary_``, else ``feature_names_in_``, else
            the column ids as strings.
        """
        return inspection.top_words(self, n)

    def format_topics(self, n=10):
        """The topics as text, one line per topic in gensim's ``print_topics`` format,
        ``0: 0.025*"word" + ...``.

        Parameters
        ----------
        n : int, default 10
            Words per topic.

        Returns
        -------
        str
        """
        return inspection.format_topics(self, n)

    def coherence(self, X_or_texts, measure="u_mass", top_n=10, vocabulary=None):
        """Coherence of each topic's ``top_n`` words by gensim's ``CoherenceModel``
        (``simplexsg.lda.inspection.coherence``).

        Parameters
        ----------
        X_or_texts : counts (n_docs, n_features) or a list of token lists
            "u_mass" takes either; "c_v", "c_uci" and "c_npmi" need token lists.
        measure : {"u_mass", "c_v", "c_uci", "c_npmi"}, default "u_mass"
        top_n : int, default 10
        vocabulary : sequence of str, optional
            The words of the columns, if the model has none.

        Returns
        -------
        Coherence
            ``per_topic`` (K,) and ``mean``; higher is better.
        """
        return inspection.coherence(self, X_or_texts, measure, top_n, vocabulary)

    def topic_word_intervals(self, n=10, level=0.9):
        """Posterior mean, standard deviation and credible interval of each topic's ``n`` top
        words' probabilities over the kept topic samples (``n_topic_samples``;
        ``simplexsg.lda.uncertainty.topic_word_intervals``).

        Parameters
        ----------
        n : int, default 10
            Words per topic: the most probable under ``components_``.
        level : float in (0, 1), default 0.9
            Probability of the equal-tailed interval.

        Returns
        -------
        TopicWordIntervals
            (K, n) arrays ``word_ids``, ``words``, ``mean``, ``sd``, ``lower``, ``upper``;
            ``level``; ``n_samples``.
        """
        return uncertainty.topic_word_intervals(self, n, level)

    def to_gensim(self):
        """The topics as a gensim ``LdaModel`` (``simplexsg.lda.export.to_gensim``): its
        ``get_topics()`` equals ``components_``; ``get_document_topics``,
        ``CoherenceModel(model=...)`` and ``save`` work.

        Returns
        -------
        gensim.models.LdaModel
        """
        return export.to_gensim(self)

    def pyldavis_data(self, X):
        """The keyword arguments of ``pyLDAvis.prepare`` for the documents X
        (``simplexsg.lda.export.pyldavis_data``; pyLDAvis is not a dependency).

        Parameters
        ----------
        X : counts (n_docs, n_features) or a list of bag-of-words documents

        Returns
        -------
        dict
            ``topic_term_dists``, ``doc_topic_dists``, ``doc_lengths``, ``vocab``,
            ``term_frequency``.
        """
        return export.pyldavis_data(self, X)
