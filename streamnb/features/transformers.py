"""river transformers that turn raw e-mail or SMS text into binary token features.

They follow the conventions of `river.feature_extraction.BagOfWords`: stateless, the input is a
raw string (or, with ``on``, a dict holding it), the ``TEXT_INPUT`` tag is set in that case, and
``transform_many`` builds a sparse pandas frame. The output is ``{token: True}``: presence, not
counts, which is what Bernoulli-style models expect.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from river import base

from .email import tokenize_email
from .sms import tokenize_sms

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EmailTokens", "SMSTokens"]


class _TokenPresence(base.Transformer):
    """Shared mechanics: subclasses only say which tokeniser they apply."""

    tokenize: Callable[[Any], frozenset[str]]

    def __init__(self, on: str | None = None) -> None:
        self.on = on

    def _more_tags(self) -> set[str]:
        # As in BagOfWords: the tag means "x is a str", which is only true without `on`.
        return {base.tags.TEXT_INPUT} if self.on is None else set()

    def transform_one(self, x: Any) -> dict[str, bool]:
        text = x if self.on is None else x[self.on]
        # Sorted so that the features reach the model in the same order whatever the hash seed:
        # floating-point sums over them are then reproducible from run to run.
        return dict.fromkeys(sorted(type(self).tokenize(text)), True)

    def learn_many(self, X: pd.Series | pd.DataFrame) -> None:
        """Do nothing: the transformer is stateless (present for river's mini-batch pipelines)."""

    def transform_many(self, X: pd.Series | pd.DataFrame) -> pd.DataFrame:
        """Transform a column of texts into a sparse boolean frame, one column per token.

        Parameters
        ----------
        X
            A series of texts, or (with ``on``) a frame whose ``on`` column holds them.

        Returns
        -------
        pandas.DataFrame
            Sparse boolean columns, in order of first appearance (a message's tokens taken in
            sorted order, as in `transform_one`); the index of ``X`` is kept.
        """
        import pandas as pd  # optional dependency: only the *_many methods need it
        from scipy import sparse

        texts = X if self.on is None else X[self.on]
        tokenize = type(self).tokenize
        columns: dict[str, int] = {}
        indices: list[int] = []
        indptr = [0]
        for text in texts:
            tokens = sorted(tokenize(text))
            indices.extend(columns.setdefault(token, len(columns)) for token in tokens)
            indptr.append(len(indices))
        matrix = sparse.csr_matrix(
            (np.ones(len(indices), dtype=bool), indices, indptr), shape=(len(texts), len(columns))
        )
        return pd.DataFrame.sparse.from_spmatrix(matrix, index=texts.index, columns=list(columns))


class EmailTokens(_TokenPresence):
    """Raw RFC-822 e-mail → ``{token: True}`` with `streamnb.features.tokenize_email`.

    Parameters
    ----------
    on
        The key of the raw message when ``x`` is a dict. If ``None``, ``x`` is the raw message
        itself (``str`` or ``bytes``).

    Examples
    --------
    >>> from river import naive_bayes
    >>> from streamnb.features import EmailTokens

    >>> spam = "Subject: Cheap meds\\n\\nBuy cheap meds now at http://pills.example.biz !"
    >>> ham = "Subject: Minutes\\n\\nThe minutes of Tuesday's meeting are attached."
    >>> model = EmailTokens() | naive_bayes.BernoulliNB()
    >>> model.learn_one(spam, True)
    >>> model.learn_one(ham, False)
    >>> model.predict_one("Subject: cheap pills\\n\\nmeds at http://pills.example.biz")
    True

    With ``on``, ``x`` is a dict:

    >>> EmailTokens(on="raw").transform_one({"raw": "Subject: hello\\n\\nHi"})
    {'content-type:text/plain': True, 'hi': True, 'subject:hello': True}

    ``transform_many`` returns a sparse boolean frame:

    >>> import pandas as pd
    >>> X = pd.Series([spam, ham], index=["s", "h"])
    >>> frame = EmailTokens().transform_many(X)
    >>> frame.shape
    (2, 22)
    >>> frame[["subject:cheap", "subject:minutes", "cheap", "minutes"]]
       subject:cheap  subject:minutes  cheap  minutes
    s           True            False   True    False
    h          False             True  False     True
    """

    tokenize = staticmethod(tokenize_email)


class SMSTokens(_TokenPresence):
    """SMS text → ``{token: True}`` with `streamnb.features.tokenize_sms`.

    Parameters
    ----------
    on
        The key of the text when ``x`` is a dict (river's ``datasets.SMSSpam`` uses
        ``"body"``). If ``None``, ``x`` is the text itself.

    Examples
    --------
    >>> from river import naive_bayes
    >>> from streamnb.features import SMSTokens

    >>> model = SMSTokens(on="body") | naive_bayes.BernoulliNB()
    >>> model.learn_one({"body": "WINNER!! Call 09061701461 to claim £900"}, True)
    >>> model.learn_one({"body": "ok see u at 7 then"}, False)
    >>> model.predict_one({"body": "Claim your £500 now! Call 09061701234"})
    True
    >>> SMSTokens()._tags == {"text input"}, SMSTokens(on="body")._tags
    (True, set())
    """

    tokenize = staticmethod(tokenize_sms)
