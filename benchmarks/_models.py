"""Models as the paper reproductions learn them: each training part as one batch, the
structure once, from the counts of the whole part."""

from __future__ import annotations

from typing import Any


class LearnedOnce:
    """Mixed in before a structure-learning model (``class OnceTAN(LearnedOnce, TAN)``, made
    with ``relearn_every=0``): ``learn_many`` ends with one ``relearn``, so the structure is
    learned from the whole training part, as a paper learns its classifier from a training
    set. The models' own schedule re-learns at 1, 2, 4, … records and then at multiples of
    ``relearn_every``: those updates would be replaced by the last one and only cost time, and
    the last would not be at the end of a part whose size is not on the schedule."""

    def learn_many(self, X: Any, y: Any) -> None:
        super().learn_many(X, y)  # type: ignore[misc]
        self.relearn()  # type: ignore[attr-defined]
