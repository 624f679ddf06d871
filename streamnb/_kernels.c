/*
 * Per-record kernels of the token (binary presence) path.
 *
 * A message touches ~20 of possibly 100k token columns. Every numpy call costs about a
 * microsecond however small its array, so the one-record path (encode a message, add it to the
 * counts, score it) is a few short loops here instead of a dozen tiny numpy operations. Each
 * function has a pure-Python/numpy twin in streamnb.stats.kernels_py that gives identical
 * results; the tests run both.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

/* A writable C-contiguous buffer of the given item size, or an exception. */
static int
get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    if (view->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes", what, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/*
 * encode_tokens(x, token_column, attribute_index, grow) -> (columns, rest)
 *
 * columns: the columns of x's known tokens whose value is True or a non-zero int;
 * rest: the names that need the general (Python) encoder: known non-token attributes, unknown
 * names when growing, and any value other than a bool or an exact int. Known tokens with
 * False/0 are absent and skipped; unknown names with a bool/int value are skipped when not
 * growing (prediction ignores attributes it has never seen).
 */
static PyObject *
encode_tokens(PyObject *self, PyObject *args)
{
    PyObject *x, *token_column, *attribute_index;
    int grow;
    if (!PyArg_ParseTuple(args, "O!O!O!p", &PyDict_Type, &x, &PyDict_Type, &token_column,
                          &PyDict_Type, &attribute_index, &grow))
        return NULL;
    PyObject *columns = PyList_New(0), *rest = PyList_New(0);
    if (columns == NULL || rest == NULL)
        goto fail;
    Py_ssize_t pos = 0;
    PyObject *name, *value;
    while (PyDict_Next(x, &pos, &name, &value)) {
        int simple = PyBool_Check(value) || PyLong_CheckExact(value);
        if (!simple) {
            if (PyList_Append(rest, name) < 0)
                goto fail;
            continue;
        }
        PyObject *column = PyDict_GetItemWithError(token_column, name);
        if (column == NULL) {
            if (PyErr_Occurred())
                goto fail;
            int known = PyDict_Contains(attribute_index, name);
            if (known < 0)
                goto fail;
            if ((grow || known) && PyList_Append(rest, name) < 0)
                goto fail;
            continue;
        }
        int present = PyObject_IsTrue(value);
        if (present < 0)
            goto fail;
        if (present && PyList_Append(columns, column) < 0)
            goto fail;
    }
    return Py_BuildValue("(NN)", columns, rest);
fail:
    Py_XDECREF(columns);
    Py_XDECREF(rest);
    return NULL;
}

/* Read a list of column indices into a C array (caller frees). */
static Py_ssize_t *
read_columns(PyObject *list, Py_ssize_t *n, Py_ssize_t limit)
{
    *n = PyList_GET_SIZE(list);
    Py_ssize_t *out = PyMem_Malloc(sizeof(Py_ssize_t) * (*n ? *n : 1));
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        Py_ssize_t j = PyLong_AsSsize_t(PyList_GET_ITEM(list, i));
        if (j == -1 && PyErr_Occurred()) {
            PyMem_Free(out);
            return NULL;
        }
        if (j < 0 || j >= limit) {
            PyErr_Format(PyExc_IndexError, "column %zd out of range [0, %zd)", j, limit);
            PyMem_Free(out);
            return NULL;
        }
        out[i] = j;
    }
    return out;
}

/*
 * token_log_odds(value_counts, n_classes, columns, class_counts, a_present, a_absent,
 *                finite_out, zeros_out)
 *
 * For each class c, adds Σ_j [log(n_cj + a_present) − log(N_c − n_cj + a_absent)] to
 * finite_out[c]; a zero argument is not logged but counted (+1 for a present cell, −1 for an
 * absent cell) in zeros_out[c]. value_counts is (capacity_classes, capacity_columns) float64.
 */
static PyObject *
token_log_odds(PyObject *self, PyObject *args)
{
    PyObject *vc_obj, *cols_obj, *cc_obj, *finite_obj, *zeros_obj;
    Py_ssize_t k;
    double a_present, a_absent;
    if (!PyArg_ParseTuple(args, "OnO!OddOO", &vc_obj, &k, &PyList_Type, &cols_obj, &cc_obj,
                          &a_present, &a_absent, &finite_obj, &zeros_obj))
        return NULL;
    Py_buffer vc, cc, fin, zer;
    if (get_buffer(vc_obj, &vc, 8, "value_counts") < 0)
        return NULL;
    if (vc.ndim != 2 || vc.shape[0] < k) {
        PyBuffer_Release(&vc);
        PyErr_SetString(PyExc_ValueError, "value_counts must be 2-d with >= n_classes rows");
        return NULL;
    }
    if (get_buffer(cc_obj, &cc, 8, "class_counts") < 0) {
        PyBuffer_Release(&vc);
        return NULL;
    }
    if (get_buffer(finite_obj, &fin, 8, "finite_out") < 0) {
        PyBuffer_Release(&vc);
        PyBuffer_Release(&cc);
        return NULL;
    }
    if (get_buffer(zeros_obj, &zer, 8, "zeros_out") < 0) {
        PyBuffer_Release(&vc);
        PyBuffer_Release(&cc);
        PyBuffer_Release(&fin);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t width = vc.shape[1], n;
    if (cc.len / 8 < k || fin.len / 8 < k || zer.len / 8 < k) {
        PyErr_SetString(PyExc_ValueError, "class arrays shorter than n_classes");
        goto done;
    }
    Py_ssize_t *cols = read_columns(cols_obj, &n, width);
    if (cols == NULL)
        goto done;
    const double *counts = (const double *)vc.buf, *N = (const double *)cc.buf;
    double *finite = (double *)fin.buf;
    long long *zeros = (long long *)zer.buf;
    for (Py_ssize_t c = 0; c < k; c++) {
        const double *row = counts + c * width;
        double total = 0.0;
        long long z = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            double present = row[cols[i]];
            double absent = N[c] - present;
            if (absent < 0.0)
                absent = 0.0;
            present += a_present;
            absent += a_absent;
            if (present > 0.0)
                total += log(present);
            else
                z += 1;
            if (absent > 0.0)
                total -= log(absent);
            else
                z -= 1;
        }
        finite[c] += total;
        zeros[c] += z;
    }
    PyMem_Free(cols);
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&vc);
    PyBuffer_Release(&cc);
    PyBuffer_Release(&fin);
    PyBuffer_Release(&zer);
    return result;
}

/*
 * Adds 1 to row[j] for each column j and, when binned, moves each non-head token from bin n to
 * bin n+1; tokens leaving the last bin are appended to crossed (their old bin emptied).
 */
static int
increment_core(double *row, double *bin, Py_ssize_t top, const char *is_head,
               const Py_ssize_t *cols, Py_ssize_t n, int binned, PyObject *crossed)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t j = cols[i];
        double old = row[j];
        row[j] = old + 1.0;
        if (!binned || is_head[j])
            continue;
        Py_ssize_t o = (Py_ssize_t)old;
        if (o < 0 || o > top) {
            PyErr_Format(PyExc_ValueError, "count %g of column %zd is not binned", old, j);
            return -1;
        }
        bin[o] -= 1.0;
        if (o < top) {
            bin[o + 1] += 1.0;
            continue;
        }
        PyObject *col = PyLong_FromSsize_t(j);
        if (col == NULL || PyList_Append(crossed, col) < 0) {
            Py_XDECREF(col);
            return -1;
        }
        Py_DECREF(col);
    }
    return 0;
}

/*
 * token_increment(value_counts, c, columns, bins, is_head, binned) -> crossed
 *
 * Adds 1 to value_counts[c, j] for each column j; when ``binned`` also moves each non-head
 * token from bin n to bin n+1 of class c. Tokens whose count would leave the last bin are
 * returned (after their count was incremented and their old bin emptied) for the caller to
 * move to the head.
 */
static PyObject *
token_increment(PyObject *self, PyObject *args)
{
    PyObject *vc_obj, *cols_obj, *bins_obj, *head_obj;
    Py_ssize_t c;
    int binned;
    if (!PyArg_ParseTuple(args, "OnO!OOp", &vc_obj, &c, &PyList_Type, &cols_obj, &bins_obj,
                          &head_obj, &binned))
        return NULL;
    Py_buffer vc, bins, head;
    if (get_buffer(vc_obj, &vc, 8, "value_counts") < 0)
        return NULL;
    if (get_buffer(bins_obj, &bins, 8, "bins") < 0) {
        PyBuffer_Release(&vc);
        return NULL;
    }
    if (get_buffer(head_obj, &head, 1, "is_head") < 0) {
        PyBuffer_Release(&vc);
        PyBuffer_Release(&bins);
        return NULL;
    }
    PyObject *crossed = NULL;
    Py_ssize_t n, width = vc.ndim == 2 ? vc.shape[1] : 0;
    if (vc.ndim != 2 || c < 0 || c >= vc.shape[0] || bins.ndim != 2 || c >= bins.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "bad value_counts/bins shapes for class index");
        goto done;
    }
    Py_ssize_t limit = head.len < width ? head.len : width;
    Py_ssize_t *cols = read_columns(cols_obj, &n, limit);
    if (cols == NULL)
        goto done;
    crossed = PyList_New(0);
    if (crossed == NULL) {
        PyMem_Free(cols);
        goto done;
    }
    if (increment_core((double *)vc.buf + c * width, (double *)bins.buf + c * bins.shape[1],
                       bins.shape[1] - 1, (const char *)head.buf, cols, n, binned, crossed) < 0)
        Py_CLEAR(crossed);
    PyMem_Free(cols);
done:
    PyBuffer_Release(&vc);
    PyBuffer_Release(&bins);
    PyBuffer_Release(&head);
    return crossed;
}

/* Σ_t log(N − n_t + a) for one class: its bins and its head tokens' counts. */
static int
absent_sum_core(const double *bin, Py_ssize_t n_bins, const double *count, Py_ssize_t n_counts,
                const long long *heads, Py_ssize_t n_head, const double *lt, Py_ssize_t n_table,
                Py_ssize_t N, int zero_terms, double *out_total, long long *out_zeros)
{
    if (N < 0 || N >= n_table) {
        PyErr_SetString(PyExc_ValueError, "log_table does not reach N");
        return -1;
    }
    double total = 0.0;
    long long zeros = 0;
    Py_ssize_t width = N + 1 < n_bins ? N + 1 : n_bins;
    for (Py_ssize_t n = 0; n < width; n++) {
        if (bin[n] == 0.0)
            continue;
        if (zero_terms && n == N)
            zeros += (long long)bin[n];
        else
            total += bin[n] * lt[N - n];
    }
    for (Py_ssize_t i = 0; i < n_head; i++) {
        if (heads[i] < 0 || heads[i] >= n_counts) {
            PyErr_SetString(PyExc_IndexError, "head column out of range");
            return -1;
        }
        Py_ssize_t absent = N - (Py_ssize_t)count[heads[i]];
        if (absent < 0 || absent >= n_table) {
            PyErr_SetString(PyExc_ValueError, "head count outside [0, N]");
            return -1;
        }
        if (zero_terms && absent == 0)
            zeros += 1;
        else
            total += lt[absent];
    }
    *out_total = total;
    *out_zeros = zeros;
    return 0;
}

/*
 * class_absent_sum(bins, counts, c, N, log_table, head, zero_terms) -> (total, zeros)
 *
 * Σ_t log(N − n_t + a) for class c from its bins (bins[c, n] tokens have count n) and the
 * head tokens' counts counts[c, head], with log_table[j] = log(j + a). With zero_terms
 * (a = 0) terms whose argument is 0 are counted instead of summed (log_table[0] must be 0).
 */
static PyObject *
class_absent_sum(PyObject *self, PyObject *args)
{
    PyObject *bins_obj, *table_obj, *counts_obj, *head_obj;
    Py_ssize_t c, N;
    int zero_terms;
    if (!PyArg_ParseTuple(args, "OOnnOOp", &bins_obj, &counts_obj, &c, &N, &table_obj,
                          &head_obj, &zero_terms))
        return NULL;
    Py_buffer bins, table, counts, head;
    if (get_buffer(bins_obj, &bins, 8, "bins") < 0)
        return NULL;
    if (get_buffer(table_obj, &table, 8, "log_table") < 0) {
        PyBuffer_Release(&bins);
        return NULL;
    }
    if (get_buffer(counts_obj, &counts, 8, "counts") < 0) {
        PyBuffer_Release(&bins);
        PyBuffer_Release(&table);
        return NULL;
    }
    if (get_buffer(head_obj, &head, 8, "head") < 0) {
        PyBuffer_Release(&bins);
        PyBuffer_Release(&table);
        PyBuffer_Release(&counts);
        return NULL;
    }
    PyObject *result = NULL;
    if (bins.ndim != 2 || counts.ndim != 2 || c < 0 || c >= bins.shape[0] ||
        c >= counts.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "bins and counts must be 2-d with a row for the class");
        goto done;
    }
    double total;
    long long zeros;
    if (absent_sum_core((const double *)bins.buf + c * bins.shape[1], bins.shape[1],
                        (const double *)counts.buf + c * counts.shape[1], counts.shape[1],
                        (const long long *)head.buf, head.len / 8, (const double *)table.buf,
                        table.len / 8, N, zero_terms, &total, &zeros) < 0)
        goto done;
    result = Py_BuildValue("(dL)", total, zeros);
done:
    PyBuffer_Release(&bins);
    PyBuffer_Release(&table);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&head);
    return result;
}

/*
 * score_tokens(x, token_column, attribute_index, value_counts, n_classes, class_counts,
 *              a_present, a_absent, finite, zeros) -> rest
 *
 * encode_tokens(x, ..., grow=False) and token_log_odds on its columns in one call. When rest
 * (names needing the general encoder) is not empty, finite/zeros hold the token part only of
 * the record and the caller must complete it.
 */
static PyObject *
score_tokens(PyObject *self, PyObject *args)
{
    PyObject *x, *token_column, *attribute_index, *vc_obj, *cc_obj, *fin_obj, *zer_obj;
    Py_ssize_t k;
    double a_present, a_absent;
    if (!PyArg_ParseTuple(args, "O!O!O!OnOddOO", &PyDict_Type, &x, &PyDict_Type, &token_column,
                          &PyDict_Type, &attribute_index, &vc_obj, &k, &cc_obj, &a_present,
                          &a_absent, &fin_obj, &zer_obj))
        return NULL;
    PyObject *encode_args = Py_BuildValue("(OOOi)", x, token_column, attribute_index, 0);
    if (encode_args == NULL)
        return NULL;
    PyObject *encoded = encode_tokens(self, encode_args);
    Py_DECREF(encode_args);
    if (encoded == NULL)
        return NULL;
    PyObject *columns = PyTuple_GET_ITEM(encoded, 0), *rest = PyTuple_GET_ITEM(encoded, 1);
    PyObject *odds_args = Py_BuildValue("(OnOOddOO)", vc_obj, k, columns, cc_obj, a_present,
                                        a_absent, fin_obj, zer_obj);
    PyObject *done = odds_args ? token_log_odds(self, odds_args) : NULL;
    Py_XDECREF(odds_args);
    if (done == NULL) {
        Py_DECREF(encoded);
        return NULL;
    }
    Py_DECREF(done);
    Py_INCREF(rest);
    Py_DECREF(encoded);
    return rest;
}

/*
 * posterior(labels, finite, zeros) -> {label: probability}
 *
 * Softmax of finite over the classes with the fewest zero factors (the others get 0).
 */
static PyObject *
posterior(PyObject *self, PyObject *args)
{
    PyObject *labels, *fin_obj, *zer_obj;
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &labels, &fin_obj, &zer_obj))
        return NULL;
    Py_buffer fin, zer;
    if (get_buffer(fin_obj, &fin, 8, "finite") < 0)
        return NULL;
    if (get_buffer(zer_obj, &zer, 8, "zeros") < 0) {
        PyBuffer_Release(&fin);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t k = PyList_GET_SIZE(labels);
    if (fin.len / 8 < k || zer.len / 8 < k || k == 0) {
        PyErr_SetString(PyExc_ValueError, "posterior: arrays shorter than the labels");
        goto done;
    }
    const double *f = (const double *)fin.buf;
    const long long *z = (const long long *)zer.buf;
    long long fewest = z[0];
    for (Py_ssize_t c = 1; c < k; c++)
        if (z[c] < fewest)
            fewest = z[c];
    double top = -INFINITY;
    for (Py_ssize_t c = 0; c < k; c++)
        if (z[c] == fewest && f[c] > top)
            top = f[c];
    double total = 0.0;
    for (Py_ssize_t c = 0; c < k; c++)
        if (z[c] == fewest)
            total += exp(f[c] - top);
    result = PyDict_New();
    if (result == NULL)
        goto done;
    for (Py_ssize_t c = 0; c < k; c++) {
        PyObject *p = PyFloat_FromDouble(z[c] == fewest ? exp(f[c] - top) / total : 0.0);
        if (p == NULL || PyDict_SetItem(result, PyList_GET_ITEM(labels, c), p) < 0) {
            Py_XDECREF(p);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(p);
    }
done:
    PyBuffer_Release(&fin);
    PyBuffer_Release(&zer);
    return result;
}

/*
 * class_terms(class_counts, k, b, a_present, a_absent, n_tokens, bins, value_counts, head,
 *             log_table, dirty, sums, sum_zeros, finite, zeros) -> bool
 *
 * What a record's log-likelihood starts from, per class: the class prior
 * log((N_c + b) / Σ_c' (N_c' + b)) plus, over the whole vocabulary,
 * Σ_t log θ(absent_t | c) = S_c − n_tokens·log(N_c + a_present + a_absent), where
 * S_c = Σ_t log(N_c − n_tc + a_absent) is cached in sums/sum_zeros and recomputed only for the
 * classes in dirty (None: all), as class_absent_sum does. Returns False, changing nothing, when
 * log_table does not reach max N_c (the caller extends it and calls again).
 */
static PyObject *
class_terms(PyObject *self, PyObject *args)
{
    PyObject *cc_obj, *bins_obj, *vc_obj, *head_obj, *table_obj, *dirty, *sums_obj, *sz_obj;
    PyObject *fin_obj, *zer_obj;
    Py_ssize_t k, n_tokens;
    double b, a_present, a_absent;
    if (!PyArg_ParseTuple(args, "OndddnOOOOOOOOO", &cc_obj, &k, &b, &a_present, &a_absent,
                          &n_tokens, &bins_obj, &vc_obj, &head_obj, &table_obj, &dirty, &sums_obj,
                          &sz_obj, &fin_obj, &zer_obj))
        return NULL;
    Py_buffer cc, sums, sz, fin, zer, table, bins, vc, head;
    Py_buffer *views[9] = {&cc, &sums, &sz, &fin, &zer, &table, &bins, &vc, &head};
    PyObject *objs[9] = {cc_obj, sums_obj, sz_obj, fin_obj, zer_obj, table_obj, bins_obj, vc_obj,
                         head_obj};
    int got = 0;
    PyObject *result = NULL;
    for (; got < 9; got++)
        if (get_buffer(objs[got], views[got], 8, "class_terms array") < 0)
            goto done;
    if (bins.ndim != 2 || vc.ndim != 2 || bins.shape[0] < k || vc.shape[0] < k) {
        PyErr_SetString(PyExc_ValueError, "class_terms: bins/value_counts need a row per class");
        goto done;
    }
    if (cc.len / 8 < k || sums.len / 8 < k || sz.len / 8 < k || fin.len / 8 < k ||
        zer.len / 8 < k) {
        PyErr_SetString(PyExc_ValueError, "class_terms: arrays shorter than n_classes");
        goto done;
    }
    const double *N = (const double *)cc.buf;
    double *S = (double *)sums.buf, *finite = (double *)fin.buf;
    long long *SZ = (long long *)sz.buf, *zeros = (long long *)zer.buf;
    double top = 0.0, total = 0.0;
    for (Py_ssize_t c = 0; c < k; c++) {
        if (N[c] > top)
            top = N[c];
        total += N[c] + b;
    }
    if ((Py_ssize_t)top >= table.len / 8) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    if (n_tokens) {
        PyObject *iter = dirty == Py_None ? NULL : PyObject_GetIter(dirty);
        if (dirty != Py_None && iter == NULL)
            goto done;
        for (Py_ssize_t i = 0;; i++) {
            Py_ssize_t c;
            if (iter == NULL) {
                if (i >= k)
                    break;
                c = i;
            }
            else {
                PyObject *item = PyIter_Next(iter);
                if (item == NULL)
                    break;
                c = PyLong_AsSsize_t(item);
                Py_DECREF(item);
                if (c < 0 || c >= k) {
                    if (!PyErr_Occurred())
                        PyErr_SetString(PyExc_IndexError, "dirty class out of range");
                    Py_DECREF(iter);
                    goto done;
                }
            }
            if (absent_sum_core((const double *)bins.buf + c * bins.shape[1], bins.shape[1],
                                (const double *)vc.buf + c * vc.shape[1], vc.shape[1],
                                (const long long *)head.buf, head.len / 8,
                                (const double *)table.buf, table.len / 8, (Py_ssize_t)N[c],
                                a_absent == 0.0, &S[c], &SZ[c]) < 0) {
                Py_XDECREF(iter);
                goto done;
            }
        }
        Py_XDECREF(iter);
        if (PyErr_Occurred())
            goto done;
    }
    double log_total = log(total);
    for (Py_ssize_t c = 0; c < k; c++) {
        double w = N[c] + b;
        finite[c] = w > 0.0 ? log(w) - log_total : -log_total;
        zeros[c] = w > 0.0 ? 0 : 1;
        if (n_tokens) {
            finite[c] += S[c] - (double)n_tokens * log(N[c] + a_present + a_absent);
            zeros[c] += SZ[c];
        }
    }
    result = Py_NewRef(Py_True);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(views[i]);
    return result;
}

/*
 * Columns of x's present tokens, or -1 when x needs the general encoder (a value other than a
 * bool or an exact int, a known non-token attribute, or — when growing — an unknown name with a
 * non-zero value). Other unknown names are skipped. *cols is PyMem-allocated.
 */
static Py_ssize_t
simple_token_columns(PyObject *x, PyObject *token_column, PyObject *attribute_index, int grow,
                     Py_ssize_t limit, Py_ssize_t **cols)
{
    Py_ssize_t size = PyDict_GET_SIZE(x), n = 0, pos = 0;
    PyObject *name, *value;
    *cols = PyMem_Malloc(sizeof(Py_ssize_t) * (size ? size : 1));
    if (*cols == NULL) {
        PyErr_NoMemory();
        return -2;
    }
    while (PyDict_Next(x, &pos, &name, &value)) {
        if (!(PyBool_Check(value) || PyLong_CheckExact(value)))
            return -1;
        PyObject *column = PyDict_GetItemWithError(token_column, name);
        if (column == NULL) {
            if (PyErr_Occurred())
                return -2;
            int known = PyDict_Contains(attribute_index, name);
            if (known < 0)
                return -2;
            if (known)
                return -1;
            if (grow) {  /* a new token must be registered first; an absent one never is */
                int present = PyObject_IsTrue(value);
                if (present < 0)
                    return -2;
                if (present)
                    return -1;
            }
            continue;
        }
        int present = PyObject_IsTrue(value);
        if (present < 0)
            return -2;
        if (!present)
            continue;
        Py_ssize_t j = PyLong_AsSsize_t(column);
        if (j == -1 && PyErr_Occurred())
            return -2;
        if (j < 0 || j >= limit) {
            PyErr_Format(PyExc_IndexError, "column %zd out of range [0, %zd)", j, limit);
            return -2;
        }
        (*cols)[n++] = j;
    }
    return n;
}

/*
 * predict_tokens(x, token_column, attribute_index, value_counts, class_counts, a_present,
 *                a_absent, base, base_zeros, labels) -> {label: probability} | None
 *
 * The whole one-record prediction of a message of tokens: base (+ zero counts) per class plus
 * Σ over present tokens of log θ(present|c) − log θ(absent|c), then the posterior. None when
 * the record needs the general path (see simple_token_columns).
 */
static PyObject *
predict_tokens(PyObject *self, PyObject *args)
{
    PyObject *x, *token_column, *attribute_index, *vc_obj, *cc_obj, *base_obj, *bz_obj, *labels;
    double a_present, a_absent;
    if (!PyArg_ParseTuple(args, "O!O!O!OOddOOO!", &PyDict_Type, &x, &PyDict_Type, &token_column,
                          &PyDict_Type, &attribute_index, &vc_obj, &cc_obj, &a_present,
                          &a_absent, &base_obj, &bz_obj, &PyList_Type, &labels))
        return NULL;
    Py_buffer vc, cc, base, bz;
    Py_buffer *views[4] = {&vc, &cc, &base, &bz};
    PyObject *objs[4] = {vc_obj, cc_obj, base_obj, bz_obj};
    int got = 0;
    PyObject *result = NULL;
    Py_ssize_t *cols = NULL;
    double *finite = NULL;
    long long *zeros = NULL;
    for (; got < 4; got++)
        if (get_buffer(objs[got], views[got], 8, "predict_tokens array") < 0)
            goto done;
    Py_ssize_t k = PyList_GET_SIZE(labels);
    if (vc.ndim != 2 || vc.shape[0] < k || cc.len / 8 < k || base.len / 8 < k ||
        bz.len / 8 < k || k == 0) {
        PyErr_SetString(PyExc_ValueError, "predict_tokens: arrays do not match the labels");
        goto done;
    }
    Py_ssize_t width = vc.shape[1];
    Py_ssize_t n = simple_token_columns(x, token_column, attribute_index, 0, width, &cols);
    if (n == -2)
        goto done;
    if (n == -1) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    finite = PyMem_Malloc(sizeof(double) * k);
    zeros = PyMem_Malloc(sizeof(long long) * k);
    if (finite == NULL || zeros == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    const double *counts = (const double *)vc.buf, *N = (const double *)cc.buf;
    const double *b = (const double *)base.buf;
    const long long *bzs = (const long long *)bz.buf;
    long long fewest = 0;
    for (Py_ssize_t c = 0; c < k; c++) {
        const double *row = counts + c * width;
        double total = 0.0;  /* summed apart from the base, as token_log_odds does */
        long long z = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            double present = row[cols[i]];
            double absent = N[c] - present;
            if (absent < 0.0)
                absent = 0.0;
            present += a_present;
            absent += a_absent;
            if (present > 0.0)
                total += log(present);
            else
                z += 1;
            if (absent > 0.0)
                total -= log(absent);
            else
                z -= 1;
        }
        finite[c] = b[c] + total;
        zeros[c] = bzs[c] + z;
        z = zeros[c];
        if (c == 0 || z < fewest)
            fewest = z;
    }
    double top = -INFINITY, sum = 0.0;
    for (Py_ssize_t c = 0; c < k; c++)
        if (zeros[c] == fewest && finite[c] > top)
            top = finite[c];
    for (Py_ssize_t c = 0; c < k; c++)
        if (zeros[c] == fewest)
            sum += exp(finite[c] - top);
    result = PyDict_New();
    if (result == NULL)
        goto done;
    for (Py_ssize_t c = 0; c < k; c++) {
        PyObject *p = PyFloat_FromDouble(zeros[c] == fewest ? exp(finite[c] - top) / sum : 0.0);
        if (p == NULL || PyDict_SetItem(result, PyList_GET_ITEM(labels, c), p) < 0) {
            Py_XDECREF(p);
            Py_CLEAR(result);
            goto done;
        }
        Py_DECREF(p);
    }
done:
    PyMem_Free(cols);
    PyMem_Free(finite);
    PyMem_Free(zeros);
    for (int i = 0; i < got; i++)
        PyBuffer_Release(views[i]);
    return result;
}

/*
 * learn_tokens(x, token_column, attribute_index, value_counts, c, bins, is_head, binned)
 *     -> crossed | None
 *
 * token_increment for a message whose names are all known tokens with bool/int values; None
 * (nothing changed) when the record needs the general path.
 */
static PyObject *
learn_tokens(PyObject *self, PyObject *args)
{
    PyObject *x, *token_column, *attribute_index, *vc_obj, *bins_obj, *head_obj;
    Py_ssize_t c;
    int binned;
    if (!PyArg_ParseTuple(args, "O!O!O!OnOOp", &PyDict_Type, &x, &PyDict_Type, &token_column,
                          &PyDict_Type, &attribute_index, &vc_obj, &c, &bins_obj, &head_obj,
                          &binned))
        return NULL;
    Py_buffer vc, bins, head;
    if (get_buffer(vc_obj, &vc, 8, "value_counts") < 0)
        return NULL;
    if (get_buffer(bins_obj, &bins, 8, "bins") < 0) {
        PyBuffer_Release(&vc);
        return NULL;
    }
    if (get_buffer(head_obj, &head, 1, "is_head") < 0) {
        PyBuffer_Release(&vc);
        PyBuffer_Release(&bins);
        return NULL;
    }
    PyObject *crossed = NULL;
    Py_ssize_t *cols = NULL;
    if (vc.ndim != 2 || c < 0 || c >= vc.shape[0] || bins.ndim != 2 || c >= bins.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "bad value_counts/bins shapes for class index");
        goto done;
    }
    Py_ssize_t width = vc.shape[1], limit = head.len < width ? head.len : width;
    Py_ssize_t n = simple_token_columns(x, token_column, attribute_index, 1, limit, &cols);
    if (n == -2)
        goto done;
    if (n == -1) {
        crossed = Py_NewRef(Py_None);
        goto done;
    }
    crossed = PyList_New(0);
    if (crossed == NULL)
        goto done;
    if (increment_core((double *)vc.buf + c * width, (double *)bins.buf + c * bins.shape[1],
                       bins.shape[1] - 1, (const char *)head.buf, cols, n, binned, crossed) < 0)
        Py_CLEAR(crossed);
done:
    PyMem_Free(cols);
    PyBuffer_Release(&vc);
    PyBuffer_Release(&bins);
    PyBuffer_Release(&head);
    return crossed;
}

/*
 * encode_many(records, token_column, attribute_index, grow) -> (columns, lengths, special)
 *
 * The batch form of encode_tokens: present-token columns of every record, concatenated
 * (columns, int64 bytes) with per-record counts (lengths, int64 bytes); records that are not
 * non-empty dicts of simple tokens are listed in special (their length is 0) for the general
 * encoder.
 */
static PyObject *
encode_many(PyObject *self, PyObject *args)
{
    PyObject *records, *token_column, *attribute_index;
    int grow;
    if (!PyArg_ParseTuple(args, "O!O!O!p", &PyList_Type, &records, &PyDict_Type, &token_column,
                          &PyDict_Type, &attribute_index, &grow))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(records), used = 0, capacity = 64;
    long long *columns = PyMem_Malloc(sizeof(long long) * capacity);
    long long *lengths = PyMem_Malloc(sizeof(long long) * (n ? n : 1));
    PyObject *special = PyList_New(0), *result = NULL;
    Py_ssize_t *cols = NULL;
    if (columns == NULL || lengths == NULL || special == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *x = PyList_GET_ITEM(records, r);
        Py_ssize_t m = -1;
        lengths[r] = 0;
        if (PyDict_CheckExact(x) && PyDict_GET_SIZE(x) > 0) {
            m = simple_token_columns(x, token_column, attribute_index, grow, PY_SSIZE_T_MAX,
                                     &cols);
            if (m == -2)
                goto done;
        }
        if (m < 0) {
            PyObject *row = PyLong_FromSsize_t(r);
            if (row == NULL || PyList_Append(special, row) < 0) {
                Py_XDECREF(row);
                goto done;
            }
            Py_DECREF(row);
        }
        else {
            if (used + m > capacity) {
                while (used + m > capacity)
                    capacity *= 2;
                long long *grown = PyMem_Realloc(columns, sizeof(long long) * capacity);
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                columns = grown;
            }
            for (Py_ssize_t i = 0; i < m; i++)
                columns[used++] = cols[i];
            lengths[r] = m;
        }
        PyMem_Free(cols);
        cols = NULL;
    }
    result = Py_BuildValue("(y#y#O)", (const char *)columns, used * (Py_ssize_t)sizeof(long long),
                           (const char *)lengths, n * (Py_ssize_t)sizeof(long long), special);
done:
    PyMem_Free(cols);
    PyMem_Free(columns);
    PyMem_Free(lengths);
    Py_XDECREF(special);
    return result;
}

static PyMethodDef methods[] = {
    {"encode_tokens", encode_tokens, METH_VARARGS, "Token columns of a record (fast path)."},
    {"token_log_odds", token_log_odds, METH_VARARGS, "Σ log θ(present)/θ(absent) per class."},
    {"token_increment", token_increment, METH_VARARGS, "Count one record's tokens."},
    {"class_absent_sum", class_absent_sum, METH_VARARGS, "One class's all-absent log sum."},
    {"score_tokens", score_tokens, METH_VARARGS, "encode_tokens + token_log_odds."},
    {"class_terms", class_terms, METH_VARARGS, "Class prior + all-absent token sums."},
    {"predict_tokens", predict_tokens, METH_VARARGS, "One-record prediction of a message."},
    {"learn_tokens", learn_tokens, METH_VARARGS, "One-record update of a message."},
    {"encode_many", encode_many, METH_VARARGS, "Present-token columns of a batch."},
    {"posterior", posterior, METH_VARARGS, "Probabilities from log-likelihoods."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_kernels", "Per-record kernels of the token path.", -1, methods,
};

PyMODINIT_FUNC
PyInit__kernels(void)
{
    return PyModule_Create(&module);
}
