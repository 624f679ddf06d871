"""Per-message dependence diagnostics of an augmented naive Bayes (Zhang, Definitions 2–3).

For two classes (+, −) and a record E, with f(E) = P(+|E)/P(−|E):

- dd^c(x | pa(x)) = p(x | pa(x), c) / p(x | c)   (dependence derivative, Definition 2)
- ddr(x) = dd^+(x | pa(x)) / dd^−(x | pa(x))     (dependence derivative ratio, Definition 3)
- DF(E) = Π_i ddr(x_i)                           (dependence distribution factor)
- f_b(E) = DF(E) · f_nb(E)                       (Theorem 1: ANB odds = DF × naive odds)
- Theorem 2: naive Bayes classifies E as the ANB does iff
  (f_b(E) ≥ 1 and DF(E) ≤ f_b(E)) or (f_b(E) < 1 and DF(E) > f_b(E)).

Multi-class generalisation (ours, documented): the ANB's decision c* is compared with every
other class c'; each pair (c*, c') is a two-class problem with its own ddr_{c*,c'}(x) =
dd^{c*}(x)/dd^{c'}(x), DF_{c*,c'} and f_b, f_nb odds, and naive Bayes agrees with the ANB iff
Theorem 2's condition holds for every pair (c*, c') — equivalently iff c* also maximises the
naive posterior. With two classes this is Theorem 2 itself (up to the orientation of the odds).
Everything is computed in log space (log DF, log f) because a message's odds overflow floats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Explanation", "theorem2_holds"]


def theorem2_holds(log_f_b: float, log_df: float) -> bool:
    """Zhang's Theorem 2 in log space: NB decides like the ANB iff
    (f_b ≥ 1 and DF ≤ f_b) or (f_b < 1 and DF > f_b)."""
    if log_f_b >= 0.0:
        return log_df <= log_f_b
    return log_df > log_f_b


@dataclass(frozen=True)
class Explanation:
    """Why a TAN classified a record as it did, and whether the dependences mattered.

    Attributes
    ----------
    classes
        The class labels, in the model's order.
    anb_decision, nb_decision
        The augmented (tree) model's decision and that of its naive Bayes part.
    positive, negative
        The two classes the odds compare: with two classes the model's first and second class
        (the paper's fixed + and −); with more, the ANB decision and its strongest rival.
    naive_log_odds
        Per attribute present in the record, log p(x_i | positive) − log p(x_i | negative): its
        contribution to log f_nb (the class prior's share is under ``"(prior)"``).
    log_ddr
        Per attribute with an observed parent, log ddr(x_i) for (positive, negative).
    log_df, log_f_nb, log_f_b
        log DF(E), log f_nb(E), log f_b(E) for (positive, negative); log f_b = log DF + log f_nb.
    theorem2
        Theorem 2's condition (two classes), or its conjunction over the pairs (decision, other
        class): True iff the dependences did not flip the naive decision.
    flipped
        True iff the naive Bayes part alone would have decided differently.
    """

    classes: list
    anb_decision: Any
    nb_decision: Any
    positive: Any
    negative: Any
    naive_log_odds: dict = field(repr=False)
    log_ddr: dict = field(repr=False)
    log_df: float
    log_f_nb: float
    log_f_b: float
    theorem2: bool
    flipped: bool

    def summary(self, top: int = 10) -> str:
        """A few lines for a person: the decision, the dependence factor and the attributes
        that moved it most."""
        lines = [f"TAN decision: {self.anb_decision!r}; naive Bayes alone: {self.nb_decision!r}"
                 f" ({'flipped by the dependences' if self.flipped else 'same decision'})",
                 f"odds {self.positive!r} : {self.negative!r}   log f_b = {self.log_f_b:.3f} = "
                 f"log DF {self.log_df:.3f} + log f_nb {self.log_f_nb:.3f}; "
                 f"Theorem 2 condition {'holds' if self.theorem2 else 'fails'}"]
        naive = sorted(self.naive_log_odds.items(), key=lambda kv: -abs(kv[1]))[:top]
        lines.append("strongest naive contributions (log odds): " + ", ".join(
            f"{name}={value:+.2f}" for name, value in naive))
        if self.log_ddr:
            ddr = sorted(self.log_ddr.items(), key=lambda kv: -abs(kv[1]))[:top]
            lines.append("strongest dependences (log ddr): " + ", ".join(
                f"{name}={value:+.2f}" for name, value in ddr))
        return "\n".join(lines)
