"""CCICANB: naive Bayes on class-conditional ICA (Bressan & Vitrià 2002) and its baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from river import checks
from sklearn.decomposition import FastICA
from sklearn.naive_bayes import GaussianNB

from streamnb import CCICANB, QDA, InvalidRecord, load_model
from streamnb.datasets import load
from streamnb.models.ccica_nb import fast_ica, fit_gaussian_mixtures, fit_kernel_densities
from streamnb.models.registry import CONTINUOUS, MODELS
from streamnb.stats.persist import dumps_state
from streamnb.stats.vector_sample import ClassSample


@pytest.fixture(scope="module")
def letter() -> tuple[pd.DataFrame, np.ndarray]:
    data = load("LetterRecognition")
    return data.to_frame(), np.asarray(data.labels, dtype=object)


@pytest.fixture(scope="module")
def iris() -> tuple[pd.DataFrame, np.ndarray]:
    data = load("iris")
    return data.to_frame(), np.asarray(data.labels, dtype=object)


def _fitted(frame: pd.DataFrame, labels: np.ndarray, **params) -> CCICANB:
    """A model with its structure re-learned from the whole batch (``learn_many`` re-learns
    where ``learn_one`` would, at the schedule's points inside the batch)."""
    model = CCICANB(seed=0, **params)
    model.learn_many(frame, pd.Series(labels))
    model.relearn()
    return model


def test_whitening_from_moments_whitens_the_sample_exactly(letter):
    """The moments are exact while the sample holds every record: W_k Σ̂_k W_kᵀ = I with Σ̂_k
    numpy's covariance of the class's records (eq. 3 with R_k orthogonal)."""
    frame, labels = letter
    model = _fitted(frame[:3000], labels[:3000], capacity=500)
    assert model.sample.exact
    s = model._structure
    names = list(model.stats.attributes.names())
    for c, label in enumerate(model.stats.labels.values):
        rows = frame[:3000][labels[:3000] == label]
        x = rows[[names[j] for j in s["active"]]].to_numpy()
        np.testing.assert_allclose(model.stats.means()[c, s["active"]], x.mean(axis=0),
                                   rtol=1e-12, atol=1e-12)
        w = s["unmixing"][c, s["valid"][c]]
        np.testing.assert_allclose(w @ np.cov(x.T, bias=True) @ w.T, np.eye(len(w)),
                                   atol=1e-8)


@pytest.mark.parametrize("fun", ["logcosh", "exp", "cube"])
def test_fast_ica_is_scikit_learns_parallel_fastica(letter, fun):
    frame, labels = letter
    x = frame[labels == "A"].to_numpy()[:, :6]
    x = x - x.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov(x.T, bias=True))
    z = x @ vectors / np.sqrt(values)
    init = np.linalg.qr(np.random.default_rng(3).normal(size=(6, 6)))[0]
    ours = fast_ica(z, init, max_iter=500, tol=1e-10, fun=fun)
    theirs = FastICA(whiten=False, w_init=init, max_iter=500, tol=1e-10,
                     algorithm="parallel", fun=fun).fit(z).components_
    np.testing.assert_allclose(ours, theirs, atol=1e-6)


def _fixed_point_turn(z: np.ndarray, w: np.ndarray) -> float:
    """How far one symmetric FastICA step turns the rows of ``w`` (0 at a fixed point)."""
    from streamnb.models.ccica_nb import _sym_decorrelate

    g = np.tanh(z @ w.T)
    step = _sym_decorrelate(g.T @ z / len(z) - (1 - g * g).mean(axis=0)[:, None] * w)
    return float(np.max(np.abs(np.abs(np.einsum("ij,ij->i", step, w)) - 1.0)))


@pytest.mark.slow
def test_fast_ica_half_steps_reach_a_fixed_point_where_plain_iteration_cycles(letter):
    """docs/ccica.md: on Letter's 16,000 training records plain symmetric FastICA (200
    iterations) leaves many of the 26 classes unconverged; with the half steps every class's W
    is a fixed point. How many cycle depends on the floating-point environment (BLAS, CPU,
    library versions: 12 on one machine, 13 on another), so the test asserts the property the
    docs rest on — plain iteration fails for a sizeable share, the half steps for none."""
    from streamnb.models.ccica_nb import _sym_decorrelate

    frame, labels = letter
    model = _fitted(frame[:16000], labels[:16000], representation="cc-pca",
                    capacity=100_000, relearn_every=0)
    values, classes = model.sample.arrays()
    cycling = 0
    for c in range(model.stats.n_classes):
        z = (values[classes == c] - model.stats.means()[c]) @ model._whitening(
            model.stats.covariance(c))[0].T
        w = _sym_decorrelate(np.eye(z.shape[1]))
        for _ in range(200):
            turn = _fixed_point_turn(z, w)
            g = np.tanh(z @ w.T)
            w = _sym_decorrelate(g.T @ z / len(z) - (1 - g * g).mean(axis=0)[:, None] * w)
            if turn < 1e-4:
                break
        cycling += turn >= 1e-4
        assert _fixed_point_turn(z, fast_ica(z, np.eye(z.shape[1]))) < 1e-3
    assert cycling >= 6


def test_fast_ica_recovers_sources_from_a_mixture_of_real_attributes(letter):
    """Sources: three Letter attributes of different shapes, shuffled independently (so they
    are independent), mixed by a known matrix; the unmixing must be A⁻¹ up to sign, scale and
    permutation."""
    frame, _ = letter
    rng = np.random.default_rng(1)
    sources = np.column_stack([rng.permutation(frame[name].to_numpy()) for name in
                               ("x.ege", "onpix", "y.ege")])
    sources = (sources - sources.mean(axis=0)) / sources.std(axis=0)
    mixing = np.array([[1.0, 0.6, -0.3], [0.2, 1.0, 0.5], [-0.4, 0.3, 1.0]])
    x = sources @ mixing.T
    values, vectors = np.linalg.eigh(np.cov(x.T, bias=True))
    white = (vectors / np.sqrt(values)).T
    w = fast_ica((x - x.mean(axis=0)) @ white.T, np.eye(3), max_iter=1000, tol=1e-8) @ white
    product = w @ mixing                      # a signed permutation if the sources are found
    assert np.all(np.sort(np.abs(product), axis=1)[:, -1] > 0.97)
    assert np.all(np.sort(np.abs(product), axis=1)[:, :-1] < 0.1)
    assert sorted(np.argmax(np.abs(product), axis=1).tolist()) == [0, 1, 2]


def test_mixture_em_finds_two_well_separated_modes():
    rng = np.random.default_rng(0)
    s = np.concatenate([rng.normal(-3, 0.5, 600), rng.normal(2, 1.0, 400)])[:, None]
    weight, mean, var = fit_gaussian_mixtures(s, 2, 1e-3)
    order = np.argsort(mean[0])
    np.testing.assert_allclose(weight[0, order], [0.6, 0.4], atol=0.03)
    np.testing.assert_allclose(mean[0, order], [-3.0, 2.0], atol=0.1)
    np.testing.assert_allclose(var[0, order], [0.25, 1.0], rtol=0.2)


def test_binned_kernel_density_is_the_exact_silverman_estimate(letter):
    """The binned estimate (bins of h/8, a kernel at each bin's mean) against the exact
    Gaussian KDE of every value with Silverman's h = 1.06 σ̂ n^(−1/5) (scipy's gaussian_kde
    with that bandwidth): within the documented 1 ± |z² − 1|/128 factor, on real columns."""
    from scipy.stats import gaussian_kde

    frame, labels = letter
    x = frame[labels == "A"].to_numpy()[:, :5] + np.random.default_rng(0).normal(
        0, 0.3, (int((labels == "A").sum()), 5))      # jittered: near-continuous columns
    weight, mean, var = fit_kernel_densities(x, 1e-2)
    n = len(x)
    h = 1.06 * x.std(axis=0) * n ** -0.2
    np.testing.assert_allclose(var[:, 0], h ** 2, rtol=1e-12)
    assert weight.shape[1] < n                         # binning saves terms
    for j in range(5):
        grid = np.linspace(x[:, j].min(), x[:, j].max(), 200)
        exact = gaussian_kde(x[:, j], bw_method=h[j] / x[:, j].std(ddof=1)).logpdf(grid)
        ours = np.log((weight[j] * np.exp(-0.5 * (grid[:, None] - mean[j]) ** 2 / var[j])
                       ).sum(axis=1) / np.sqrt(2 * np.pi * var[j, 0]))
        np.testing.assert_allclose(ours, exact, atol=0.01)


@pytest.mark.parametrize("selection", ["transformed", "divergence"])
def test_selection_scores_are_the_pairwise_divergences_averaged(iris, selection):
    """From the per-record component log-densities of the (whole, exact) sample: D'^m_ij =
    mean_{C_i} log p_i(s_m) − mean_{C_j} log p_i(s_m) (eq. 11), averaged over j ≠ i as is
    (eq. 12) or as 1 − exp(−max(D', 0) / 4) (Swain–Davis); each class keeps its top scores."""
    frame, labels = iris
    model = _fitted(frame, labels, selection=selection, reduction="none", n_features=2)
    logp = model.component_log_densities(frame)                         # (n, k, p)
    names = list(model.stats.labels.values)
    means = np.stack([logp[labels == v].mean(axis=0) for v in names])   # [j, i, m]
    pair = np.einsum("iim->im", means)[None] - means                    # [j, i, m] = D'^m_ij
    if selection == "transformed":
        pair = 1.0 - np.exp(-np.maximum(pair, 0.0) / 4.0)
    off = ~np.eye(len(names), dtype=bool)
    expected = (pair * off[:, :, None]).sum(axis=0) / (len(names) - 1)
    s = model._structure
    np.testing.assert_allclose(s["divergence"][s["valid"]], expected[s["valid"]], atol=1e-9)
    for c in range(len(names)):
        top = np.argsort(-np.where(s["valid"][c], expected[c], -np.inf))[:2]
        assert set(np.flatnonzero(s["selected"][c])) == set(top)


def test_class_conditional_pca_with_gaussian_marginals_is_qda(iris):
    """With every component and Gaussian marginals, CC-PCA is QDA: Σ_m log N(s_m; 0, 1) +
    log |det W_k| = log N(x; μ_k, Σ_k) (the Jacobian term makes classes comparable)."""
    frame, labels = iris
    ours = _fitted(frame, labels, representation="cc-pca", density="gaussian")
    qda = QDA()
    qda.learn_many(frame, pd.Series(labels))
    np.testing.assert_allclose(ours.predict_proba_many(frame).to_numpy(),
                               qda.predict_proba_many(frame).to_numpy(), atol=1e-9)


def test_original_with_gaussian_marginals_is_gaussian_naive_bayes(iris):
    frame, labels = iris
    ours = _fitted(frame, labels, representation="original", density="gaussian")
    sk = GaussianNB(var_smoothing=1e-15).fit(frame.to_numpy(), labels)
    np.testing.assert_allclose(ours.predict_proba_many(frame)[list(sk.classes_)].to_numpy(),
                               sk.predict_proba(frame.to_numpy()), atol=1e-6)


def test_reduction_rotates_the_subspace_that_cc_pca_selects(letter):
    """reduction="divergence": each class keeps the principal components CC-PCA with the same
    selection keeps, and FastICA rotates within them: the same scores and Jacobian terms, rows
    an orthogonal rotation (in the whitened coordinates) of CC-PCA's, the rotation that of
    fast_ica on the class's whitened subspace, and marginals fitted on the rotated values;
    with Gaussian marginals the classifier is CC-PCA's."""
    frame, labels = letter
    frame, labels = frame[:3000], labels[:3000]
    ica = _fitted(frame, labels, n_features=5)
    pca = _fitted(frame, labels, n_features=5, representation="cc-pca", selection="transformed")
    a, b = ica._structure, pca._structure
    np.testing.assert_allclose(a["divergence"], b["divergence"], atol=1e-9)
    np.testing.assert_array_equal(a["selected"], b["selected"])
    np.testing.assert_allclose(a["log_jacobian"], b["log_jacobian"], atol=1e-9)
    x, classes = ica._sample_matrix(a["active"], a["centre"])
    for c in range(len(a["centre"])):
        rows = np.flatnonzero(a["selected"][c])
        assert len(rows) == 5
        z = (x[classes == c] - a["centre"][c]) @ b["unmixing"][c, rows].T     # whitened
        rotation = fast_ica(z, np.eye(5))
        np.testing.assert_allclose(rotation @ rotation.T, np.eye(5), atol=1e-9)
        np.testing.assert_allclose(a["unmixing"][c, rows], rotation @ b["unmixing"][c, rows],
                                   atol=1e-9)
        weight, mean, var = fit_gaussian_mixtures(z @ rotation.T, 2, 1e-2)
        np.testing.assert_allclose(a["mix_weight"][c, rows], weight, atol=1e-9)
        np.testing.assert_allclose(a["mix_mean"][c, rows], mean, atol=1e-9)
        np.testing.assert_allclose(a["mix_var"][c, rows], var, atol=1e-9)
        unselected = ~a["selected"][c]
        np.testing.assert_array_equal(a["unmixing"][c, unselected],
                                      b["unmixing"][c, unselected])
    gaussian = _fitted(frame, labels, n_features=5, density="gaussian")
    gaussian_pca = _fitted(frame, labels, n_features=5, density="gaussian",
                           representation="cc-pca", selection="transformed")
    np.testing.assert_allclose(gaussian.predict_proba_many(frame[:500]).to_numpy(),
                               gaussian_pca.predict_proba_many(frame[:500]).to_numpy(),
                               atol=1e-9)


def test_reduction_with_every_component_is_ica_on_all_components(iris):
    """With every component kept the selected subspace is the whole class space, so the two
    reductions give the same classifier; ``select`` moves between counts without re-learning
    and gives what a model learnt with that count gives."""
    frame, labels = iris
    reduced = _fitted(frame, labels)
    whole = _fitted(frame, labels, reduction="none")
    np.testing.assert_allclose(reduced.predict_proba_many(frame).to_numpy(),
                               whole.predict_proba_many(frame).to_numpy(), atol=1e-9)
    reduced.select(2)
    direct = _fitted(frame, labels, n_features=2)
    np.testing.assert_allclose(reduced.predict_proba_many(frame).to_numpy(),
                               direct.predict_proba_many(frame).to_numpy(), atol=1e-12)


@pytest.mark.parametrize("density", ["mixture", "kde"])
@pytest.mark.parametrize("n_features", [None, 2])
def test_batch_equals_one_by_one(iris, density, n_features):
    frame, labels = iris
    order = np.random.default_rng(0).permutation(len(frame))
    frame, labels = frame.iloc[order].reset_index(drop=True), labels[order]
    batch = CCICANB(seed=5, capacity=30, relearn_every=0, density=density,
                    n_features=n_features)
    single = CCICANB(seed=5, capacity=30, relearn_every=0, density=density,
                     n_features=n_features)
    batch.learn_many(frame, pd.Series(labels))
    for x, y in zip(frame.to_dict("records"), labels, strict=True):
        single.learn_one(x, y)
    assert not batch.sample.exact
    for a, b in zip(batch.sample.arrays(), single.sample.arrays(), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(batch.stats.comoment, single.stats.comoment, atol=1e-9)
    batch.relearn()
    single.relearn()
    np.testing.assert_allclose(batch.predict_proba_many(frame).to_numpy(),
                               single.predict_proba_many(frame).to_numpy(), atol=1e-6)


@pytest.mark.parametrize("params", [{}, {"representation": "cc-pca", "n_features": 2},
                                    {"representation": "original", "density": "kde"},
                                    {"representation": "original", "relearn_every": 0}])
def test_learn_many_is_learn_one_in_order_with_the_structure_schedule(iris, params):
    """docs/ccica.md: learn_many re-learns the structure at the records where learn_one of its
    rows in order does, from the same sample and the same moments up to rounding. Iris in file
    order: each class first appears inside a batch, and the schedule's points (1, 2, 4, …, 16,
    32, 48, …) fall inside batches of 23. Predictions agree where the structure is a smooth
    function of the moments and sample (not FastICA's rotation: see the docs)."""
    frame, labels = iris
    many = CCICANB(seed=5, capacity=40, **{"relearn_every": 16, **params})
    one = many.clone()
    for lo in range(0, len(frame), 23):
        many.learn_many(frame[lo: lo + 23], pd.Series(labels[lo: lo + 23]))
        for x, y in zip(frame[lo: lo + 23].to_dict("records"), labels[lo: lo + 23],
                        strict=True):
            one.learn_one(x, y)
        assert many._structure_version == one._structure_version
    for a, b in zip(many.sample.arrays(), one.sample.arrays(), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(many.stats.comoment, one.stats.comoment, atol=1e-9)
    if many.representation != "cc-ica":
        np.testing.assert_allclose(many.predict_proba_many(frame).to_numpy(),
                                   one.predict_proba_many(frame).to_numpy(), atol=1e-6)


@pytest.mark.parametrize(("representation", "density"), [
    ("cc-ica", "mixture"), ("cc-pca", "mixture"), ("ica", "mixture"), ("original", "mixture"),
    ("cc-ica", "kde"), ("original", "kde")])
def test_save_load_predicts_identically(tmp_path, iris, representation, density):
    frame, labels = iris
    model = _fitted(frame, labels, representation=representation, n_features=2,
                    density=density)
    model.save(tmp_path / "m.state")
    loaded = load_model(tmp_path / "m.state")
    assert isinstance(loaded, CCICANB) and loaded.representation == representation
    pd.testing.assert_frame_equal(model.predict_proba_many(frame),
                                  loaded.predict_proba_many(frame))
    # re-selecting from the restored structure (reduction: rotating another subspace)
    model.select(1)
    loaded.select(1)
    pd.testing.assert_frame_equal(model.predict_proba_many(frame),
                                  loaded.predict_proba_many(frame))
    # the restored sample and schedule continue as the original would
    more = frame.iloc[:20]
    model.learn_many(more, pd.Series(labels[:20]))
    loaded.learn_many(more, pd.Series(labels[:20]))
    pd.testing.assert_frame_equal(model.predict_proba_many(frame),
                                  loaded.predict_proba_many(frame))


def test_bad_input_names_record_and_field_and_changes_nothing(iris):
    frame, labels = iris
    model = _fitted(frame[:30], labels[:30])
    before = dumps_state(*model.to_state())
    with pytest.raises(InvalidRecord, match=r"record 31.*'petalwidth'"):
        model.learn_one({"sepallength": 1.0, "petalwidth": "wide"}, "setosa")
    bad = frame[30:40].astype(object)
    bad.iloc[3, 1] = float("inf")
    with pytest.raises(InvalidRecord, match=r"row 3.*sepalwidth"):
        model.learn_many(bad, pd.Series(labels[30:40]))
    with pytest.raises(InvalidRecord, match="bool"):
        model.predict_one({"sepallength": True})
    assert dumps_state(*model.to_state()) == before


@pytest.mark.parametrize("params", [{"n_features": 0}, {"representation": "pca"},
                                    {"density": "laplace"}, {"selection": "variance"},
                                    {"n_mixture": 0}, {"capacity": 1.5}, {"var_floor": 0},
                                    {"reduction": "pca"}, {"reduction": None},
                                    {"seed": "x"}])
def test_parameters_are_validated(params):
    name = next(iter(params))
    with pytest.raises(ValueError, match=name):
        CCICANB(**params)


def test_registered_as_continuous():
    assert isinstance(MODELS["ccica-nb"](), CCICANB) and "ccica-nb" in CONTINUOUS


def test_digits_accuracy_far_above_the_majority_class():
    data = load("optdigits-test")
    frame, labels = data.to_frame(), np.asarray(data.labels, dtype=object)
    order = np.random.default_rng(0).permutation(len(frame))
    train, test = order[:1200], order[1200:]
    model = _fitted(frame.iloc[train], labels[train], n_features=16)
    accuracy = np.mean(model.predict_many(frame.iloc[test]).to_numpy() == labels[test])
    majority = pd.Series(labels[test]).value_counts(normalize=True).iloc[0]
    assert majority < 0.12 and accuracy > 0.8


def test_cc_ica_beats_original_naive_bayes_on_letter_with_few_components(letter):
    """Bressan & Vitrià's Fig. 3 on a subsample: CC-ICA NB above NB on the original
    attributes (same marginal model, same divergence selection) at 4 components per class."""
    frame, labels = letter
    accuracy = {}
    for representation in ("cc-ica", "original"):
        model = _fitted(frame[:6000], labels[:6000], representation=representation,
                        n_features=4)
        accuracy[representation] = np.mean(
            model.predict_many(frame[16000:18000]).to_numpy() == labels[16000:18000])
    assert accuracy["cc-ica"] > accuracy["original"] + 0.1


@pytest.mark.parametrize("density", ["mixture", "kde"])
def test_merge_is_exact_for_the_moments_and_keeps_a_bounded_sample(iris, density):
    frame, labels = iris
    whole = _fitted(frame, labels, density=density)
    left = CCICANB(seed=1, capacity=20, density=density)
    right = CCICANB(seed=2, capacity=20, density=density)
    left.learn_many(frame[::2], pd.Series(labels[::2]))
    right.learn_many(frame[1::2], pd.Series(labels[1::2]))
    left.merge(right)
    np.testing.assert_allclose(left.stats.comoment, whole.stats.comoment, atol=1e-9)
    np.testing.assert_allclose(left.stats.means(), whole.stats.means(), atol=1e-12)
    values, classes = left.sample.arrays()
    assert np.bincount(classes).tolist() == [20, 20, 20] and not np.isnan(values).any()
    accuracy = np.mean(left.predict_many(frame).to_numpy() == labels)
    assert accuracy > 0.9
    with pytest.raises(ValueError, match="differ"):
        left.merge(CCICANB(representation="original", density=density))
    with pytest.raises(ValueError, match="differ"):
        left.merge(CCICANB(density="gaussian"))


def test_sample_keeps_the_top_priorities_whatever_the_order():
    rng = np.random.default_rng(0)
    classes, values = rng.integers(0, 3, 500), rng.normal(size=(500, 2))
    whole = ClassSample(capacity=10, seed=4)
    whole.add_many(classes, values)
    parts = ClassSample(capacity=10, seed=4)
    for lo in range(0, 500, 7):
        parts.add_many(classes[lo: lo + 7], values[lo: lo + 7])
    for a, b in zip(whole.arrays(), parts.arrays(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert whole.size == 30 and whole.n_dropped == 470


def test_decay_prefers_recent_records():
    sample = ClassSample(capacity=50, seed=0)
    sample.add_many(np.zeros(500, dtype=np.int64), np.zeros((500, 1)))
    sample.decay(0.01)
    sample.add_many(np.zeros(500, dtype=np.int64), np.ones((500, 1)))
    assert sample.values_of(0).mean() > 0.9


@pytest.mark.parametrize("params", [{}, {"representation": "cc-pca", "n_features": 1},
                                    {"density": "kde"}])
def test_river_check_estimator(params):
    """river's checks with the default schedule, learn_many against learn_one included."""
    model = CCICANB(seed=0, **params)
    for check in checks.yield_checks(model):
        check(model.clone())


@pytest.mark.slow
def test_letter_curves_of_docs_ccica(letter):
    """docs/ccica.md's Letter table (the paper's split): CC-ICA NB with the defaults at 84.6 %
    with 8 components per class (the paper: 83.17 %; issue 16's target ≥ 83.2 %), and above
    NB on the attributes and the paper's CC-PCA baseline (variance order) at every count from
    1 to 16."""
    frame, labels = letter
    curves = {}
    for name, params in {"cc-ica": {}, "original": {"representation": "original"},
                         "cc-pca": {"representation": "cc-pca"}}.items():
        model = _fitted(frame[:16000], labels[:16000], capacity=100_000, relearn_every=0,
                        **params)
        curves[name] = []
        for n in range(1, 17):
            model.select(n)
            curves[name].append(np.mean(model.predict_many(frame[16000:]).to_numpy()
                                        == labels[16000:]))
    ica = np.array(curves["cc-ica"])
    # FastICA is iterative: the figure at 8 moves by a few test records with the BLAS and CPU
    assert abs(100 * ica[7] - 84.6) <= 0.5 and ica[7] >= 0.832
    assert np.all(ica > np.array(curves["original"])) and np.all(ica > np.array(curves["cc-pca"]))
