"""A spam filter on raw text: tokens as a multinomial text attribute, two scorers on its counts."""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from streamnb._accel.kernels import chi2_log_odds, posterior, spam_evidence
from streamnb.estimators.dirichlet import Dirichlet
from streamnb.estimators.robinson_fisher import RobinsonFisher, token_spamicity
from streamnb.features.email import tokenize_email
from streamnb.features.sms import tokenize_sms
from streamnb.features.text import tokenize_text
from streamnb.models.base import CountClassifier
from streamnb.models.params import Integer, OneOf, Real, validate_params
from streamnb.stats import InvalidRecord, RecordName
from streamnb.stats.collector import paused_collector
from streamnb.stats.encoder import encode, text_lookup
from streamnb.stats.frames import records_of
from streamnb.stats.ppm import ByteContexts
from streamnb.stats.score_sketch import ScoreSketch
from streamnb.stats.values import drawn_once, text_draws

__all__ = ["SpamFilter"]

_TOKENIZERS = {"auto": tokenize_text, "email": tokenize_email, "sms": tokenize_sms}
_ATTRIBUTE = "tokens"


class _ReadBatch(Sequence):
    """A batch's messages with the tokens read from them: what ``_check_many`` gives back for
    ``learn_many``'s pieces, its slices, which are learned from those tokens (a batch cut at
    decay points is tokenised once); the messages stay for what reads them raw (the byte
    contexts, the scores' lookups)."""

    __slots__ = ("bags", "messages")

    def __init__(self, messages: list, bags: list[frozenset[str]]) -> None:
        self.messages, self.bags = messages, bags

    def __len__(self) -> int:
        return len(self.messages)

    def __iter__(self) -> Iterator:
        return iter(self.messages)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return _ReadBatch(self.messages[i], self.bags[i])
        return self.messages[i]


def _messages(X: Any) -> Sequence:
    """The messages of a batch: a sequence or Series of texts, or a DataFrame of token counts
    (one row per message, its missing cells dropped); a batch read already as it is."""
    if type(X).__name__ == "DataFrame":
        return records_of(X)
    return X if isinstance(X, _ReadBatch) else list(X)


_NO_ZERO_FACTORS = array("q", (0, 0))
_ALL = sys.maxsize  # top_tokens=None: the mean over every known token
_IMMUTABLE = frozenset((str, bytes, frozenset))  # messages a batch's tokens can be kept for
_SPAM, _HAM = 0, 1  # the rows of the score sketch (and the byte contexts' classes)
PPM_BYTES = 2500  # what the byte-context model reads of a message: its first 2,500 bytes


def ppm_bytes(text: str | bytes) -> bytes:
    """What the byte-context part reads of a message: its first ``PPM_BYTES`` bytes (a str in
    UTF-8), without an mbox ``From `` envelope line (the receiving side's, dated)."""
    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    if raw.startswith(b"From "):
        raw = raw[raw.find(b"\n") + 1:] if b"\n" in raw else b""
    return raw[:PPM_BYTES]


class SpamFilter(CountClassifier, state_name="SpamFilter", presets={"spam-filter": {}}):
    """Spam filter on raw e-mail or short texts whose whole state is per-class token counts.

    Each message becomes the set of its tokens (`streamnb.features.tokenize_text`: e-mail or
    SMS, detected), learned as one *text* attribute (the binary multinomial event model: each
    distinct token is one draw). The score is the spam log-odds of two readings of the same
    counts::

        z = mean_w∈K d(w)  +  fisher_weight · ln(I / (1 − I)),   d(w) = ln θ(w|spam) − ln θ(w|ham)

        θ(w | c) = (N(w, c) + alpha) / (T(c) + alpha·|V|)       (Lidstone, multinomial)

    with ``N(w, c)`` the class-c messages containing ``w``, ``T(c)`` their tokens, ``|V|`` the
    vocabulary seen so far, ``K`` the ``top_tokens`` known tokens of the message with the largest
    |d(w)| (all of them if it has fewer), and ``I`` Robinson–Fisher's
    indicator (:class:`~streamnb.estimators.RobinsonFisher`, parameters ``s``, ``x``,
    ``min_dev``, ``max_tokens``), clipped to [ε, 1 − ε] with ε = 1e-4 so that neither part
    drowns the other. Tokens never seen in training carry no evidence. Learning and scoring
    cost O(tokens in the message), whatever the vocabulary. The defaults and how they were
    chosen: docs/spam.md.

    Both classes exist from the start (a message scores 0 before anything is learned). A
    message is spam when ``z > threshold``; :meth:`verdict_one` also says ``"unsure"`` when
    ``|z − threshold| < unsure`` (bogofilter's ternary habit). Probabilities are
    ``σ(z)`` and ``σ(−z)``: a monotone reading of the score, not calibrated.

    Parameters
    ----------
    alpha
        Lidstone pseudo-count of the multinomial part.
    fisher_weight
        Weight of the Fisher part's log-odds.
    top_tokens
        How many of the most extreme tokens the multinomial mean takes (``None``: all).
    s, x, min_dev, max_tokens
        Robinson–Fisher parameters (``max_tokens=None``: no cap).
    tokenizer
        ``"auto"`` (e-mail if the text opens with a header block, else short text),
        ``"email"`` or ``"sms"``.
    spam_label, ham_label
        The two labels learned; any other label is rejected.
    threshold, unsure
        Decision threshold on the log-odds and half-width of the unsure band around it.
    max_ham_rate
        The share of ham the operator accepts to lose as spam (e.g. ``0.001``), or ``None``.
        When given, the decision threshold is learned instead of fixed: every labelled message
        counts its score, taken before it is learned, in a per-class histogram of scores
        (:class:`~streamnb.stats.score_sketch.ScoreSketch`, bins of 0.05 on [−40, 40)), and
        the threshold in force is the lowest bin edge with at most ``max_ham_rate`` of the
        recent ham scores at or above it. A quantile of 1 − r needs some 1/r scores: until the
        histogram holds ``1 / max_ham_rate`` ham (the warm-up), ``threshold`` is in force. The
        histogram is part of the state: it adds in ``merge``, forgets in ``decay`` and is
        saved with the model. ``learn_many`` counts each message's score under the state
        before the batch (the scores a prequential service publishes for it), ``learn_one``
        under the state before the message. docs/spam.md gives the realised rates.
    score_half_life
        How many scores of its class a score outweighs in the histogram before it weighs half
        (``None``: ``1 / max_ham_rate``, so the histogram holds about the last 1.44/r ham):
        the scores drift as the filter learns, and old ones would hold the threshold where
        the filter was. Only read with ``max_ham_rate``.
    ppm_order, ppm_weight, ppm_memory
        With ``ppm_order`` (0..6), the score also adds ``ppm_weight`` times a byte-level
        compression model's evidence: ``(ln P_spam(x) − ln P_ham(x)) / 2500`` for the first
        2,500 bytes x of the raw message (without an mbox ``From `` line), each class's model
        an adaptive interpolated PPM-D over contexts of 0..``ppm_order`` bytes
        (:class:`~streamnb.stats.ppm.ByteContexts`) held in ``ppm_memory`` bytes (it forgets
        its rarest contexts at that budget). Its counts are part of the state (merged, decayed,
        saved). It reads the raw text: a message given as tokens is rejected. docs/spam.md
        gives the settings and what they gain.
    half_life, drift_detector, drift_decay
        Forgetting, as every model takes it (:class:`~streamnb.NaiveBayes`;
        docs/recipes/forgetting.md).

    Examples
    --------
    >>> from streamnb import SpamFilter
    >>> f = SpamFilter()
    >>> f.learn_one("WIN a FREE prize now, call 09061701461", "spam")
    >>> f.learn_one("are we still on for lunch tomorrow?", "ham")
    >>> f.predict_one("FREE prize! call now")
    'spam'
    >>> round(f.score_one("lunch tomorrow?"), 4)
    -2.5371

    Known tokens: ``lunch``, ``tomorrow``, ``caps:none`` (in 0 of 1 spam, 1 of 1 ham) and
    ``len:0-39`` (in both); each class has T = 9 tokens, |V| = 17. The multinomial part is the
    mean of 3 × ln((0 + 0.1)/(9 + 1.7)) − ln((1 + 0.1)/(9 + 1.7)) = 3 × −2.3979 and one 0:
    −1.7984. Robinson's f = (0.1·0.5 + 1·0)/(0.1 + 1) = 0.0455 for the three ham tokens
    (``len:0-39`` has f = ½ and is dropped); Fisher over those three gives ln(I/(1 − I)) =
    −5.910, weighted 1/8: −1.7984 − 0.7387 = −2.5371.

    References
    ----------
    A. McCallum, K. Nigam. A comparison of event models for naive Bayes text classification.
    AAAI-98 workshop. G. Robinson. A statistical approach to the spam problem. Linux Journal
    107, 2003. G. V. Cormack, T. R. Lynam. TREC 2005 spam track overview.

    """

    reads_token_sets = True

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "alpha": [Real(0, closed="neither")], "fisher_weight": [Real(0)],
        "top_tokens": [None, Integer(1)], "tokenizer": [OneOf(tuple(sorted(_TOKENIZERS)))],
        "threshold": [Real()], "unsure": [Real(0)],
        "max_ham_rate": [None, Real(0, 1, closed="neither")],
        "score_half_life": [None, Real(0, closed="neither")],
        "ppm_order": [None, Integer(0, 6)], "ppm_weight": [Real(0)],
        "ppm_memory": [Integer(1 << 16)]}

    def __init__(self, alpha: float = 0.1, fisher_weight: float = 0.125, s: float = 0.1,
                 x: float = 0.5, min_dev: float = 0.2, max_tokens: int | None = None,
                 top_tokens: int | None = 25,
                 tokenizer: str = "auto", spam_label: Any = "spam", ham_label: Any = "ham",
                 threshold: float = 0.0, unsure: float = 0.5,
                 max_ham_rate: float | None = None, score_half_life: float | None = None,
                 ppm_order: int | None = None, ppm_weight: float = 0.5,
                 ppm_memory: int = 1 << 26,
                 half_life: float | None = None, drift_detector: Any = None,
                 drift_decay: float = 0.5) -> None:
        super().__init__(half_life=half_life, drift_detector=drift_detector,
                         drift_decay=drift_decay)
        if spam_label == ham_label:
            raise ValueError("spam_label and ham_label must differ")
        self.alpha, self.fisher_weight, self.top_tokens = alpha, fisher_weight, top_tokens
        self.s, self.x, self.min_dev, self.max_tokens = s, x, min_dev, max_tokens
        self.tokenizer, self.spam_label, self.ham_label = tokenizer, spam_label, ham_label
        self.threshold, self.unsure, self.max_ham_rate = threshold, unsure, max_ham_rate
        self.score_half_life = score_half_life
        self.ppm_order, self.ppm_weight, self.ppm_memory = ppm_order, ppm_weight, ppm_memory
        validate_params(self)  # s, x, min_dev and max_tokens: RobinsonFisher checks them
        self._lidstone = Dirichlet(value_prior=alpha)  # θ = (N + α) / (T + α|V|)
        self._fisher = RobinsonFisher(s=s, x=x, min_dev=min_dev,
                                      max_tokens=max_tokens if max_tokens is not None
                                      else 2**62)
        self._clip = math.log((1 - 1e-4) / 1e-4)
        #: the scores of the labelled messages per class (spam, ham), with max_ham_rate
        self.scores = self._new_scores()
        #: the byte-context counts per class (spam, ham), with ppm_order
        self.contexts = (ByteContexts(ppm_order, ppm_memory) if ppm_order is not None
                         else None)
        if self.contexts is not None and self.contexts.max_bytes() < PPM_BYTES:
            raise ValueError(f"ppm_memory={ppm_memory} cannot hold a message of {PPM_BYTES} "
                             f"bytes at ppm_order={ppm_order}")

    def _new_scores(self) -> ScoreSketch | None:
        if self.max_ham_rate is None:
            return None
        return ScoreSketch(2, half_life=self.score_half_life if self.score_half_life is not None
                           else 1 / self.max_ham_rate)

    def keep_ham_rate(self, max_ham_rate: float | None) -> None:
        """Keep another ``max_ham_rate`` from now on (``None``: the fixed ``threshold``), as
        if the filter had been made with it: the scores counted so far stay and the threshold
        for the new rate is read off them at once (a filter that counted none starts its
        warm-up); from now on they forget at the new rate's pace (``score_half_life`` back to
        its default, ``1 / max_ham_rate``)."""
        if max_ham_rate is not None and not 0 < max_ham_rate < 1:
            raise ValueError(f"max_ham_rate must be in (0, 1) or None, got {max_ham_rate!r}")
        counted = self.scores
        self.max_ham_rate, self.score_half_life = max_ham_rate, None
        self.scores = self._new_scores()  # a new object: the cached threshold is of the old
        if counted is not None and self.scores is not None:
            self.scores.counts[:] = counted.counts

    @classmethod
    def _unit_test_params(cls):
        yield {"spam_label": True, "ham_label": False}  # river's text checks label with bools

    def _more_tags(self) -> set[str]:
        return {"text input"}

    @property
    def _multiclass(self) -> bool:
        return False

    # -- input --------------------------------------------------------------------------------
    def tokens(self, text: str | bytes | Mapping | frozenset[str] | set[str],
               where: str = "message") -> frozenset[str]:
        """The presence tokens of a message (what the filter learns and scores): the raw text
        tokenised, an already tokenised set of str tokens (what `tokenize_text` gives: the
        service decodes a text message into one), or the keys of an already tokenised
        ``{token: count}`` (river's ``BagOfWords``) whose counts are non-zero (the text rule,
        ``text_draws``, checks them: finite, >= 0)."""
        if isinstance(text, (str, bytes)):
            # prequential use scores a message, then learns the same one: tokenise it once
            return self._cache.get("tokens", (text,),
                                   lambda: _TOKENIZERS[self.tokenizer](text))
        if isinstance(text, (frozenset, set)):
            if not drawn_once(text):  # C: a set or frozenset (not a subclass) of str tokens
                bad = next((t for t in text if type(t) is not str), None)
                if bad is not None:
                    raise InvalidRecord(where, None, f"a token set holds str tokens only, got "
                                        f"{type(bad).__name__} {bad!r:.100}")
            # a frozenset as it is: scored then learned, the encoder keeps its lookup
            return text if type(text) is frozenset else frozenset(text)
        if isinstance(text, Mapping):
            if drawn_once(text):
                # {str token: True} (a text message decoded for models that read token dicts):
                # the text rule's whole-bag check, at C speed, gives what the per-token rule
                # below gives (each True a count of 1), at a fraction of its cost
                return frozenset(text)
            # the text kind's rule for each count, naming the token (the caller's field) at fault
            return frozenset(t for t, n in text.items() if text_draws({t: n}, where, t))
        raise InvalidRecord(where, None, f"expected the message text (str or bytes), a set of "
                            f"tokens or {{token: count}}, got {type(text).__name__}")

    def _batch_tokens(self, texts: Sequence, then: Callable[[frozenset[str]], Any] | None = None
                      ) -> list[frozenset[str]]:
        """``tokens`` of each message of a batch (row i named in errors), each passed to
        ``then`` as soon as it is read, if given. A batch of texts or frozensets keeps its
        tokens until the next batch, keyed by its messages, so that scoring a batch and then
        learning it tokenises it once, as ``tokens`` does for one message (sets and dicts could
        change in between: they are read again; kept tokens are not passed to ``then``); a
        batch ``_check_many`` read carries its tokens."""
        if isinstance(texts, _ReadBatch):
            return texts.bags
        def read() -> list[frozenset[str]]:
            bags = []
            for i, t in enumerate(texts):
                bags.append(self.tokens(t, RecordName("row", i)))
                if then is not None:
                    then(bags[-1])
            return bags

        if all(type(t) in _IMMUTABLE for t in texts):
            return self._cache.get("batch tokens", tuple(texts), read)
        return read()

    def _label(self, y: Any, where: str) -> Any:
        if y != self.spam_label and y != self.ham_label:
            raise InvalidRecord(where, "label", f"label {y!r} is neither spam_label "
                                f"{self.spam_label!r} nor ham_label {self.ham_label!r}")
        return self.spam_label if y == self.spam_label else self.ham_label

    # -- learning -----------------------------------------------------------------------------
    def learn_one(self, x: str | bytes, y: Any) -> None:
        where = f"record {self.n_learned + 1}"
        label = self._label(y, where)
        tokens = self.tokens(x, where)
        data = self._ppm_bytes(x, where)
        score = (self._score(tokens) + self._ppm_score(data) if self.scores is not None
                 else 0.0)  # kept from scoring
        self.stats.update({_ATTRIBUTE: tokens}, label, self.n_learned + 1)
        self.n_learned += 1
        if self.contexts is not None:
            self.contexts.learn(data, _SPAM if label == self.spam_label else _HAM)
        if self.scores is not None:
            self.scores.add_many(np.array([score]), np.array(
                [_SPAM if label == self.spam_label else _HAM]))

    def learn_many(self, X: Iterable[str | bytes], y: Iterable[Any]) -> None:
        """Learn a batch of texts (a sequence or pandas Series); equal to ``learn_one`` on each
        in order; a bad row rejects the whole batch and changes nothing."""
        texts, labels = _messages(X), list(y)
        if len(texts) != len(labels):
            raise ValueError(f"{len(texts)} texts but {len(labels)} labels")
        labels = [self._label(v, RecordName("row", i)) for i, v in enumerate(labels)]
        data = [self._ppm_bytes(t, RecordName("row", i)) for i, t in enumerate(texts)]
        scores = self.score_many(texts) if self.scores is not None else None
        records = [{_ATTRIBUTE: tokens} for tokens in self._batch_tokens(texts)]
        self.stats.update_many(records, labels, record="row")
        self.n_learned += len(texts)
        if self.contexts is not None:
            for message, label in zip(data, labels, strict=True):
                self.contexts.learn(message, _SPAM if label == self.spam_label else _HAM)
        if self.scores is not None:
            self.scores.add_many(scores, np.array(
                [_SPAM if label == self.spam_label else _HAM for label in labels]))

    def _check_many(self, X: Any, labels: list) -> _ReadBatch:
        texts = _messages(X)
        for i, (text, label) in enumerate(zip(texts, labels, strict=True)):
            self._label(label, RecordName("row", i))
            self._ppm_bytes(text, RecordName("row", i))
        return _ReadBatch(list(texts), self._batch_tokens(texts))

    # -- scoring ------------------------------------------------------------------------------
    def _counts(self, tokens: frozenset[str], where: str
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Message counts N(w, spam), N(w, ham) of the known tokens; N, T per class (spam, ham)."""
        stats = self.stats
        enc = encode(stats.schema, {_ATTRIBUTE: tokens}, where, grow=False)
        columns = np.asarray(enc.text_columns, dtype=np.int64)
        rows = np.zeros((2, len(columns)))
        totals = np.zeros((2, 2))  # [messages, tokens] per class
        for r, label in enumerate((self.spam_label, self.ham_label)):
            c = stats.labels.index.get(label)
            if c is None:
                continue
            rows[r] = stats.value_counts[c, columns]
            totals[r, 0] = stats.class_counts[c]
            totals[r, 1] = stats.draw_counts[c, 0] if stats.schema.n_text else 0.0
        return rows, totals, columns

    def _evidence(self, tokens: frozenset[str], where: str
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``_counts`` and each known token's ln θ(w | spam) − ln θ(w | ham)."""
        rows, totals, columns = self._counts(tokens, where)
        if not len(columns):
            return rows, totals, columns, np.zeros(0)
        stats = self.stats
        logs, _ = self._lidstone.log_theta(stats, columns)  # α > 0: no zero factors
        # a class not seen yet: every token equally likely, 1/|V|
        uniform = -math.log(stats.schema.attribute_size(stats.schema.text_attributes[0]))
        log_theta = [logs[c] if c is not None else np.full(len(columns), uniform)
                     for c in (stats.labels.index.get(self.spam_label),
                               stats.labels.index.get(self.ham_label))]
        return rows, totals, columns, log_theta[0] - log_theta[1]

    def _score(self, tokens: frozenset[str]) -> float:
        """The score of a message's tokens under the state now; with ``max_ham_rate``, kept
        until the state changes, so that learning a message just scored reads its score."""
        if self.scores is None:
            return self._compute_score(tokens)
        return self._cache.get("score", (self.stats, self.stats.version, tokens),
                               lambda: self._compute_score(tokens))

    def _batch_scores(self, texts: list) -> np.ndarray:
        """``score_many`` of a batch under the state now, kept (with ``max_ham_rate``) until
        the state changes, as ``_score`` keeps one message's."""
        if not all(type(t) in _IMMUTABLE for t in texts):
            return self._score_batch(texts)
        return self._cache.get("batch scores", (self.stats, self.stats.version, tuple(texts)),
                               lambda: self._score_batch(texts))

    def _compute_score(self, tokens: frozenset[str]) -> float:
        """The score of ``_evidence``'s reading of the counts in one kernel pass: a message's
        ~20 numpy calls on ~200-element arrays cost far more than their arithmetic."""
        stats = self.stats
        schema = stats.schema
        a = schema.attributes.get(_ATTRIBUTE)
        if a is None:  # nothing learned yet
            return 0.0
        index = stats.labels.index
        spam, ham = index.get(self.spam_label, -1), index.get(self.ham_label, -1)
        # the buffers: the rows and slot read exist, and slicing costs more than reading
        messages, draws, slot = stats.class_count_buffer, stats.draw_count_buffer, schema.slots[a]
        totals = (messages.item(spam) if spam >= 0 else 0.0,  # N_spam, N_ham, T_spam, T_ham
                  messages.item(ham) if ham >= 0 else 0.0,
                  draws.item(spam, slot) if spam >= 0 else 0.0,
                  draws.item(ham, slot) if ham >= 0 else 0.0)
        # the lookup learning this message reuses (the encoder's text_lookup keeps it)
        looked_up = text_lookup(schema, a, tokens)
        columns = looked_up[0] if looked_up is not None else encode(
            schema, {_ATTRIBUTE: tokens}, "message", grow=False).text_columns
        known, multinomial, kept, spam_stat, ham_stat = spam_evidence(
            columns, stats.value_count_buffer, spam, ham, totals,
            float(schema.attribute_size(a)), self.alpha,
            _ALL if self.top_tokens is None else self.top_tokens, self.s, self.x, self.min_dev,
            self._fisher.max_tokens, schema.n_columns)
        if not known:
            return 0.0
        fisher = chi2_log_odds(kept, spam_stat, ham_stat)
        return multinomial + self.fisher_weight * min(max(fisher, -self._clip), self._clip)

    def score_one(self, x: str | bytes) -> float:
        """The spam log-odds of a message (unbounded; 0 for a message with no known token)."""
        return (self._score(self.tokens(x, "message to score"))
                + self._ppm_score(self._ppm_bytes(x, "message to score")))

    def score_many(self, X: Iterable[str | bytes]) -> np.ndarray:
        texts = _messages(X)
        data = [self._ppm_bytes(t, RecordName("row", i)) for i, t in enumerate(texts)]
        z = self._batch_scores(texts) if self.scores is not None else self._score_batch(texts)
        if self.contexts is None:
            return z
        return z + np.array([self._ppm_score(message) for message in data])

    # -- the byte-context part ----------------------------------------------------------------
    def _ppm_bytes(self, x: Any, where: str) -> bytes:
        """What the byte-context model reads of a message (b"" without ``ppm_order``)."""
        if self.contexts is None:
            return b""
        if not isinstance(x, (str, bytes)):
            raise InvalidRecord(where, None, f"ppm_order reads the raw message text (str or "
                                f"bytes), got {type(x).__name__}")
        return ppm_bytes(x)

    def _ppm_score(self, data: bytes) -> float:
        """``ppm_weight · (ln P_spam − ln P_ham) / PPM_BYTES`` under the counts now (kept until
        they change: a message scored and then learned is coded once)."""
        contexts = self.contexts
        if contexts is None or not data:
            return 0.0

        def compute() -> float:
            spam, ham = contexts.score(data)
            return self.ppm_weight * (spam - ham) / PPM_BYTES

        return self._cache.get("ppm", (contexts, contexts.version, data), compute)

    def _score_batch(self, texts: list) -> np.ndarray:
        scores: list[float] = []
        with paused_collector():  # each message's lookup is kept until the batch is learned
            # each message scored as it is read (tokenised, its shape checked), while its
            # tokens are in the CPU caches: reading the whole batch first would evict them
            bags = self._batch_tokens(texts, lambda bag: scores.append(
                self._compute_score(bag)))
            if len(scores) != len(bags):  # the batch's tokens were kept: none scored yet
                scores = [self._compute_score(bag) for bag in bags]
        return np.array(scores)

    @property
    def threshold_learned(self) -> bool:
        """Whether the threshold in force is learned (``max_ham_rate``, after the warm-up)."""
        # a (1 − r) quantile needs some 1/r scores (weighted: ~1/r up to rounding)
        return self.scores is not None and (
            self.scores.total(_HAM) * self.max_ham_rate >= 1 - 1e-6)

    @property
    def current_threshold(self) -> float:
        """The decision threshold in force: ``threshold``, or with ``max_ham_rate`` the one
        read off the ham scores learned so far (``threshold`` before the first ham)."""
        scores = self.scores
        if scores is None or not self.threshold_learned:
            return self.threshold
        return self._cache.get("threshold", (scores, scores.version),
                               lambda: scores.threshold(_HAM, self.max_ham_rate))

    def verdict_one(self, x: str | bytes) -> Any:
        """``spam_label``, ``ham_label`` or ``"unsure"`` (within ``unsure`` of the threshold)."""
        z = self.score_one(x) - self.current_threshold
        if abs(z) < self.unsure:
            return "unsure"
        return self.spam_label if z > 0 else self.ham_label

    def _posterior_one(self, x: str | bytes, log: bool) -> dict[Any, float]:
        """σ(∓z) (or its log) of the score z past the threshold: the posterior of every model
        on the class scores (0, z); exact in log space where a probability underflows."""
        z = self.score_one(x) - self.current_threshold
        # ham first: where z = 0 an argmax over the dict agrees with predict_one (ham)
        return posterior([self.ham_label, self.spam_label], array("d", (0.0, z)),
                         _NO_ZERO_FACTORS, log)

    def predict_log_proba_one(self, x: str | bytes) -> dict[Any, float]:
        return self._posterior_one(x, True)

    def predict_proba_one(self, x: str | bytes) -> dict[Any, float]:
        return self._posterior_one(x, False)

    def predict_one(self, x: str | bytes) -> Any:
        return self.spam_label if self.score_one(x) > self.current_threshold else self.ham_label

    def predict_proba_many(self, X: Sequence[str | bytes]):
        import pandas as pd

        index = X.index if isinstance(X, pd.Series | pd.DataFrame) else None
        proba, columns = self.proba_of_scores(self.score_many(X))
        return pd.DataFrame(proba, index=index, columns=columns)

    def predict_log_proba_many(self, X: Sequence[str | bytes]):
        """log P(c | x) per row: ``predict_proba_many`` in log space, exact where
        probabilities underflow."""
        import pandas as pd

        index = X.index if isinstance(X, pd.Series | pd.DataFrame) else None
        return pd.DataFrame(self._log_posterior(*self._class_scores(self.score_many(X))),
                            index=index, columns=[self.ham_label, self.spam_label])

    def _class_scores(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows (0, z − threshold) and their zero-factor counts: the class scores whose
        posterior is (σ(−z'), σ(z')), the one-record path's, for every row."""
        z = np.asarray(scores, dtype=np.float64) - self.current_threshold
        classes = np.column_stack([np.zeros_like(z), z])
        return classes, np.zeros(classes.shape, dtype=np.int64)

    def proba_of_scores(self, scores: np.ndarray) -> tuple[np.ndarray, list]:
        """Rows (P(ham), P(spam)) of ``score_many``'s scores and their labels: what
        ``predict_proba_many`` gives, for a caller that needs both (the service)."""
        return self._posterior(*self._class_scores(scores)), [self.ham_label, self.spam_label]

    def predict_many(self, X: Sequence[str | bytes]):
        import pandas as pd

        index = X.index if isinstance(X, pd.Series | pd.DataFrame) else None
        z = self.score_many(X)
        return pd.Series(np.where(z > self.current_threshold, self.spam_label, self.ham_label),
                         index=index, dtype=object)

    # -- the score sketch: counts like the rest of the state ---------------------------------------
    def merge(self, other: SpamFilter) -> SpamFilter:
        super().merge(other)
        if self.scores is not None:
            self.scores.merge(other.scores)
        if self.contexts is not None:
            self.contexts.merge(other.contexts)
        return self

    def decay(self, factor: float) -> None:
        super().decay(factor)
        if self.scores is not None:
            self.scores.decay(factor)
        if self.contexts is not None:
            self.contexts.decay(factor)

    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta: dict[str, Any] = {}
        arrays: dict[str, np.ndarray] = {}
        for name, part in (("scores", self.scores), ("contexts", self.contexts)):
            if part is not None:
                meta[name], own = part.to_state()
                arrays.update({f"{name}.{k}": v for k, v in own.items()})
        return meta, arrays

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        def own(name: str) -> dict[str, np.ndarray]:
            return {k[len(name) + 1:]: v for k, v in arrays.items() if k.startswith(name + ".")}

        if self.scores is not None and "scores" in meta:
            self.scores = ScoreSketch.from_state(meta["scores"], own("scores"))
        if self.contexts is not None and "contexts" in meta:
            self.contexts = ByteContexts.from_state(meta["contexts"], own("contexts"))

    # -- diagnostics --------------------------------------------------------------------------
    def explain_one(self, x: str | bytes) -> list[dict[str, Any]]:
        """Each known token of a message with its multinomial log-ratio, its spamicity f and
        whether the Fisher part kept it, strongest evidence (|log-ratio|) first."""
        tokens = self.tokens(x, "message to explain")
        rows, totals, columns, ratio = self._evidence(tokens, "message to explain")
        if not len(columns):
            return []
        kept, _ = self._fisher.kept_spamicities(rows[0], rows[1], totals[0, 0], totals[1, 0])
        f = token_spamicity(rows[0], rows[1], totals[0, 0], totals[1, 0], self.s, self.x)
        names = self.stats.schema.column_value
        in_fisher = set(kept.tolist())
        order = np.argsort(-np.abs(ratio), kind="stable")
        return [{"token": names[columns[i]], "log_ratio": float(ratio[i]),
                 "spamicity": float(f[i]), "in_fisher": i in in_fisher,
                 "spam_messages": float(rows[0, i]), "ham_messages": float(rows[1, i])}
                for i in order.tolist()]
