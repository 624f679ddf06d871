"""Structure learning as pure functions of count statistics (science.md §2).

``learn_tan_structure(counts, weight="cmi" | "ddr")`` turns pairwise counts into a TAN
attribute tree: Friedman's TAN with conditional mutual information (Zhang eq. 15) or Zhang's
ddr-ChowLiu with the dependence-distribution weight I_D (eq. 17–19). No model code and no river
here: models call these functions from their relearn policy and swap the result in.
"""

from streamnb.structure.chow_liu import (
    ROOT_POLICIES,
    TreeStructure,
    chow_liu_tree,
    learn_tan_structure,
)
from streamnb.structure.weights import (
    DEFAULT_DDR_SMOOTHING,
    PairwiseCounts,
    class_mutual_information,
    conditional_mutual_information,
    dependence_distribution_weight,
    pairwise_weights,
)

__all__ = [
    "DEFAULT_DDR_SMOOTHING",
    "ROOT_POLICIES",
    "PairwiseCounts",
    "TreeStructure",
    "chow_liu_tree",
    "class_mutual_information",
    "conditional_mutual_information",
    "dependence_distribution_weight",
    "learn_tan_structure",
    "pairwise_weights",
]
