"""Discrete Bayesian network classifiers: their structure, parameters from counts, and exact
inference of the class (Markov blanket product, variable elimination under missing values).

A selective network (Singh & Provan) is a DAG over the class and the selected attributes in
which the class may have parents, children and spouses. :class:`NetworkStructure` names it;
:class:`DiscreteNetwork` holds its conditional probability tables (in log space, from counts)
and answers P(C | e):

- **complete evidence**: P(c | x) ∝ θ(c | pa(C)) · Π_{X child of C} θ(x | pa(X)), the product
  over the class's Markov blanket; every other factor is constant in c;
- **missing values**: P(c, e) = Σ_M Π_i θ_i over the missing attributes M, by variable
  elimination on the ancestors of the evidence and the class (the other missing attributes are
  barren and sum to 1). Records are grouped by their pattern of missing attributes, and each
  pattern is eliminated once for all its records (numpy arrays with a record axis).
  Elimination runs in log space (products are sums of logs, sums are log-sum-exps), so long
  products cannot underflow.

No record is dropped: a record with nothing observed gets P(c), the class marginal.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streamnb.stats.codec import decode, encode

__all__ = ["CLASS", "DiscreteNetwork", "NetworkStructure", "family_counts"]


class _ClassNode:
    """The class node of a network (a singleton, so it can never collide with an attribute)."""

    __slots__ = ()
    _instance: _ClassNode | None = None

    def __new__(cls) -> _ClassNode:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "CLASS"

    def __reduce__(self) -> str:
        return "CLASS"  # pickle and copy resolve the module attribute: the same singleton


#: The class node in :attr:`NetworkStructure.parents`.
CLASS = _ClassNode()


@dataclass(frozen=True)
class NetworkStructure:
    """A Bayesian network over the class (:data:`CLASS`) and the selected attributes.

    Attributes
    ----------
    selected
        The attributes in the order they were selected.
    parents
        Every node (:data:`CLASS` first, then ``selected``) → its parents, a tuple of nodes.
    method
        How the structure was learned, e.g. ``"info-as/cgr + k2"``.
    scores
        The selection criterion of each selected attribute when it was added.
    p_values
        The χ² stop's p-value of each selected attribute, or None.
    stop
        Why the selection stopped.

    Examples
    --------
    >>> s = NetworkStructure(("a", "b"), {CLASS: (), "a": (CLASS,), "b": (CLASS, "a")})
    >>> s.edges, s.children(CLASS)
    (((CLASS, 'a'), (CLASS, 'b'), ('a', 'b')), ('a', 'b'))
    >>> NetworkStructure.from_json(s.to_json()) == s
    True

    """

    selected: tuple[Hashable, ...]
    parents: Mapping[Hashable, tuple[Hashable, ...]]
    method: str = ""
    scores: tuple[float, ...] = ()
    p_values: tuple[float, ...] | None = None
    stop: str = ""
    _order: tuple[Hashable, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        selected = tuple(self.selected)
        nodes = (CLASS, *selected)
        if len(set(nodes)) != len(nodes):
            raise ValueError(f"selected attributes must be distinct, got {selected!r}")
        if set(self.parents) != set(nodes):
            raise ValueError("parents must name exactly the class and the selected attributes")
        parents = {v: tuple(self.parents[v]) for v in nodes}
        for v, pa in parents.items():
            if len(set(pa)) != len(pa) or v in pa or not set(pa) <= set(nodes):
                raise ValueError(f"invalid parents {pa!r} of {v!r}")
        object.__setattr__(self, "selected", selected)
        object.__setattr__(self, "parents", parents)
        object.__setattr__(self, "scores", tuple(float(s) for s in self.scores))
        if self.p_values is not None:
            object.__setattr__(self, "p_values", tuple(float(p) for p in self.p_values))
        object.__setattr__(self, "_order", _topological_order(nodes, parents))

    @classmethod
    def naive(cls, selected: Sequence[Hashable], **kwargs: Any) -> NetworkStructure:
        """The selective naive Bayes network: the class is the only parent of each attribute."""
        return cls(tuple(selected), {CLASS: (), **{a: (CLASS,) for a in selected}}, **kwargs)

    @property
    def nodes(self) -> tuple[Hashable, ...]:
        return (CLASS, *self.selected)

    @property
    def order(self) -> tuple[Hashable, ...]:
        """A topological order (parents first; ties in node order)."""
        return self._order

    @property
    def edges(self) -> tuple[tuple[Hashable, Hashable], ...]:
        """``(parent, child)`` pairs, children in node order."""
        return tuple((p, v) for v in self.nodes for p in self.parents[v])

    def children(self, node: Hashable) -> tuple[Hashable, ...]:
        return tuple(v for v in self.nodes if node in self.parents[v])

    @property
    def markov_blanket(self) -> frozenset[Hashable]:
        """The class's parents, children and its children's other parents."""
        blanket = set(self.parents[CLASS])
        for child in self.children(CLASS):
            blanket.add(child)
            blanket.update(self.parents[child])
        blanket.discard(CLASS)
        return frozenset(blanket)

    def to_json(self) -> dict[str, Any]:
        """JSON form; the class node is ``null`` (no attribute name can be None)."""
        def node(v: Hashable) -> Any:
            return None if v is CLASS else encode(v)

        return {"selected": [encode(a) for a in self.selected],
                "parents": [[node(v), [node(p) for p in self.parents[v]]] for v in self.nodes],
                "method": self.method, "scores": list(self.scores),
                "p_values": None if self.p_values is None else list(self.p_values),
                "stop": self.stop}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NetworkStructure:
        def node(v: Any) -> Hashable:
            return CLASS if v is None else decode(v)

        return cls(tuple(decode(a) for a in data["selected"]),
                   {node(v): tuple(node(p) for p in pa) for v, pa in data["parents"]},
                   data["method"], tuple(data["scores"]),
                   None if data["p_values"] is None else tuple(data["p_values"]), data["stop"])


def _topological_order(nodes: Sequence[Hashable], parents: Mapping[Hashable, Sequence[Hashable]]
                       ) -> tuple[Hashable, ...]:
    """Kahn's algorithm; among the nodes ready at a time, the first in ``nodes`` order."""
    position = {v: i for i, v in enumerate(nodes)}
    waiting = {v: len(parents[v]) for v in nodes}
    children: dict[Hashable, list[Hashable]] = {v: [] for v in nodes}
    for v in nodes:
        for p in parents[v]:
            children[p].append(v)
    ready = [position[v] for v in nodes if not waiting[v]]
    heapq.heapify(ready)
    placed: list[Hashable] = []
    while ready:
        v = nodes[heapq.heappop(ready)]
        placed.append(v)
        for child in children[v]:
            waiting[child] -= 1
            if not waiting[child]:
                heapq.heappush(ready, position[child])
    if len(placed) < len(nodes):
        raise ValueError("the parents form a cycle: a Bayesian network must be acyclic")
    return tuple(placed)


def family_counts(values: np.ndarray, cardinalities: Sequence[int], child: int,
                  parents: Sequence[int], weights: np.ndarray | None = None) -> np.ndarray:
    """N(pa, x) of a family as an array ``(r_pa1, ..., r_pak, r_child)``, over the records
    (rows of ``values``, −1 = missing) where the child and all its parents were observed."""
    nodes = [*parents, child]
    shape = tuple(int(cardinalities[v]) for v in nodes)
    if not len(values):
        return np.zeros(shape)
    cols = values[:, nodes]
    ok = (cols >= 0).all(axis=1)
    flat = np.ravel_multi_index(tuple(cols[ok].T), shape) if nodes else np.zeros(0, np.int64)
    counts = np.bincount(flat, weights=None if weights is None else weights[ok],
                         minlength=int(np.prod(shape)))
    return counts.astype(np.float64, copy=False).reshape(shape)


class DiscreteNetwork:
    """A discrete Bayesian network's log-CPTs and exact inference of the class node.

    Parameters
    ----------
    parents
        ``parents[i]``: the parent node indices of node ``i``.
    cardinalities
        Number of values of each node.
    log_cpts
        ``log_cpts[i]``: log θ(x_i | pa_i), shape ``(r_pa1, ..., r_pak, r_i)`` (parents in the
        order of ``parents[i]``), normalised over the last axis.
    class_node
        Index of the class node.

    Examples
    --------
    >>> values = np.array([[0, 0], [0, 0], [1, 1], [1, 0]])   # columns: class, x
    >>> net = DiscreteNetwork.fit(values, [2, 2], [(), (0,)], class_node=0, alpha=1.0)
    >>> np.exp(net.predict_log_proba(np.array([[-1, 0], [-1, -1]]))).round(4).tolist()
    [[0.6, 0.4], [0.5, 0.5]]

    With x observed, P(c | x) ∝ P(c) θ(x | c) = ½ · 3/4 against ½ · 2/4; with x missing,
    θ(x | c) sums out and the class prior remains.

    """

    def __init__(self, parents: Sequence[Sequence[int]], cardinalities: Sequence[int],
                 log_cpts: Sequence[np.ndarray], class_node: int) -> None:
        self.parents = [tuple(int(p) for p in pa) for pa in parents]
        self.cardinalities = [int(r) for r in cardinalities]
        self.log_cpts = [np.asarray(t, dtype=np.float64) for t in log_cpts]
        self.class_node = int(class_node)
        p = len(self.parents)
        if len(self.cardinalities) != p or len(self.log_cpts) != p:
            raise ValueError("parents, cardinalities and log_cpts must have one entry per node")
        if not 0 <= self.class_node < p:
            raise ValueError(f"class_node {class_node} is not a node")
        for i, (pa, t) in enumerate(zip(self.parents, self.log_cpts, strict=True)):
            shape = (*(self.cardinalities[v] for v in pa), self.cardinalities[i])
            if t.shape != shape:
                raise ValueError(f"log_cpts[{i}] must have shape {shape}, got {t.shape}")
        _topological_order(list(range(p)), dict(enumerate(self.parents)))
        c = self.class_node
        self._class_families = [i for i in range(p) if i == c or c in self.parents[i]]
        self._pack()

    def _pack(self) -> None:
        """Stack the class's families of equal shape (class axis last) into one array each, and
        make their log-CPTs views into it: the Markov blanket of a batch is then one indexing
        per shape, and in-place updates of a log-CPT (see :meth:`update_row`) reach the stack."""
        c = self.class_node
        groups: dict[tuple[int, ...], list[int]] = {}
        for i in self._class_families:
            nodes = [*self.parents[i], i]
            at = nodes.index(c)
            shape = self.log_cpts[i].shape
            groups.setdefault((*shape[:at], *shape[at + 1:], shape[at]), []).append(i)
        self._blanket_groups = []
        for members in groups.values():
            stack = np.stack([np.moveaxis(self.log_cpts[i], [*self.parents[i], i].index(c), -1)
                              for i in members])
            columns = np.array([[v for v in (*self.parents[i], i) if v != c] for i in members],
                               dtype=np.int64).reshape(len(members), -1)
            for f, i in enumerate(members):
                self.log_cpts[i] = np.moveaxis(stack[f], -1, [*self.parents[i], i].index(c))
            self._blanket_groups.append((stack, columns))

    def update_row(self, i: int, parent_values: tuple[int, ...], counts: np.ndarray,
                   alpha: float) -> None:
        """Re-read one parent configuration's distribution of node i from its counts (what
        :meth:`log_cpt` gives for that row), in place."""
        self.log_cpts[i][parent_values] = (np.log(counts + alpha)
                                           - np.log(counts.sum() + alpha * len(counts)))

    @staticmethod
    def log_cpt(counts: np.ndarray, alpha: float) -> np.ndarray:
        """log θ(x | pa) = log (N(pa, x) + α) / (N(pa) + α r): the posterior mean under a
        uniform Dirichlet(α) prior on each parent configuration's distribution (α = 1 is the
        Cooper–Herskovits prior of K2)."""
        if not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        counts = np.asarray(counts, dtype=np.float64)
        r = counts.shape[-1]
        return np.log(counts + alpha) - np.log(counts.sum(axis=-1, keepdims=True) + alpha * r)

    @classmethod
    def fit(cls, values: np.ndarray, cardinalities: Sequence[int],
            parents: Sequence[Sequence[int]], class_node: int, alpha: float = 1.0,
            weights: np.ndarray | None = None) -> DiscreteNetwork:
        """Parameters from records: each family counted where it is fully observed."""
        values = np.asarray(values, dtype=np.int64)
        tables = [cls.log_cpt(family_counts(values, cardinalities, i, pa, weights), alpha)
                  for i, pa in enumerate(parents)]
        return cls(parents, cardinalities, tables, class_node)

    # -- inference ---------------------------------------------------------------------------
    def predict_log_proba(self, evidence: np.ndarray) -> np.ndarray:
        """log P(C = c | e) for each row of ``evidence`` (``(B, nodes)`` value indices, −1 for
        missing; the class column is ignored)."""
        scores = self.class_log_scores(evidence)
        top = scores.max(axis=1, keepdims=True)
        return scores - top - np.log(np.exp(scores - top).sum(axis=1, keepdims=True))

    def class_log_scores(self, evidence: np.ndarray) -> np.ndarray:
        """log P(C = c, e) up to a term constant in c, ``(B, k)``."""
        ev = np.array(evidence, dtype=np.int64, ndmin=2)
        if ev.shape[1] != len(self.parents):
            raise ValueError(f"evidence must have {len(self.parents)} columns, got {ev.shape[1]}")
        c = self.class_node
        ev[:, c] = -1
        missing = ev < 0
        missing[:, c] = False
        if not missing.any():
            return self._blanket(ev)
        out = np.empty((len(ev), self.cardinalities[c]))
        patterns, inverse = np.unique(missing, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for index, pattern in enumerate(patterns):
            rows = np.flatnonzero(inverse == index)
            out[rows] = (self._eliminate(ev[rows], np.flatnonzero(pattern).tolist())
                         if pattern.any() else self._blanket(ev[rows]))
        return out

    def _indexed(self, i: int, ev: np.ndarray, free: Sequence[int]) -> np.ndarray:
        """Family i's log-CPT with its observed nodes set from ``ev``: ``(B, *free shapes)``."""
        nodes = [*self.parents[i], i]
        observed = [a for a, v in enumerate(nodes) if v not in free]
        table = np.moveaxis(self.log_cpts[i], [nodes.index(v) for v in free],
                            range(len(nodes) - len(free), len(nodes)))
        if not observed:
            return np.broadcast_to(table, (len(ev), *table.shape))
        return table[tuple(ev[:, nodes[a]] for a in observed)]

    def _blanket(self, ev: np.ndarray) -> np.ndarray:
        """Complete evidence: the Markov blanket's factors, the only ones that depend on c."""
        out = np.zeros((len(ev), self.cardinalities[self.class_node]))
        for stack, columns in self._blanket_groups:
            index = (np.arange(len(stack))[:, None],
                     *(ev[:, columns[:, a]].T for a in range(columns.shape[1])))
            out += stack[index].sum(axis=0)
        return out

    def _ancestral(self, start: Sequence[int]) -> set[int]:
        keep, stack = set(start), list(start)
        while stack:
            for p in self.parents[stack.pop()]:
                if p not in keep:
                    keep.add(p)
                    stack.append(p)
        return keep

    def _eliminate(self, ev: np.ndarray, missing: list[int]) -> np.ndarray:
        """Variable elimination of the missing nodes, for a batch sharing one pattern, in log
        space: a product of factors is a sum of their (broadcast) logs, a sum over a variable
        a log-sum-exp, so hundreds of factors cannot underflow."""
        c = self.class_node
        n_nodes, batch = len(self.parents), len(ev)
        gone = set(missing)
        relevant = self._ancestral([v for v in range(n_nodes) if v not in gone])
        log_class = np.zeros((batch, self.cardinalities[c]))
        factors: list[tuple[list[int], np.ndarray]] = []
        for i in sorted(relevant):
            nodes = [*self.parents[i], i]
            free = [v for v in nodes if v == c or v in gone]
            if not free:
                continue  # fully observed and without the class: constant in c
            logs = self._indexed(i, ev, free)
            if free == [c]:
                log_class += logs
            else:
                factors.append((free, logs))
        eliminate = [v for v in missing if v in relevant]
        while eliminate:
            # the variable whose factors span the fewest variables (min-size heuristic)
            spans = [len({u for vs, _ in factors if v in vs for u in vs}) for v in eliminate]
            v = eliminate.pop(int(np.argmin(spans)))
            involved = [(vs, t) for vs, t in factors if v in vs]
            factors = [(vs, t) for vs, t in factors if v not in vs]
            union = list(dict.fromkeys(u for vs, _ in involved for u in vs))
            total = np.zeros((batch, *(1,) * len(union)))
            for vs, t in involved:
                order = sorted(range(len(vs)), key=lambda j: union.index(vs[j]))
                t = t.transpose(0, *(j + 1 for j in order))
                total = total + t.reshape(batch, *(self.cardinalities[u] if u in vs else 1
                                                   for u in union))
            axis = union.index(v) + 1
            peak = total.max(axis=axis, keepdims=True)
            peak = np.where(np.isfinite(peak), peak, 0.0)  # all −inf (zero CPT entries): 0
            with np.errstate(divide="ignore"):
                summed = np.squeeze(peak + np.log(np.exp(total - peak).sum(axis=axis,
                                                                           keepdims=True)), axis)
            keep = [u for u in union if u != v]
            if keep == [c]:
                log_class += summed
            elif keep:
                factors.append((keep, summed))
        return log_class
