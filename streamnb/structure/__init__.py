"""Structure learning as pure functions of count statistics (docs/science.md §2–3).

``learn_tan_structure(counts, weight="cmi" | "ddr")`` turns pairwise counts into a TAN
attribute tree: Friedman's TAN with conditional mutual information (Zhang eq. 15) or Zhang's
ddr-ChowLiu with the dependence-distribution weight I_D (eq. 17–19). ``info_as(data, metric=
"cig" | "cgr" | "cdc")`` selects attributes from weighted records (Singh & Provan's Info-AS, with
an optional χ² stop); ``k2`` and ``cb`` learn a Bayesian network over them; ``naive_as`` and
``k2_as`` are the accuracy-driven alternatives; :class:`DiscreteNetwork` infers the class
exactly. No model code and no river here: models call these functions from their relearn policy
and swap the result in.
"""

from streamnb.structure.cb import CBResult, cb
from streamnb.structure.chow_liu import (
    ROOT_POLICIES,
    TreeStructure,
    chow_liu_tree,
    learn_tan_structure,
)
from streamnb.structure.conditional_metrics import (
    METRICS,
    conditional_distance_complement,
    conditional_gain_ratio,
    conditional_independence_test,
    conditional_information_gain,
)
from streamnb.structure.discrete_data import DiscreteData
from streamnb.structure.index_tree import IndexTree
from streamnb.structure.k2 import cooper_herskovits_score, k2, network_score
from streamnb.structure.network import CLASS, DiscreteNetwork, NetworkStructure, family_counts
from streamnb.structure.pairwise_counts import PairwiseCounts
from streamnb.structure.selection import Selection, info_as
from streamnb.structure.weights import (
    DEFAULT_BAYES_ALPHA,
    DEFAULT_DDR_SMOOTHING,
    TAN_WEIGHTS,
    attribute_class_information,
    class_mutual_information,
    conditional_mutual_information,
    dependence_distribution_weight,
    pairwise_weights,
)
from streamnb.structure.wrappers import k2_as, naive_as

__all__ = [
    "CLASS",
    "DEFAULT_BAYES_ALPHA",
    "DEFAULT_DDR_SMOOTHING",
    "METRICS",
    "ROOT_POLICIES",
    "TAN_WEIGHTS",
    "CBResult",
    "DiscreteData",
    "DiscreteNetwork",
    "IndexTree",
    "NetworkStructure",
    "PairwiseCounts",
    "Selection",
    "TreeStructure",
    "attribute_class_information",
    "cb",
    "chow_liu_tree",
    "class_mutual_information",
    "conditional_distance_complement",
    "conditional_gain_ratio",
    "conditional_independence_test",
    "conditional_information_gain",
    "conditional_mutual_information",
    "cooper_herskovits_score",
    "dependence_distribution_weight",
    "family_counts",
    "info_as",
    "k2",
    "k2_as",
    "learn_tan_structure",
    "naive_as",
    "network_score",
    "pairwise_weights",
]
