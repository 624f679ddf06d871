/*
 * Per-record kernels (the extension streamnb._accel._kernels): the token path's, the
 * numeric moments' one-record update (LDA, QDA), the binned kernel density estimates
 * (KernelNB) and Fisher's χ² tails (SpamFilter).
 *
 * A message touches ~20 of possibly 100k token columns. Every numpy call costs about a
 * microsecond however small its array, so the one-record path (encode a message, add it to the
 * counts, score it) is a few short loops here instead of a dozen tiny numpy operations; so is
 * adding a numeric record to a class's p×p moments (some thirty numpy operations). Each
 * function has a pure-Python twin in streamnb/_accel/kernels.py with the same results (same
 * operations in the same order, libm's log); tests/test_kernels.py checks each against its twin.
 * Names are looked up in the NameTable of streamnb._accel._names through _names.h.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_names.h"

/* A hint to load a cache line that a later, dependent read will need (the vocabulary's tables
   and counts outgrow the CPU caches at ~10^5 tokens). */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* ---- buffers -------------------------------------------------------------------------------- */

static void
release_buffers(Py_buffer *views, int n)
{
    for (int i = 0; i < n; i++)
        PyBuffer_Release(&views[i]);
}

/* Acquire n writable C-contiguous buffers with the given item sizes: all of them, or none.
   An error names the function (where) and the argument at fault (names[i]). */
static int
get_buffers(PyObject *const *objs, Py_buffer *views, const Py_ssize_t *itemsizes, int n,
            const char *where, const char *const *names)
{
    for (int i = 0; i < n; i++) {
        if (PyObject_GetBuffer(objs[i], &views[i],
                               PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            PyErr_Format(type, "%s: %s: %S", where, names[i], value);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            release_buffers(views, i);
            return -1;
        }
        if (views[i].itemsize != itemsizes[i]) {
            PyErr_Format(PyExc_TypeError, "%s: %s must have %zd-byte items, not %zd", where,
                         names[i], itemsizes[i], views[i].itemsize);
            release_buffers(views, i + 1);
            return -1;
        }
    }
    return 0;
}

/* A 2-d buffer with at least `rows` rows. */
static int
check_rows(const Py_buffer *view, Py_ssize_t rows, const char *what)
{
    if (view->ndim != 2 || view->shape[0] < rows || rows < 0) {
        PyErr_Format(PyExc_ValueError, "%s must be 2-d with at least %zd rows", what, rows);
        return -1;
    }
    return 0;
}

/* Class c's row of a 2-d buffer: rows c + 1 alone would let c = -1 through, and the kernel
   would then read or write the row before the buffer. */
static int
check_class_row(const Py_buffer *view, Py_ssize_t c, const char *what)
{
    if (c < 0) {
        PyErr_Format(PyExc_IndexError, "class %zd out of range", c);
        return -1;
    }
    return check_rows(view, c + 1, what);
}

/* ---- encoding ------------------------------------------------------------------------------- */


/* The NameTable that an encoder reads (the schema's attribute registry: a token's value is its
   column, any other attribute's -1), or NULL with TypeError. */
static NameTable *
lookup_table(PyObject *table, const char *where)
{
    if (!PyObject_TypeCheck(table, name_table_api->type)) {
        PyErr_Format(PyExc_TypeError, "%s: the attribute table must be a NameTable", where);
        return NULL;
    }
    return (NameTable *)table;
}

/* The name table's prefetch for the first names of record x (a dict). */
static void
lookup_prefetch(const NameTable *t, PyObject *x)
{
    PyObject *names[PREFETCH_NAMES], *name, *value;
    Py_ssize_t m = 0, pos = 0;
    if (!name_table_api->prefetch_pays(t))
        return;
    while (m < PREFETCH_NAMES && PyDict_Next(x, &pos, &name, &value))
        names[m++] = name;
    name_table_api->prefetch(t, names, m);
}

/* 1 and *column for a token, 0 for an unknown name, 2 for a known attribute of another kind,
   -1 on error. */
static int
lookup_token(NameTable *t, PyObject *name, Py_ssize_t *column)
{
    int32_t value;
    Py_ssize_t a = name_table_api->find(t, name, &value);
    if (a < 0)
        return a == -1 ? 0 : -1;
    if (value < 0)
        return 2;
    *column = value;
    return 1;
}

/*
 * Columns of x's present tokens (count in the return value, PyMem-allocated *cols), -1 when x
 * needs the general encoder (a value other than a bool or an exact int, a known non-token
 * attribute, or — when growing — an unknown name with a non-zero value), -2 on error. Other
 * unknown names are skipped: prediction ignores them and an absent token is never registered.
 * With new_names (growing only), an unknown str name with a non-zero value is no reason for the
 * general encoder: it is appended to new_names and its place in *cols holds -1, for the caller
 * to register in bulk (on -1 new_names is left as it was).
 */
static Py_ssize_t
simple_token_columns(PyObject *x, NameTable *t, int grow, Py_ssize_t limit, Py_ssize_t **cols,
                     PyObject *new_names)
{
    Py_ssize_t size = PyDict_GET_SIZE(x), n = 0, pos = 0;
    Py_ssize_t named = new_names ? PyList_GET_SIZE(new_names) : 0;
    PyObject *name, *value;
    *cols = PyMem_Malloc(sizeof(Py_ssize_t) * (size ? size : 1));
    if (*cols == NULL) {
        PyErr_NoMemory();
        return -2;
    }
    lookup_prefetch(t, x);
    while (PyDict_Next(x, &pos, &name, &value)) {
        if (!(PyBool_Check(value) || PyLong_CheckExact(value)))
            goto general;
        int present = PyObject_IsTrue(value);
        if (present < 0)
            return -2;
        Py_ssize_t j;
        int found = lookup_token(t, name, &j);
        if (found < 0)
            return -2;
        if (found == 2)
            goto general;
        if (found == 0) {
            if (grow && present) {
                if (new_names == NULL || !PyUnicode_CheckExact(name))
                    goto general;
                if (PyList_Append(new_names, name) < 0)
                    return -2;
                (*cols)[n++] = -1;
            }
            continue;
        }
        if (!present)
            continue;
        if (j < 0 || j >= limit) {
            PyErr_Format(PyExc_IndexError, "column %zd out of range [0, %zd)", j, limit);
            return -2;
        }
        (*cols)[n++] = j;
    }
    return n;
general:
    if (new_names && PyList_SetSlice(new_names, named, PyList_GET_SIZE(new_names), NULL) < 0)
        return -2;
    return -1;
}

/*
 * encode_tokens(x, table, grow) -> (columns, rest)
 *
 * columns: the columns of x's known tokens whose value is True or a non-zero int; rest: the
 * names that need the general (Python) encoder: known non-token attributes, unknown names when
 * growing, and any value other than a bool or an exact int. Known tokens with False/0 are
 * absent; unknown names with a bool/int value are skipped when not growing.
 */
static PyObject *
encode_tokens(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *x, *table;
    int grow;
    NameTable *t;
    if (!PyArg_ParseTuple(args, "O!Op", &PyDict_Type, &x, &table, &grow)
            || (t = lookup_table(table, "encode_tokens")) == NULL)
        return NULL;
    PyObject *columns = PyList_New(0), *rest = PyList_New(0);
    if (columns == NULL || rest == NULL)
        goto fail;
    Py_ssize_t pos = 0;
    PyObject *name, *value;
    while (PyDict_Next(x, &pos, &name, &value)) {
        if (!(PyBool_Check(value) || PyLong_CheckExact(value))) {
            if (PyList_Append(rest, name) < 0)
                goto fail;
            continue;
        }
        Py_ssize_t j;
        int found = lookup_token(t, name, &j);
        if (found < 0)
            goto fail;
        if (found != 1) {
            if ((grow || found == 2) && PyList_Append(rest, name) < 0)
                goto fail;
            continue;
        }
        int present = PyObject_IsTrue(value);
        if (present < 0)
            goto fail;
        if (present) {
            PyObject *column = PyLong_FromSsize_t(j);
            int failed = column == NULL || PyList_Append(columns, column) < 0;
            Py_XDECREF(column);
            if (failed)
                goto fail;
        }
    }
    return Py_BuildValue("(NN)", columns, rest);
fail:
    Py_XDECREF(columns);
    Py_XDECREF(rest);
    return NULL;
}

/*
 * The text kind's drawn-once shape (streamnb.stats.values.drawn_once): a dict of str to True,
 * or a set or frozenset of str, none a subclass. 1 or 0 (-1 on error); with tokens (room for
 * the bag's size), its tokens in the bag's order, borrowed (the bag holds them, and nothing
 * here runs Python code that could change it), and *m their number.
 */
static int
bag_tokens(PyObject *bag, PyObject **tokens, Py_ssize_t *m)
{
    PyObject *token, *value;
    Py_ssize_t k = 0;
    if (PyDict_CheckExact(bag)) {
        Py_ssize_t pos = 0;
        while (PyDict_Next(bag, &pos, &token, &value)) {
            if (!PyUnicode_CheckExact(token) || value != Py_True)
                return 0;
            if (tokens)
                tokens[k++] = token;
        }
    }
    else if (PyFrozenSet_CheckExact(bag) || PySet_CheckExact(bag)) {
        Py_ssize_t n = PySet_GET_SIZE(bag);
        PyObject *it = PyObject_GetIter(bag);
        if (it == NULL)
            return -1;
        int str = 1;
        while (k < n && (token = PyIter_Next(it)) != NULL) {
            Py_DECREF(token);
            if (!(str = PyUnicode_CheckExact(token)))
                break;
            if (tokens)
                tokens[k] = token;
            k++;
        }
        Py_DECREF(it);
        if (PyErr_Occurred())
            return -1;
        if (!str)
            return 0;
    }
    else
        return 0;
    if (m)
        *m = k;
    return 1;
}

/* drawn_once(value) -> bool: bag_tokens' shape check alone */
static PyObject *
drawn_once(PyObject *Py_UNUSED(self), PyObject *value)
{
    int once = bag_tokens(value, NULL, NULL);
    return once < 0 ? NULL : PyBool_FromLong(once);
}

/*
 * text_columns(bag, table, grow[, first_new]) -> (found, new) or None
 *
 * A text value drawn once per token (a set or frozenset of str, or a dict of str to True):
 * found, the columns of its tokens in the bag's order as int64 bytes, a token's column being
 * its value in table (a NameTable). With grow, the unknown tokens are listed in new, in order,
 * and numbered first_new, first_new + 1, ... in found (the columns they get when the caller
 * registers them, in that order, before anything else); without, they are left out. None, with
 * nothing read, for any other value: the text kind's general rule decides (and names the
 * error). The tokens are looked up PREFETCH_NAMES at a time, their loads staged
 * (the name table's prefetch): a message's ~200 tokens in a vocabulary of 10^5 are as many cache misses.
 */
static PyObject *
text_columns(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *bag, *table;
    int grow;
    long long first_new = 0;
    if (!PyArg_ParseTuple(args, "OOp|L", &bag, &table, &grow, &first_new))
        return NULL;
    if (!PyObject_TypeCheck(table, name_table_api->type)) {
        PyErr_SetString(PyExc_TypeError, "text_columns: the vocabulary must be a NameTable");
        return NULL;
    }
    NameTable *t = (NameTable *)table;
    PyObject **tokens = NULL, *new = NULL, *result = NULL;
    int64_t *found = NULL;
    /* room for a bag's tokens; any other value is refused by bag_tokens */
    Py_ssize_t n = PyDict_CheckExact(bag) ? PyDict_GET_SIZE(bag)
                   : PyAnySet_CheckExact(bag) ? PySet_GET_SIZE(bag) : 0, m = 0;
    tokens = PyMem_Malloc(sizeof(PyObject *) * (n ? n : 1));
    if (tokens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int once = bag_tokens(bag, tokens, &m);
    if (once <= 0) {
        if (once == 0)
            result = Py_NewRef(Py_None);
        goto done;
    }
    found = PyMem_Malloc(sizeof(int64_t) * (m ? m : 1));
    new = PyList_New(0);
    if (found == NULL || new == NULL) {
        if (found == NULL)
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n_found = 0;
    /* an empty vocabulary, not growing: nothing to find */
    Py_ssize_t size = PyObject_Length(table);
    if (size < 0)
        goto done;
    for (Py_ssize_t k = 0; k < (size || grow ? m : 0); k++) {
        if (k % PREFETCH_NAMES == 0)
            name_table_api->prefetch(t, tokens + k, Py_MIN(PREFETCH_NAMES, m - k));
        int32_t value;
        Py_ssize_t e = name_table_api->find(t, tokens[k], &value);
        if (e == -2)
            goto done;
        if (e >= 0)
            found[n_found++] = value;
        else if (grow) {
            found[n_found++] = first_new + PyList_GET_SIZE(new);
            if (PyList_Append(new, tokens[k]) < 0)
                goto done;
        }
    }
    PyObject *bytes = PyBytes_FromStringAndSize((const char *)found,
                                                n_found * (Py_ssize_t)sizeof(int64_t));
    if (bytes != NULL)
        result = PyTuple_Pack(2, bytes, new);
    Py_XDECREF(bytes);
done:
    PyMem_Free(tokens);
    PyMem_Free(found);
    Py_XDECREF(new);
    return result;
}

/*
 * encode_many(records, table, grow) -> (columns, lengths, special, new)
 *
 * The batch form: present-token columns of every record, concatenated (columns, int64 bytes),
 * with per-record counts (lengths, int64 bytes); records that are not non-empty dicts of simple
 * tokens are listed in special (their length is 0) for the general encoder. When growing, the
 * unknown str names of the simple records are in new, in order, and their places in columns
 * hold -1 (the caller registers them, in record order, and fills them in).
 */
static PyObject *
encode_many(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *records, *table;
    int grow;
    NameTable *t;
    if (!PyArg_ParseTuple(args, "O!Op", &PyList_Type, &records, &table, &grow)
            || (t = lookup_table(table, "encode_many")) == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(records), used = 0, capacity = 64;
    long long *columns = PyMem_Malloc(sizeof(long long) * capacity);
    long long *lengths = PyMem_Malloc(sizeof(long long) * (n ? n : 1));
    PyObject *special = PyList_New(0), *new_names = PyList_New(0), *result = NULL;
    Py_ssize_t *cols = NULL;
    if (columns == NULL || lengths == NULL || special == NULL || new_names == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *x = PyList_GET_ITEM(records, r);
        Py_ssize_t m = -1;
        lengths[r] = 0;
        if (PyDict_CheckExact(x) && PyDict_GET_SIZE(x) > 0) {
            m = simple_token_columns(x, t, grow, PY_SSIZE_T_MAX, &cols,
                                     grow ? new_names : NULL);
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
    result = Py_BuildValue("(y#y#OO)", (const char *)columns,
                           used * (Py_ssize_t)sizeof(long long), (const char *)lengths,
                           n * (Py_ssize_t)sizeof(long long), special, new_names);
done:
    PyMem_Free(cols);
    PyMem_Free(columns);
    PyMem_Free(lengths);
    Py_XDECREF(special);
    Py_XDECREF(new_names);
    return result;
}

/* Whether a buffer's items are native int64 ("q", or "l" where a long has 8 bytes). */
static int
is_int64(const Py_buffer *view)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '@' || *f == '=' || (PY_LITTLE_ENDIAN && *f == '<'))
        f++;
    return view->itemsize == 8 && (strcmp(f, "q") == 0 || strcmp(f, "l") == 0);
}

/* Column indices as a C array (PyMem-allocated), each checked against limit: a list of ints,
   or a C-contiguous buffer of int64 (what Schema.text_once gives). */
static Py_ssize_t *
read_columns(PyObject *obj, Py_ssize_t *n, Py_ssize_t limit)
{
    Py_buffer view;
    int is_list = PyList_Check(obj);
    if (is_list)
        *n = PyList_GET_SIZE(obj);
    else {
        if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            return NULL;
        if (!is_int64(&view)) {
            PyErr_SetString(PyExc_TypeError, "columns must be a list or an int64 buffer");
            PyBuffer_Release(&view);
            return NULL;
        }
        *n = view.len / 8;
    }
    Py_ssize_t *out = PyMem_Malloc(sizeof(Py_ssize_t) * (*n ? *n : 1));
    if (out == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        Py_ssize_t j = is_list ? PyLong_AsSsize_t(PyList_GET_ITEM(obj, i))
                               : (Py_ssize_t)((const int64_t *)view.buf)[i];
        if (j == -1 && PyErr_Occurred())
            goto fail;
        if (j < 0 || j >= limit) {
            PyErr_Format(PyExc_IndexError, "column %zd out of range [0, %zd)", j, limit);
            goto fail;
        }
        out[i] = j;
    }
    if (!is_list)
        PyBuffer_Release(&view);
    return out;
fail:
    PyMem_Free(out);
    if (!is_list)
        PyBuffer_Release(&view);
    return NULL;
}

/* ---- scoring -------------------------------------------------------------------------------- */

/*
 * For each class c, Σ_j [log(n_cj + a_present) − log(N_c − n_cj + a_absent)] over the columns,
 * into total[c]; a zero argument is not logged but counted in zeros[c] (+1 for a present cell,
 * −1 for an absent one). counts is (>= k, width) row-major.
 */
static void
log_odds_core(const double *counts, Py_ssize_t width, Py_ssize_t k, const Py_ssize_t *cols,
              Py_ssize_t n, const double *N, double a_present, double a_absent, double *total,
              long long *zeros)
{
    for (Py_ssize_t c = 0; c < k; c++)  /* the record's cells, loaded together */
        for (Py_ssize_t i = 0; i < n; i++)
            PREFETCH(counts + c * width + cols[i]);
    for (Py_ssize_t c = 0; c < k; c++) {
        const double *row = counts + c * width;
        double sum = 0.0;
        long long z = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            double present = row[cols[i]];
            double absent = N[c] - present;
            if (absent < 0.0)
                absent = 0.0;
            present += a_present;
            absent += a_absent;
            if (present > 0.0)
                sum += log(present);
            else
                z += 1;
            if (absent > 0.0)
                sum -= log(absent);
            else
                z -= 1;
        }
        total[c] = sum;
        zeros[c] = z;
    }
}

/* {label: probability} (or its log): softmax of finite over the classes with the fewest zero
 * factors; the others get 0 (-inf). The log form is exact where probabilities underflow. */
static PyObject *
posterior_core(PyObject *labels, const double *finite, const long long *zeros, Py_ssize_t k,
               int take_log)
{
    long long fewest = zeros[0];
    for (Py_ssize_t c = 1; c < k; c++)
        if (zeros[c] < fewest)
            fewest = zeros[c];
    double top = -INFINITY, sum = 0.0;
    for (Py_ssize_t c = 0; c < k; c++)
        if (zeros[c] == fewest && finite[c] > top)
            top = finite[c];
    for (Py_ssize_t c = 0; c < k; c++)
        if (zeros[c] == fewest)
            sum += exp(finite[c] - top);
    double log_sum = log(sum);
    PyObject *result = PyDict_New();
    if (result == NULL)
        return NULL;
    for (Py_ssize_t c = 0; c < k; c++) {
        double v;
        if (take_log)
            v = zeros[c] == fewest ? finite[c] - top - log_sum : -INFINITY;
        else
            v = zeros[c] == fewest ? exp(finite[c] - top) / sum : 0.0;
        PyObject *p = PyFloat_FromDouble(v);
        if (p == NULL || PyDict_SetItem(result, PyList_GET_ITEM(labels, c), p) < 0) {
            Py_XDECREF(p);
            Py_DECREF(result);
            return NULL;
        }
        Py_DECREF(p);
    }
    return result;
}

/* The buffers of a token scoring call (value_counts, class_counts, finite, zeros) checked for k
   classes; -1 with an error set (and nothing held) otherwise. */
static int
odds_buffers(PyObject *vc_obj, PyObject *cc_obj, PyObject *fin_obj, PyObject *zer_obj,
             Py_ssize_t k, Py_buffer *b, const char *where)
{
    if (get_buffers((PyObject *[]){vc_obj, cc_obj, fin_obj, zer_obj}, b,
                    (Py_ssize_t[]){8, 8, 8, 8}, 4, where,
                    (const char *[]){"value_counts", "class_counts", "finite", "zeros"}) < 0)
        return -1;
    if (check_rows(&b[0], k, "value_counts") < 0)
        goto fail;
    if (b[1].len / 8 < k || b[2].len / 8 < k || b[3].len / 8 < k) {
        PyErr_SetString(PyExc_ValueError, "class arrays shorter than n_classes");
        goto fail;
    }
    return 0;
fail:
    release_buffers(b, 4);
    return -1;
}

/* log_odds_core's per-class sums over cols added to the finite and zeros buffers (b[2], b[3]). */
static int
add_log_odds(const Py_buffer *b, Py_ssize_t k, const Py_ssize_t *cols, Py_ssize_t n,
             double a_present, double a_absent)
{
    double *total = PyMem_Malloc(sizeof(double) * (k ? k : 1));
    long long *z = PyMem_Malloc(sizeof(long long) * (k ? k : 1));
    if (total == NULL || z == NULL) {
        PyMem_Free(total);
        PyMem_Free(z);
        PyErr_NoMemory();
        return -1;
    }
    log_odds_core(b[0].buf, b[0].shape[1], k, cols, n, b[1].buf, a_present, a_absent, total, z);
    for (Py_ssize_t c = 0; c < k; c++) {
        ((double *)b[2].buf)[c] += total[c];
        ((long long *)b[3].buf)[c] += z[c];
    }
    PyMem_Free(total);
    PyMem_Free(z);
    return 0;
}

/*
 * token_log_odds(value_counts, n_classes, columns, class_counts, a_present, a_absent,
 *                finite_out, zeros_out)
 *
 * Adds log_odds_core's per-class sums to finite_out and zero counts to zeros_out.
 */
static PyObject *
token_log_odds(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *vc_obj, *cols_obj, *cc_obj, *fin_obj, *zer_obj;
    Py_ssize_t k, n;
    double a_present, a_absent;
    if (!PyArg_ParseTuple(args, "OnO!OddOO", &vc_obj, &k, &PyList_Type, &cols_obj, &cc_obj,
                          &a_present, &a_absent, &fin_obj, &zer_obj))
        return NULL;
    Py_buffer b[4];
    if (odds_buffers(vc_obj, cc_obj, fin_obj, zer_obj, k, b, "token_log_odds") < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *cols = read_columns(cols_obj, &n, b[0].shape[1]);
    if (cols != NULL && add_log_odds(b, k, cols, n, a_present, a_absent) == 0)
        result = Py_NewRef(Py_None);
    PyMem_Free(cols);
    release_buffers(b, 4);
    return result;
}

/*
 * token_odds_rows(value_counts, n_classes, columns, rows, class_counts, log_table, sums) -> bool
 *
 * A batch's token corrections summed per record: sums (n_rows × n_classes, overwritten) gets,
 * for each cell i and class c, lt[n] − lt[max(N_c − n, 0)] added to row rows[i], where n is
 * the cell's count and lt[j] = log(j + a): log θ(present) − log θ(absent) for one pseudo-count
 * a on both cells, read from the table instead of two logs per cell. The counts must be
 * integers (the caller checks; others are read truncated). False (sums zeroed) when N_c is not
 * an integer in the table's range, or a count is outside it: the caller computes the logs.
 */
static PyObject *
token_odds_rows(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *vc_obj, *cols_obj, *rows_obj, *cc_obj, *lt_obj, *sums_obj;
    Py_ssize_t k, n, n_cells;
    if (!PyArg_ParseTuple(args, "OnOOOOO", &vc_obj, &k, &cols_obj, &rows_obj, &cc_obj, &lt_obj,
                          &sums_obj))
        return NULL;
    Py_buffer b[4];
    if (get_buffers((PyObject *[]){vc_obj, cc_obj, lt_obj, sums_obj}, b,
                    (Py_ssize_t[]){8, 8, 8, 8}, 4, "token_odds_rows",
                    (const char *[]){"value_counts", "class_counts", "log_table", "sums"}) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *cols = NULL, *rows = NULL;
    if (check_rows(&b[0], k, "value_counts") < 0)
        goto done;
    if (k < 1 || b[1].len / 8 < k || b[3].len / 8 % k) {
        PyErr_SetString(PyExc_ValueError, "class_counts shorter than n_classes, or sums not "
                        "whole rows of n_classes");
        goto done;
    }
    n = b[3].len / 8 / k;
    if ((cols = read_columns(cols_obj, &n_cells, b[0].shape[1])) == NULL)
        goto done;
    Py_ssize_t n_rows;
    if ((rows = read_columns(rows_obj, &n_rows, n)) == NULL)
        goto done;
    if (n_rows != n_cells) {
        PyErr_SetString(PyExc_ValueError, "columns and rows differ in length");
        goto done;
    }
    const double *lt = b[2].buf, *N = b[1].buf;
    double *sums = b[3].buf;
    Py_ssize_t width = b[0].shape[1], top = b[2].len / 8;
    memset(sums, 0, b[3].len);
    int fits = 1;
    for (Py_ssize_t c = 0; c < k; c++)
        if (!(N[c] >= 0.0 && N[c] < (double)top && N[c] == (double)(Py_ssize_t)N[c]))
            fits = 0;
    /* Two classes at a time, each summing a run of one record's cells in a register: adding
       into sums[] directly chains every cell's addition through a store and a load. A record's
       sum continues from sums[], so the additions are those of a sequential pass in cell
       order, whatever the order of the rows. */
    for (Py_ssize_t c = 0; c < k && fits; c += 2) {
        int two = c + 1 < k;
        const double *count0 = (const double *)b[0].buf + c * width;
        const double *count1 = two ? count0 + width : count0;
        Py_ssize_t N0 = (Py_ssize_t)N[c], N1 = two ? (Py_ssize_t)N[c + 1] : N0, row = -1;
        double s0 = 0.0, s1 = 0.0;
        for (Py_ssize_t i = 0; i < n_cells; i++) {
            if (rows[i] != row) {
                if (row >= 0) {
                    sums[row * k + c] = s0;
                    if (two)
                        sums[row * k + c + 1] = s1;
                }
                row = rows[i];
                s0 = sums[row * k + c];
                s1 = two ? sums[row * k + c + 1] : 0.0;
            }
            double n0 = count0[cols[i]], n1 = count1[cols[i]];
            if (!(n0 >= 0.0 && n0 < (double)top && n1 >= 0.0 && n1 < (double)top)) {
                fits = 0;
                break;
            }
            /* integers (the caller's promise), read truncated: lt[n] − lt[max(N − n, 0)] */
            Py_ssize_t j0 = (Py_ssize_t)n0, j1 = (Py_ssize_t)n1;
            Py_ssize_t a0 = N0 > j0 ? N0 - j0 : 0, a1 = N1 > j1 ? N1 - j1 : 0;
            s0 += lt[j0] - lt[a0];
            s1 += lt[j1] - lt[a1];
        }
        if (row >= 0 && fits) {
            sums[row * k + c] = s0;
            if (two)
                sums[row * k + c + 1] = s1;
        }
    }
    if (!fits)
        memset(sums, 0, b[3].len);
    result = PyBool_FromLong(fits);
done:
    PyMem_Free(cols);
    PyMem_Free(rows);
    release_buffers(b, 4);
    return result;
}

/*
 * score_tokens(x, table, value_counts, n_classes, class_counts,
 *              a_present, a_absent, finite, zeros) -> rest
 *
 * encode_tokens(x, ..., grow=False) and token_log_odds on its columns in one call. When rest
 * (names needing the general encoder) is not empty, finite/zeros hold the token part only of
 * the record and the caller completes it.
 */
static PyObject *
score_tokens(PyObject *self, PyObject *args)
{
    PyObject *x, *table, *vc_obj, *cc_obj, *fin_obj, *zer_obj;
    Py_ssize_t k;
    double a_present, a_absent;
    NameTable *t;
    if (!PyArg_ParseTuple(args, "O!OOnOddOO", &PyDict_Type, &x, &table, &vc_obj, &k, &cc_obj,
                          &a_present, &a_absent, &fin_obj, &zer_obj)
            || (t = lookup_table(table, "score_tokens")) == NULL)
        return NULL;
    /* A record of bools and ints only (a message) is scored without building Python lists: the
     * one-record prediction path of every naive Bayes model runs through here. */
    Py_buffer b[4];
    if (odds_buffers(vc_obj, cc_obj, fin_obj, zer_obj, k, b, "score_tokens") < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *cols = NULL;
    Py_ssize_t n = simple_token_columns(x, t, 0, b[0].shape[1], &cols, NULL);
    if (n >= 0 && add_log_odds(b, k, cols, n, a_present, a_absent) == 0)
        result = PyList_New(0);
    PyMem_Free(cols);
    release_buffers(b, 4);
    if (n != -1)  /* scored, or an error (set) */
        return result;
    /* the general encoder's split: token columns here, the rest named for the caller */
    PyObject *encode_args = Py_BuildValue("(OOi)", x, table, 0);
    PyObject *encoded = encode_args ? encode_tokens(self, encode_args) : NULL;
    Py_XDECREF(encode_args);
    if (encoded == NULL)
        return NULL;
    PyObject *odds_args = Py_BuildValue("(OnOOddOO)", vc_obj, k, PyTuple_GET_ITEM(encoded, 0),
                                        cc_obj, a_present, a_absent, fin_obj, zer_obj);
    PyObject *scored = odds_args ? token_log_odds(self, odds_args) : NULL;
    Py_XDECREF(odds_args);
    if (scored == NULL) {
        Py_DECREF(encoded);
        return NULL;
    }
    Py_DECREF(scored);
    PyObject *rest = Py_NewRef(PyTuple_GET_ITEM(encoded, 1));
    Py_DECREF(encoded);
    return rest;
}

/* posterior(labels, finite, zeros[, log]) -> {label: probability or log-probability} */
static PyObject *
posterior(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *labels, *fin_obj, *zer_obj;
    int take_log = 0;
    if (!PyArg_ParseTuple(args, "O!OO|p", &PyList_Type, &labels, &fin_obj, &zer_obj, &take_log))
        return NULL;
    Py_buffer b[2];
    if (get_buffers((PyObject *[]){fin_obj, zer_obj}, b, (Py_ssize_t[]){8, 8}, 2,
                    "posterior", (const char *[]){"finite", "zeros"}) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t k = PyList_GET_SIZE(labels);
    if (b[0].len / 8 < k || b[1].len / 8 < k || k == 0)
        PyErr_SetString(PyExc_ValueError, "posterior: arrays shorter than the labels");
    else
        result = posterior_core(labels, b[0].buf, b[1].buf, k, take_log);
    release_buffers(b, 2);
    return result;
}

/* ---- counting ------------------------------------------------------------------------------- */

/* Moves the binned count `count` of column j (class row `bin`) out of its bin (-1: unbinned,
   ValueError set). */
static int
unbin(double *bin, Py_ssize_t top, double count, Py_ssize_t j)
{
    Py_ssize_t o = (Py_ssize_t)count;
    if (!(count > -1.0 && count < (double)top + 1.0)) {  /* NaN fails too */
        /* PyErr_Format has no %g: the count as Python's repr writes it, like the twin */
        char *text = PyOS_double_to_string(count, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (text == NULL)
            return -1;
        PyErr_Format(PyExc_ValueError, "count %s of column %zd is not binned", text, j);
        PyMem_Free(text);
        return -1;
    }
    bin[o] -= 1.0;
    return 0;
}

/*
 * Adds 1 to row[j] for each column j and, when binned, moves each non-head token from bin n to
 * bin n+1; tokens leaving the last bin are appended to crossed (their old bin emptied).
 */
static int
increment_core(double *row, double *bin, Py_ssize_t top, const char *is_head,
               const Py_ssize_t *cols, Py_ssize_t n, int binned, PyObject *crossed)
{
    for (Py_ssize_t i = 0; i < n; i++) {  /* a message's cells, loaded together */
        PREFETCH(row + cols[i]);
        PREFETCH(is_head + cols[i]);
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t j = cols[i];
        double old = row[j];
        row[j] = old + 1.0;
        if (!binned || is_head[j])
            continue;
        if (unbin(bin, top, old, j) < 0)
            return -1;
        Py_ssize_t o = (Py_ssize_t)old;
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
 * The buffers of an increment (value_counts, bins, is_head) checked for class c; the usable
 * column limit goes to *limit.
 */
static int
increment_buffers(PyObject *vc_obj, PyObject *bins_obj, PyObject *head_obj, Py_ssize_t c,
                  Py_buffer *b, Py_ssize_t *limit)
{
    if (get_buffers((PyObject *[]){vc_obj, bins_obj, head_obj}, b, (Py_ssize_t[]){8, 8, 1}, 3,
                    "increment", (const char *[]){"value_counts", "bins", "is_head"}) < 0)
        return -1;
    if (check_class_row(&b[0], c, "value_counts") < 0 || check_class_row(&b[1], c, "bins") < 0) {
        release_buffers(b, 3);
        return -1;
    }
    *limit = b[2].len < b[0].shape[1] ? b[2].len : b[0].shape[1];
    return 0;
}

/*
 * token_increment(value_counts, c, columns, bins, is_head, binned) -> crossed
 *
 * increment_core on class c's rows of value_counts and bins.
 */
static PyObject *
token_increment(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *vc_obj, *cols_obj, *bins_obj, *head_obj;
    Py_ssize_t c, limit, n;
    int binned;
    if (!PyArg_ParseTuple(args, "OnOOOp", &vc_obj, &c, &cols_obj, &bins_obj, &head_obj,
                          &binned))
        return NULL;
    Py_buffer b[3];
    if (increment_buffers(vc_obj, bins_obj, head_obj, c, b, &limit) < 0)
        return NULL;
    PyObject *crossed = NULL;
    Py_ssize_t *cols = read_columns(cols_obj, &n, limit);
    if (cols != NULL && (crossed = PyList_New(0)) != NULL &&
        increment_core((double *)b[0].buf + c * b[0].shape[1],
                       (double *)b[1].buf + c * b[1].shape[1], b[1].shape[1] - 1, b[2].buf,
                       cols, n, binned, crossed) < 0)
        Py_CLEAR(crossed);
    PyMem_Free(cols);
    release_buffers(b, 3);
    return crossed;
}

/*
 * token_increment_many(value_counts, classes, columns, bins, is_head) -> crossed
 *
 * A batch's token cells in order (cell i: class classes[i], column columns[i]; int64 buffers
 * of one length): token_increment's binned count of each, and what TokenHistogram.counted does
 * for a token that leaves the last bin, at once: it leaves every other class's bins (k = the
 * rows of bins) and joins the head (is_head set, so its later cells only count). crossed: those
 * columns, in the order they joined. O(cells), whatever the vocabulary. A class or column out
 * of range or an unbinned count stops the loop with the cells before it counted, and raises.
 */
static PyObject *
token_increment_many(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *vc_obj, *cls_obj, *cols_obj, *bins_obj, *head_obj;
    if (!PyArg_ParseTuple(args, "OOOOO", &vc_obj, &cls_obj, &cols_obj, &bins_obj, &head_obj))
        return NULL;
    Py_buffer b[3], cells[2];
    if (get_buffers((PyObject *[]){vc_obj, bins_obj, head_obj}, b, (Py_ssize_t[]){8, 8, 1}, 3,
                    "token_increment_many",
                    (const char *[]){"value_counts", "bins", "is_head"}) < 0)
        return NULL;
    PyObject *cell_objs[2] = {cls_obj, cols_obj}, *crossed = NULL;
    int got = 0;
    for (; got < 2; got++) {  /* read-only views: a batch's arrays may be read-only */
        if (PyObject_GetBuffer(cell_objs[got], &cells[got],
                               PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto done;
        if (cells[got].itemsize != 8) {
            PyBuffer_Release(&cells[got]);
            PyErr_Format(PyExc_TypeError, "token_increment_many: %s must have 8-byte items",
                         got ? "columns" : "classes");
            goto done;
        }
    }
    if (b[1].ndim != 2) {
        PyErr_SetString(PyExc_ValueError, "bins must be 2-d");
        goto done;
    }
    Py_ssize_t k = b[1].shape[0], top = b[1].shape[1] - 1, width = b[0].shape[1];
    if (check_rows(&b[0], k, "value_counts") < 0)
        goto done;
    Py_ssize_t n = cells[0].len / 8, limit = b[2].len < width ? b[2].len : width;
    if (cells[1].len / 8 != n) {
        PyErr_SetString(PyExc_ValueError, "classes and columns differ in length");
        goto done;
    }
    const long long *cls = cells[0].buf, *cols = cells[1].buf;
    double *vc = b[0].buf, *bins = b[1].buf;
    char *is_head = b[2].buf;
    if ((crossed = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + 8 < n) {  /* the cell a few steps ahead: in range, or not prefetched */
            long long c8 = cls[i + 8], j8 = cols[i + 8];
            if (c8 >= 0 && c8 < k && j8 >= 0 && j8 < limit) {
                PREFETCH(vc + c8 * width + j8);
                PREFETCH(is_head + j8);
            }
        }
        Py_ssize_t c = (Py_ssize_t)cls[i], j = (Py_ssize_t)cols[i];
        if (c < 0 || c >= k) {
            PyErr_Format(PyExc_IndexError, "class %zd out of range", c);
            goto fail;
        }
        if (j < 0 || j >= limit) {
            PyErr_Format(PyExc_IndexError, "column %zd out of range [0, %zd)", j, limit);
            goto fail;
        }
        double old = vc[c * width + j];
        vc[c * width + j] = old + 1.0;
        if (is_head[j])
            continue;
        if (unbin(bins + c * (top + 1), top, old, j) < 0)
            goto fail;
        Py_ssize_t o = (Py_ssize_t)old;
        if (o < top) {
            bins[c * (top + 1) + o + 1] += 1.0;
            continue;
        }
        for (Py_ssize_t other = 0; other < k; other++)
            if (other != c && unbin(bins + other * (top + 1), top, vc[other * width + j], j) < 0)
                goto fail;
        is_head[j] = 1;
        PyObject *col = PyLong_FromSsize_t(j);
        if (col == NULL || PyList_Append(crossed, col) < 0) {
            Py_XDECREF(col);
            goto fail;
        }
        Py_DECREF(col);
    }
    goto done;
fail:
    Py_CLEAR(crossed);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&cells[i]);
    release_buffers(b, 3);
    return crossed;
}

/*
 * learn_tokens(x, table, value_counts, c, bins, is_head, binned[, new_names])
 *     -> crossed | None
 *
 * token_increment for a message whose names are all known tokens with bool/int values (unknown
 * absent ones are skipped); None, changing nothing, when it needs the general path. With the
 * list new_names, unknown str names with a non-zero value are no reason for the general path:
 * they are appended to it and None is returned, changing nothing else, for the caller to
 * register them in bulk and call again (so the message is read here, not again in Python).
 */
static PyObject *
learn_tokens(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *x, *table, *vc_obj, *bins_obj, *head_obj, *new_names = Py_None;
    Py_ssize_t c, limit;
    int binned;
    NameTable *t;
    if (!PyArg_ParseTuple(args, "O!OOnOOp|O", &PyDict_Type, &x, &table, &vc_obj, &c, &bins_obj,
                          &head_obj, &binned, &new_names)
            || (t = lookup_table(table, "learn_tokens")) == NULL)
        return NULL;
    if (new_names != Py_None && !PyList_CheckExact(new_names)) {
        PyErr_SetString(PyExc_TypeError, "learn_tokens: new_names must be a list or None");
        return NULL;
    }
    PyObject *names = new_names == Py_None ? NULL : new_names;
    Py_ssize_t named = names ? PyList_GET_SIZE(names) : 0;
    Py_buffer b[3];
    if (increment_buffers(vc_obj, bins_obj, head_obj, c, b, &limit) < 0)
        return NULL;
    PyObject *crossed = NULL;
    Py_ssize_t *cols = NULL;
    Py_ssize_t n = simple_token_columns(x, t, 1, limit, &cols, names);
    if (n == -1 || (n >= 0 && names && PyList_GET_SIZE(names) > named))
        crossed = Py_NewRef(Py_None);
    else if (n >= 0 && (crossed = PyList_New(0)) != NULL &&
             increment_core((double *)b[0].buf + c * b[0].shape[1],
                            (double *)b[1].buf + c * b[1].shape[1], b[1].shape[1] - 1,
                            b[2].buf, cols, n, binned, crossed) < 0)
        Py_CLEAR(crossed);
    PyMem_Free(cols);
    release_buffers(b, 3);
    return crossed;
}

/* ---- all-absent sums ------------------------------------------------------------------------ */

/*
 * Σ_t log(N − n_t + a) for one class from its bins (bin[n] tokens have count n) and its head
 * tokens' counts, with lt[j] = log(j + a). With zero_terms (a = 0) terms whose argument is 0 are
 * counted instead of summed (lt[0] must then be 0).
 */
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
    /* with zero_terms, bin N (absent count 0) is counted after the sum, not summed */
    Py_ssize_t end = zero_terms && width == N + 1 ? N : width;
    /* Most of the bins below N are empty (a few hundred distinct counts among a thousand
       bins), so four at a time are skipped when all are zero, tested on their bits (an empty
       bin is +0.0); a group with a token is summed in order, its empty bins adding ±0, which
       leaves the total's bits unchanged: the same sum as one term per non-empty bin. */
    Py_ssize_t n = 0;
    for (; n + 4 <= end; n += 4) {
        uint64_t any, w;
        memcpy(&any, bin + n, 8);
        for (int i = 1; i < 4; i++) {
            memcpy(&w, bin + n + i, 8);
            any |= w;
        }
        if (any == 0)
            continue;
        for (int i = 0; i < 4; i++)
            total += bin[n + i] * lt[N - n - i];
    }
    for (; n < end; n++)
        total += bin[n] * lt[N - n];
    if (end < width)
        zeros += (long long)bin[N];
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

/* absent_sum_core for class c: b = {bins, value_counts, head, log_table} buffers. */
static int
class_absent_core(const Py_buffer *b, Py_ssize_t c, Py_ssize_t N, int zero_terms,
                  double *total, long long *zeros)
{
    return absent_sum_core((const double *)b[0].buf + c * b[0].shape[1], b[0].shape[1],
                           (const double *)b[1].buf + c * b[1].shape[1], b[1].shape[1],
                           b[2].buf, b[2].len / 8, b[3].buf, b[3].len / 8, N, zero_terms, total,
                           zeros);
}

/* class_absent_sum(bins, counts, c, N, log_table, head, zero_terms) -> (total, zeros) */
static PyObject *
class_absent_sum(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *bins_obj, *table_obj, *counts_obj, *head_obj;
    Py_ssize_t c, N;
    int zero_terms;
    if (!PyArg_ParseTuple(args, "OOnnOOp", &bins_obj, &counts_obj, &c, &N, &table_obj,
                          &head_obj, &zero_terms))
        return NULL;
    Py_buffer b[4];
    if (get_buffers((PyObject *[]){bins_obj, counts_obj, head_obj, table_obj}, b,
                    (Py_ssize_t[]){8, 8, 8, 8}, 4, "class_absent_sum",
                    (const char *[]){"bins", "counts", "head", "log_table"}) < 0)
        return NULL;
    PyObject *result = NULL;
    double total;
    long long zeros;
    if (check_class_row(&b[0], c, "bins") == 0 && check_class_row(&b[1], c, "counts") == 0 &&
        class_absent_core(b, c, N, zero_terms, &total, &zeros) == 0)
        result = Py_BuildValue("(dL)", total, zeros);
    release_buffers(b, 4);
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
 * classes in dirty (None: all). Returns False, changing nothing, when log_table does not reach
 * max N_c (the caller extends it and calls again).
 */
static PyObject *
class_terms(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *cc_obj, *bins_obj, *vc_obj, *head_obj, *table_obj, *dirty, *sums_obj, *sz_obj;
    PyObject *fin_obj, *zer_obj;
    Py_ssize_t k, n_tokens;
    double b_class, a_present, a_absent;
    if (!PyArg_ParseTuple(args, "OndddnOOOOOOOOO", &cc_obj, &k, &b_class, &a_present, &a_absent,
                          &n_tokens, &bins_obj, &vc_obj, &head_obj, &table_obj, &dirty, &sums_obj,
                          &sz_obj, &fin_obj, &zer_obj))
        return NULL;
    /* the first four in class_absent_core's order */
    Py_buffer b[9];
    if (get_buffers((PyObject *[]){bins_obj, vc_obj, head_obj, table_obj, cc_obj, sums_obj, sz_obj,
                                   fin_obj, zer_obj},
                    b, (Py_ssize_t[]){8, 8, 8, 8, 8, 8, 8, 8, 8}, 9, "class_terms",
                    (const char *[]){"bins", "value_counts", "head", "log_table", "class_counts",
                                     "sums", "sum_zeros", "finite", "zeros"}) < 0)
        return NULL;
    PyObject *result = NULL, *iter = NULL;
    if (check_rows(&b[0], k, "bins") < 0 || check_rows(&b[1], k, "value_counts") < 0)
        goto done;
    if (b[4].len / 8 < k || b[5].len / 8 < k || b[6].len / 8 < k || b[7].len / 8 < k ||
        b[8].len / 8 < k) {
        PyErr_SetString(PyExc_ValueError, "class_terms: arrays shorter than n_classes");
        goto done;
    }
    const double *N = b[4].buf;
    double *S = b[5].buf, *finite = b[7].buf;
    long long *SZ = b[6].buf, *zeros = b[8].buf;
    double top = 0.0, total = 0.0;
    for (Py_ssize_t c = 0; c < k; c++) {
        if (N[c] > top)
            top = N[c];
        total += N[c] + b_class;
    }
    if ((Py_ssize_t)top >= b[3].len / 8) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    if (n_tokens) {
        if (dirty != Py_None && (iter = PyObject_GetIter(dirty)) == NULL)
            goto done;
        for (Py_ssize_t i = 0;; i++) {
            Py_ssize_t c = i;
            if (iter != NULL) {
                PyObject *item = PyIter_Next(iter);
                if (item == NULL)
                    break;
                c = PyLong_AsSsize_t(item);
                Py_DECREF(item);
            }
            else if (i >= k)
                break;
            if (c < 0 || c >= k) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_IndexError, "dirty class out of range");
                goto done;
            }
            if (class_absent_core(b, c, (Py_ssize_t)N[c], a_absent == 0.0, &S[c], &SZ[c]) < 0)
                goto done;
        }
        if (PyErr_Occurred())
            goto done;
    }
    double log_total = log(total);
    for (Py_ssize_t c = 0; c < k; c++) {
        double w = N[c] + b_class;
        finite[c] = w > 0.0 ? log(w) - log_total : -log_total;
        zeros[c] = w > 0.0 ? 0 : 1;
        if (n_tokens) {
            finite[c] += S[c] - (double)n_tokens * log(N[c] + a_present + a_absent);
            zeros[c] += SZ[c];
        }
    }
    result = Py_NewRef(Py_True);
done:
    Py_XDECREF(iter);
    release_buffers(b, 9);
    return result;
}

/* ---- the spam filter's score ----------------------------------------------------------------- */

/* numpy's pairwise summation of a contiguous float64 array (what ndarray.sum computes), so that
   the kernel's sums round as the numpy path's did. */
static double
pairwise_sum(const double *a, Py_ssize_t n)
{
    if (n < 8) {
        double res = 0.0;
        for (Py_ssize_t i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        Py_ssize_t i;
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* d(w) ordered the most extreme first, among equal |d| the larger d. */
static inline int
ratio_before(double a, double b)
{
    return fabs(a) > fabs(b) || (fabs(a) == fabs(b) && a > b);
}

/* A spamicity ordered the most extreme first (|f − ½| descending), among equal the smaller f. */
typedef struct {
    double deviation, f;
} spamicity;

static inline int
spamicity_before(spamicity a, spamicity b)
{
    return a.deviation > b.deviation || (a.deviation == b.deviation && a.f < b.f);
}

/* A merge sort of a[0..n) by `before`, with tmp of n items: glibc's qsort allocates its own
   buffer and calls its comparison through a pointer, which cost more than the sums sorted. */
#define MERGE_SORT(name, type, before)                                                          \
    static void name(type *a, type *tmp, Py_ssize_t n)                                          \
    {                                                                                           \
        if (n <= 16) {                                                                          \
            for (Py_ssize_t i = 1; i < n; i++) {                                                \
                type v = a[i];                                                                  \
                Py_ssize_t j = i;                                                               \
                for (; j > 0 && before(v, a[j - 1]); j--)                                       \
                    a[j] = a[j - 1];                                                            \
                a[j] = v;                                                                       \
            }                                                                                   \
            return;                                                                             \
        }                                                                                       \
        Py_ssize_t h = n / 2, i = 0, j = h, k = 0;                                              \
        name(a, tmp, h);                                                                        \
        name(a + h, tmp, n - h);                                                                \
        while (i < h && j < n)                                                                  \
            tmp[k++] = before(a[j], a[i]) ? a[j++] : a[i++];                                    \
        while (i < h)                                                                           \
            tmp[k++] = a[i++];                                                                  \
        memcpy(a, tmp, (size_t)j * sizeof(type));                                               \
    }

MERGE_SORT(sort_ratios, double, ratio_before)
MERGE_SORT(sort_spamicities, spamicity, spamicity_before)

/* The first `keep` of d[0..n) in ratio order, into top (sorted; d is the sort's scratch space
   when keep >= n): all of them sorted when keep >= n, else a bounded insertion (a message has
   ~200 tokens, the mean takes ~25). */
static Py_ssize_t
top_ratios(double *d, Py_ssize_t n, Py_ssize_t keep, double *top)
{
    if (keep >= n) {
        memcpy(top, d, (size_t)n * sizeof(double));
        sort_ratios(top, d, n);
        return n;
    }
    Py_ssize_t filled = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double v = d[i];
        if (filled == keep && !ratio_before(v, top[keep - 1]))
            continue;
        Py_ssize_t at = filled < keep ? filled++ : keep - 1;
        while (at > 0 && ratio_before(v, top[at - 1])) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = v;
    }
    return keep;
}

/*
 * log(j + alpha) for the whole counts j below COUNT_LOGS, filled in as they are asked for (NaN:
 * not yet) and cleared when alpha changes: a message's ~200 tokens each need the logs of two
 * counts, almost all small whole numbers, and a table read costs far less than a log. The
 * values are log()'s, so reading them changes nothing.
 */
#define COUNT_LOGS 4096
static double count_logs[COUNT_LOGS];
static double count_logs_alpha = NAN;

static void
count_logs_for(double alpha)
{
    if (alpha == count_logs_alpha)
        return;
    for (Py_ssize_t j = 0; j < COUNT_LOGS; j++)
        count_logs[j] = NAN;
    count_logs_alpha = alpha;
}

static inline double
count_log(double n, double alpha)
{
    if (n >= 0.0 && n < COUNT_LOGS && n == (double)(Py_ssize_t)n) {
        double *v = &count_logs[(Py_ssize_t)n];
        if (*v != *v)
            *v = log(n + alpha);
        return *v;
    }
    return log(n + alpha);
}

/*
 * spam_evidence(columns, value_counts, spam, ham, totals, size, alpha, top_tokens, s, x,
 *               min_dev, max_tokens, learned) -> (known, multinomial, kept, spam_stat, ham_stat)
 *
 * SpamFilter's score of one message in one pass over its tokens' columns (read_columns: a list
 * or int64; a column at or past learned is a token never learned, numbered ahead as
 * Schema.text_lookup does, and carries no evidence): each known token's message counts n_s,
 * n_h in the rows spam and ham of value_counts (-1: a class not seen yet, counts 0,
 * θ = 1/size), and from them
 *   d(w) = [ln(n_s + α) − ln(T_s + α·size)] − [ln(n_h + α) − ln(T_h + α·size)]
 *   f(w) = (s·x + n·p)/(s + n),  p = b/(b + g) (x when b + g = 0),  b = n_s/N_s,  g = n_h/N_h
 * with totals = (N_s, N_h, T_s, T_h) (messages and draws per class; b or g is 0 where N is 0).
 * known: the tokens found; multinomial: the mean of the top_tokens d(w) in ratio order;
 * kept: the tokens with |f − ½| >= min_dev, at most max_tokens of them in spamicity order,
 * whose clipped f in [1e-300, 1 − 1e-16] give spam_stat = −2 Σ ln f and ham_stat =
 * −2 Σ ln(1 − f) (Fisher's χ² statistics). Sums are numpy's pairwise sums in those orders, so
 * the result does not depend on the tokens' order.
 */
static PyObject *
spam_evidence(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *cols_obj, *vc_obj;
    Py_ssize_t spam, ham, top_tokens, max_tokens, learned;
    double N_s, N_h, T_s, T_h, size, alpha, s, x, min_dev;
    if (!PyArg_ParseTuple(args, "OOnn(dddd)ddndddnn", &cols_obj, &vc_obj, &spam, &ham, &N_s,
                          &N_h, &T_s, &T_h, &size, &alpha, &top_tokens, &s, &x, &min_dev,
                          &max_tokens, &learned))
        return NULL;
    if (top_tokens < 1 || max_tokens < 1) {
        PyErr_SetString(PyExc_ValueError, "spam_evidence: top_tokens and max_tokens must be >= 1");
        return NULL;
    }
    if (!(size > 0.0 && alpha > 0.0 && N_s >= 0.0 && N_h >= 0.0 && T_s >= 0.0 && T_h >= 0.0)) {
        PyErr_SetString(PyExc_ValueError,
                        "spam_evidence: size and alpha must be > 0, the totals >= 0");
        return NULL;
    }
    Py_buffer b[1];
    if (get_buffers((PyObject *[]){vc_obj}, b, (Py_ssize_t[]){8}, 1, "spam_evidence",
                    (const char *[]){"value_counts"}) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t n = 0, known = 0, kept = 0, *columns = NULL;
    Py_ssize_t width = b[0].ndim == 2 ? b[0].shape[1] : 0;
    double *d = NULL;
    if ((spam != -1 && check_class_row(&b[0], spam, "value_counts") < 0)
        || (ham != -1 && check_class_row(&b[0], ham, "value_counts") < 0)
        || (columns = read_columns(cols_obj, &n, PY_SSIZE_T_MAX)) == NULL)
        goto done;
    /* d and top: n ratios each; f and scratch: n spamicities each (the sort's buffer, then the
       logs summed) */
    Py_ssize_t cap = n ? n : 1;
    d = PyMem_Malloc((sizeof(double) * 2 + sizeof(spamicity) * 2) * (size_t)cap);
    if (d == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *top = d + cap;
    spamicity *f = (spamicity *)(top + cap), *scratch = f + cap;
    double *logs = (double *)scratch;
    const double *counts = b[0].buf;
    double uniform = -log(size), A = alpha * size;
    double den_s = log(T_s + A), den_h = log(T_h + A);
    count_logs_for(alpha);
    /* first the learned columns, each count cell prefetched: the cells of a ~10⁵-token
       vocabulary are cache misses, which then overlap each other */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t j = columns[i];
        if (j >= learned)
            continue;  /* not learned yet (numbered ahead by the lookup): no evidence */
        if (j >= width) {
            PyErr_Format(PyExc_IndexError, "column %zd out of range [0, %zd)", j, width);
            goto done;
        }
        if (spam != -1)
            PREFETCH(counts + spam * width + j);
        if (ham != -1)
            PREFETCH(counts + ham * width + j);
        columns[known++] = j;
    }
    for (Py_ssize_t i = 0; i < known; i++) {
        Py_ssize_t j = columns[i];
        double n_s = spam == -1 ? 0.0 : counts[spam * width + j];
        double n_h = ham == -1 ? 0.0 : counts[ham * width + j];
        double log_s = spam == -1 ? uniform : count_log(n_s, alpha) - den_s;
        double log_h = ham == -1 ? uniform : count_log(n_h, alpha) - den_h;
        d[i] = log_s - log_h;
        double b_s = N_s > 0.0 ? n_s / N_s : 0.0, g_h = N_h > 0.0 ? n_h / N_h : 0.0;
        double total = b_s + g_h, p = total > 0.0 ? b_s / total : x, draws = n_s + n_h;
        double spamicity_w = (s * x + draws * p) / (s + draws);
        double deviation = fabs(spamicity_w - 0.5);
        if (deviation >= min_dev)
            f[kept++] = (spamicity){deviation, spamicity_w};
    }
    double multinomial = 0.0, spam_stat = 0.0, ham_stat = 0.0;
    if (known) {
        Py_ssize_t m = top_ratios(d, known, top_tokens, top);
        multinomial = pairwise_sum(top, m) / (double)m;
    }
    sort_spamicities(f, scratch, kept);
    if (kept > max_tokens)
        kept = max_tokens;
    for (Py_ssize_t i = 0; i < kept; i++) {
        double v = f[i].f < 1e-300 ? 1e-300 : f[i].f;
        f[i].f = v > 1.0 - 1e-16 ? 1.0 - 1e-16 : v;
        logs[i] = log(f[i].f);
    }
    spam_stat = -2.0 * pairwise_sum(logs, kept);
    for (Py_ssize_t i = 0; i < kept; i++)
        logs[i] = log1p(-f[i].f);
    ham_stat = -2.0 * pairwise_sum(logs, kept);
    result = Py_BuildValue("(ndndd)", known, multinomial, kept, spam_stat, ham_stat);
done:
    PyMem_Free(columns);
    PyMem_Free(d);
    release_buffers(b, 1);
    return result;
}

/* ---- numeric moments ------------------------------------------------------------------------ */

/*
 * covariance_add_one(weight, mean, comoment, square, cube, fourth, x) -> None
 *
 * One complete record x (p,) added in place to a class's pairwise moments, each a (p, p)
 * float64 array (streamnb/stats/covariance.py's W, M, C, V, T, Q): its twin's numpy expressions
 * element by element, in the same order. The old sums are moved to the new means (α = M' − M,
 * β = αᵀ) and the record's own terms added (α₂ = M' − x_i, β₂ = α₂ᵀ). Element (i, j) reads
 * (j, i) of α, V and T, so each pair (i, j), (j, i) is computed from the old values and then
 * written together.
 */
typedef struct {
    double c, v, t, q;
} moved_sums;

static moved_sums
moved_one(double w, double alpha, double beta, double c, double v, double v_t, double t,
          double t_t, double q, double alpha2, double beta2)
{
    double ab = alpha * beta, a2 = alpha * alpha;
    moved_sums m;
    m.c = c + w * ab;
    m.v = v + w * a2;
    m.t = t - beta * v - 2.0 * alpha * c - w * a2 * beta;
    m.q = (q - 2.0 * beta * t - 2.0 * alpha * t_t + beta * beta * v + a2 * v_t
           + 4.0 * ab * c + w * a2 * beta * beta);
    double ab2 = alpha2 * beta2, a22 = alpha2 * alpha2;
    m.c = m.c + ab2;
    m.v = m.v + a22;
    m.t = m.t - a22 * beta2;
    m.q = m.q + a22 * beta2 * beta2;
    return m;
}

static PyObject *
covariance_add_one(PyObject *Py_UNUSED(self), PyObject *args)
{
    static const char *const names[] = {"weight", "mean", "comoment", "square", "cube",
                                        "fourth", "x"};
    PyObject *objs[7];
    if (!PyArg_ParseTuple(args, "OOOOOOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &objs[6]))
        return NULL;
    Py_buffer b[7];
    if (get_buffers(objs, b, (Py_ssize_t[]){8, 8, 8, 8, 8, 8, 8}, 7, "covariance_add_one",
                    names) < 0)
        return NULL;
    PyObject *result = NULL;
    double *scratch = NULL;
    Py_ssize_t p = b[6].ndim == 1 ? b[6].shape[0] : -1;
    for (int i = 0; i < 7; i++) {
        if (strcmp(b[i].format, "d") != 0) {
            PyErr_Format(PyExc_TypeError, "covariance_add_one: %s must be float64",
                         names[i]);
            goto done;
        }
    }
    if (p < 0) {
        PyErr_SetString(PyExc_ValueError, "covariance_add_one: x must be 1-d");
        goto done;
    }
    for (int i = 0; i < 6; i++) {
        if (b[i].ndim != 2 || b[i].shape[0] != p || b[i].shape[1] != p) {
            PyErr_Format(PyExc_ValueError, "covariance_add_one: %s must be %zd x %zd",
                         names[i], p, p);
            goto done;
        }
    }
    double *W = b[0].buf, *M = b[1].buf, *C = b[2].buf, *V = b[3].buf, *T = b[4].buf,
           *Q = b[5].buf;
    const double *x = b[6].buf;
    Py_ssize_t n = p * p;
    scratch = PyMem_Malloc((size_t)(3 * n + 1) * sizeof(double));
    if (scratch == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *mean = scratch, *alpha = scratch + n, *alpha2 = scratch + 2 * n;
    for (Py_ssize_t i = 0; i < p; i++) {
        for (Py_ssize_t j = 0; j < p; j++) {
            Py_ssize_t e = i * p + j;
            double w = W[e] + 1.0;
            mean[e] = M[e] + (x[i] - M[e]) * (1.0 / w);
            alpha[e] = mean[e] - M[e];
            alpha2[e] = mean[e] - x[i];
        }
    }
    for (Py_ssize_t i = 0; i < p; i++) {
        for (Py_ssize_t j = i; j < p; j++) {
            Py_ssize_t e = i * p + j, f = j * p + i;
            moved_sums m = moved_one(W[e], alpha[e], alpha[f], C[e], V[e], V[f], T[e], T[f],
                                     Q[e], alpha2[e], alpha2[f]);
            moved_sums m_t = moved_one(W[f], alpha[f], alpha[e], C[f], V[f], V[e], T[f], T[e],
                                       Q[f], alpha2[f], alpha2[e]);
            C[e] = m.c, V[e] = m.v, T[e] = m.t, Q[e] = m.q;
            C[f] = m_t.c, V[f] = m_t.v, T[f] = m_t.t, Q[f] = m_t.q;
        }
    }
    for (Py_ssize_t e = 0; e < n; e++) {
        W[e] = W[e] + 1.0;
        M[e] = mean[e];
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(scratch);
    release_buffers(b, 7);
    return result;
}

/* ---- kernel density estimates (KernelNB) ---------------------------------------------------- */

/* Bin exponents a cell may hold: 2^e is then a finite double, and origin + bin stays far from
   int64 overflow (streamnb/stats/binned_density.py keeps e in [−40, 962], |origin| < 2^62). */
#define KDE_MIN_EXPONENT (-1074)
#define KDE_MAX_EXPONENT 1023
#define KDE_MAX_ORIGIN ((int64_t)1 << 62)
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Cells [from, to) of the (k, p) origin and exponent arrays within those bounds, else -1 with
   ValueError naming the first cell out of them (a corrupt state). */
static int
check_cells(const int64_t *origin, const int64_t *exponent, Py_ssize_t from, Py_ssize_t to,
            Py_ssize_t p, const char *where)
{
    for (Py_ssize_t e = from; e < to; e++) {
        if (exponent[e] < KDE_MIN_EXPONENT || exponent[e] > KDE_MAX_EXPONENT
                || origin[e] < -KDE_MAX_ORIGIN || origin[e] > KDE_MAX_ORIGIN) {
            PyErr_Format(PyExc_ValueError, "%s: cell (%zd, %zd) has bins 2^%lld wide from "
                         "%lld, out of range", where, e / p, e % p, (long long)exponent[e],
                         (long long)origin[e]);
            return -1;
        }
    }
    return 0;
}

/* Check the formats (float64 "d", int64 "q") and shapes ((k, p, B) for the first, (k, p) for
   the next n_cells − 1) of the buffers of a binned density: 0, or -1 with the error. */
static int
check_binned(const Py_buffer *b, int n_cells, const char *const *formats,
             const char *const *names, const char *where)
{
    for (int i = 0; i < n_cells; i++) {
        if (formats[i][0] == 'q' ? !is_int64(&b[i]) : strcmp(b[i].format, "d") != 0) {
            PyErr_Format(PyExc_TypeError, "%s: %s must be %s", where, names[i],
                         formats[i][0] == 'q' ? "int64" : "float64");
            return -1;
        }
    }
    if (b[0].ndim != 3) {
        PyErr_Format(PyExc_ValueError, "%s: counts must be 3-d", where);
        return -1;
    }
    for (int i = 1; i < n_cells; i++) {
        if (b[i].ndim != 2 || b[i].shape[0] != b[0].shape[0] || b[i].shape[1] != b[0].shape[1]) {
            PyErr_Format(PyExc_ValueError, "%s: %s must be %zd x %zd", where, names[i],
                         b[0].shape[0], b[0].shape[1]);
            return -1;
        }
    }
    return 0;
}

/* log f(t) of one cell: the kernel density estimate Σ_b N_b φ((t − m_b) / h) / (h Σ_b N_b) over
   the cell's B bins (centre m_b = (origin + b + ½) 2^e); −inf when the cell holds nothing (or t
   is infinite). The held bins' smallest ½z² (s, at bin `nearest`) is factored out so that a far
   tail stays finite. The centres are equally spaced, δ = 2^e / h bandwidths apart, so the ratio
   of neighbouring terms e^{−½z²} is itself geometric: from `nearest` outwards each term is the
   last times g, and g shrinks by e^{−δ²} each step (z_{b+1} = z_b − δ). Three exp calls per cell
   instead of one per bin; each step adds two roundings, a relative 3·10⁻¹⁴ across 128 bins. The
   terms between `nearest` and t rise to e^s: beyond s = KDE_GEOMETRIC_MAX they are summed one
   exp at a time, as they would overflow. A term that reaches 0 stays 0 (it only falls further
   away from t), which ends that side. */
#define KDE_GEOMETRIC_MAX 700.0

static double
kde_cell(const double *N, Py_ssize_t B, int64_t origin, int64_t exponent, double h, double t,
         double log_sqrt_2pi)
{
    double w = ldexp(1.0, (int)exponent), inv = 1.0 / h, total = 0.0, s = INFINITY;
    Py_ssize_t nearest = -1;
    for (Py_ssize_t b = 0; b < B; b++) {
        if (N[b] > 0.0) {
            double z = (t - ((double)(origin + b) + 0.5) * w) * inv;
            double q = 0.5 * z * z;
            total += N[b];
            if (q < s) {
                s = q;
                nearest = b;
            }
        }
    }
    if (nearest < 0)
        return -INFINITY;
    double sum = N[nearest];
    if (s <= KDE_GEOMETRIC_MAX) {
        double delta = w * inv, shrink = exp(-delta * delta);
        double z = (t - ((double)(origin + nearest) + 0.5) * w) * inv;
        double term = 1.0, g = exp(delta * z - 0.5 * delta * delta);
        for (Py_ssize_t b = nearest + 1; b < B && term != 0.0; b++) {
            term *= g;
            g *= shrink;
            if (N[b] > 0.0)
                sum += N[b] * term;
        }
        term = 1.0, g = exp(-delta * z - 0.5 * delta * delta);
        for (Py_ssize_t b = nearest - 1; b >= 0 && term != 0.0; b--) {
            term *= g;
            g *= shrink;
            if (N[b] > 0.0)
                sum += N[b] * term;
        }
    }
    else {
        for (Py_ssize_t b = 0; b < B; b++) {
            if (N[b] > 0.0 && b != nearest) {
                double z = (t - ((double)(origin + b) + 0.5) * w) * inv;
                sum += N[b] * exp(s - 0.5 * z * z);
            }
        }
    }
    return log(sum) - s - log(h * total) - log_sqrt_2pi;
}

/*
 * kde_log_likelihood(counts, origin, exponent, bandwidth, values, attributes, out) -> None
 *
 * out[i, c] += Σ_a log f_{c,a}(values[i, a]) over the listed attributes a (in their order) whose
 * value is not NaN: f_{c,a} the Gaussian kernel density estimate of cell (c, a) over its bins
 * (counts (k, p, B), origin and exponent (k, p) int64; streamnb/stats/binned_density.py) with
 * bandwidth h = bandwidth[c, a] (k, p), never below the cell's bin width 2^e (the sketch
 * resolves nothing finer; NaN is the bin width too). values (m, p), out (m, k). O(m·|attributes|
 * ·k·B) multiplications and 3 exp calls per term of the sum over attributes: the one- and the
 * many-record prediction of KernelNB, straight from its state, nothing cached between records.
 */
static PyObject *
kde_log_likelihood(PyObject *Py_UNUSED(self), PyObject *args)
{
    static const char *const names[] = {"counts", "origin", "exponent", "bandwidth", "values",
                                        "out"};
    static const char *const formats[] = {"d", "q", "q", "d"};
    const char *where = "kde_log_likelihood";
    PyObject *objs[6], *attributes_obj;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &attributes_obj, &objs[5]))
        return NULL;
    Py_buffer b[6];
    if (get_buffers(objs, b, (Py_ssize_t[]){8, 8, 8, 8, 8, 8}, 6, where, names) < 0)
        return NULL;
    PyObject *result = NULL;
    Py_ssize_t *attributes = NULL, q;
    if (check_binned(b, 4, formats, names, where) < 0)
        goto done;
    for (int i = 4; i < 6; i++) {
        if (strcmp(b[i].format, "d") != 0) {
            PyErr_Format(PyExc_TypeError, "%s: %s must be float64", where, names[i]);
            goto done;
        }
    }
    Py_ssize_t k = b[0].shape[0], p = b[0].shape[1], B = b[0].shape[2];
    if (b[4].ndim != 2 || b[4].shape[1] != p) {
        PyErr_Format(PyExc_ValueError, "%s: values must be 2-d with %zd columns", where, p);
        goto done;
    }
    Py_ssize_t m = b[4].shape[0];
    if (b[5].ndim != 2 || b[5].shape[0] != m || b[5].shape[1] != k) {
        PyErr_Format(PyExc_ValueError, "%s: out must be %zd x %zd", where, m, k);
        goto done;
    }
    const int64_t *origin = b[1].buf, *exponent = b[2].buf;
    if (check_cells(origin, exponent, 0, k * p, p, where) < 0)
        goto done;
    if ((attributes = read_columns(attributes_obj, &q, p)) == NULL)
        goto done;
    const double *counts = b[0].buf, *bandwidth = b[3].buf, *values = b[4].buf;
    double *out = b[5].buf, log_sqrt_2pi = 0.5 * log(2.0 * M_PI);
    for (Py_ssize_t i = 0; i < m; i++) {
        for (Py_ssize_t c = 0; c < k; c++) {
            double acc = out[i * k + c];
            for (Py_ssize_t j = 0; j < q; j++) {
                Py_ssize_t a = attributes[j], e = c * p + a;
                double t = values[i * p + a], width = ldexp(1.0, (int)exponent[e]);
                if (t != t)
                    continue;  /* missing: the factor is omitted */
                acc += kde_cell(counts + e * B, B, origin[e], exponent[e],
                                bandwidth[e] > width ? bandwidth[e] : width, t, log_sqrt_2pi);
            }
            out[i * k + c] = acc;
        }
    }
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(attributes);
    release_buffers(b, 6);
    return result;
}

/*
 * binned_add_one(counts, origin, exponent, weight, mean, m2, c, x) -> list
 *
 * One record x (p,) of class c added to a binned density in place: for each attribute a whose
 * value is not NaN, Welford's update of the moments (weight, mean, M2) of cell (c, a), and its
 * bin's count + 1 when the value falls in the cell's bins (index floor(x / 2^e) − origin in
 * [0, B)) and the cell held values before. The attributes whose value fell outside are
 * returned, in order, their counts untouched: re-binning them (rare) is the caller's.
 */
static PyObject *
binned_add_one(PyObject *Py_UNUSED(self), PyObject *args)
{
    static const char *const names[] = {"counts", "origin", "exponent", "weight", "mean", "m2",
                                        "x"};
    static const char *const formats[] = {"d", "q", "q", "d", "d", "d"};
    const char *where = "binned_add_one";
    PyObject *objs[7];
    Py_ssize_t c;
    if (!PyArg_ParseTuple(args, "OOOOOOnO", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4],
                          &objs[5], &c, &objs[6]))
        return NULL;
    Py_buffer b[7];
    if (get_buffers(objs, b, (Py_ssize_t[]){8, 8, 8, 8, 8, 8, 8}, 7, where, names) < 0)
        return NULL;
    PyObject *result = NULL, *outside = NULL;
    if (check_binned(b, 6, formats, names, where) < 0)
        goto done;
    if (strcmp(b[6].format, "d") != 0) {
        PyErr_Format(PyExc_TypeError, "%s: x must be float64", where);
        goto done;
    }
    Py_ssize_t k = b[0].shape[0], p = b[0].shape[1], B = b[0].shape[2];
    if (b[6].ndim != 1 || b[6].shape[0] != p) {
        PyErr_Format(PyExc_ValueError, "%s: x must be 1-d of length %zd", where, p);
        goto done;
    }
    if (c < 0 || c >= k) {
        PyErr_Format(PyExc_IndexError, "class %zd out of range", c);
        goto done;
    }
    const int64_t *origin = (const int64_t *)b[1].buf + c * p,
                  *exponent = (const int64_t *)b[2].buf + c * p;
    if (check_cells(b[1].buf, b[2].buf, c * p, (c + 1) * p, p, where) < 0)
        goto done;
    double *counts = (double *)b[0].buf + c * p * B, *w = (double *)b[3].buf + c * p,
           *mean = (double *)b[4].buf + c * p, *m2 = (double *)b[5].buf + c * p;
    const double *x = b[6].buf;
    if ((outside = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t a = 0; a < p; a++) {
        double v = x[a];
        if (v != v)
            continue;
        double scaled = floor(ldexp(v, -(int)exponent[a]));
        if (scaled >= (double)origin[a] && scaled < (double)(origin[a] + B) && w[a] > 0.0)
            counts[a * B + (Py_ssize_t)(scaled - (double)origin[a])] += 1.0;
        else {
            PyObject *index = PyLong_FromSsize_t(a);
            if (index == NULL || PyList_Append(outside, index) < 0) {
                Py_XDECREF(index);
                goto done;
            }
            Py_DECREF(index);
        }
        w[a] += 1.0;
        double d = v - mean[a];
        mean[a] += d / w[a];
        m2[a] += d * (v - mean[a]);
    }
    result = Py_NewRef(outside);
done:
    Py_XDECREF(outside);
    release_buffers(b, 7);
    return result;
}

/* ---- Fisher's χ² tails ------------------------------------------------------------------- */

/* ln k! for k = 0 … n_log_factorials − 1, grown on demand up to MAX_LOG_FACTORIALS entries by
   a compensated (Kahan) sum of libm's ln k, as the twin's table is: CPython's math.lgamma is
   not libm's lgamma, and the compensated sum stays within an ulp or two of ln k! where a plain
   one drifts by ~k ulps. Past the table (a message of 65,536 kept tokens) the sum goes on
   without being kept. */
#define MAX_LOG_FACTORIALS ((Py_ssize_t)1 << 16)
static double *log_factorials;
static Py_ssize_t n_log_factorials;
static double log_factorial_carry; /* the compensation after the table's last term */

static int
log_factorial(Py_ssize_t k, double *out)
{
    if (k >= n_log_factorials && n_log_factorials < MAX_LOG_FACTORIALS) {
        Py_ssize_t size = n_log_factorials ? 2 * n_log_factorials : 256;
        if (size <= k)
            size = k < MAX_LOG_FACTORIALS ? k + 1 : MAX_LOG_FACTORIALS;
        if (size > MAX_LOG_FACTORIALS)
            size = MAX_LOG_FACTORIALS;
        double *table = PyMem_Realloc(log_factorials, (size_t)size * sizeof(double));
        if (table == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        if (n_log_factorials == 0)
            table[n_log_factorials++] = 0.0;
        double total = table[n_log_factorials - 1], carry = log_factorial_carry;
        for (Py_ssize_t j = n_log_factorials; j < size; j++) {
            double y = log((double)j) - carry;
            double t = total + y;
            carry = (t - total) - y;
            total = t;
            table[j] = total;
        }
        log_factorials = table;
        n_log_factorials = size;
        log_factorial_carry = carry;
    }
    if (k < n_log_factorials) {
        *out = log_factorials[k];
        return 0;
    }
    double total = log_factorials[n_log_factorials - 1], carry = log_factorial_carry;
    for (Py_ssize_t j = n_log_factorials; j <= k; j++) {
        double y = log((double)j) - carry;
        double t = total + y;
        carry = (t - total) - y;
        total = t;
    }
    *out = total;
    return 0;
}

/* Σ e^−λ λᵏ/k! from k = start on, k stepping by step (±1) away from the mode λ: the twin's
   _poisson_run (the first term in log space, the rest by the ratio of neighbours). */
static int
poisson_run(double lam, Py_ssize_t start, int step, double *out)
{
    double log_start;
    if (log_factorial(start, &log_start) < 0)
        return -1;
    double term = exp((double)start * log(lam) - lam - log_start);
    double total = term;
    Py_ssize_t k = start;
    while (term > total * 1e-17 && k + step >= 0) {
        term *= step < 0 ? (double)k / lam : lam / (double)(k + 1);
        k += step;
        total += term;
    }
    *out = total;
    return 0;
}

/* ln Q and ln(1 − Q) of the χ² survival Q(stat; 2m): the twin's _log_tails. */
static int
log_tails(double stat, Py_ssize_t m, double *log_q, double *log_not_q)
{
    double lam = stat / 2.0, run;
    if (lam <= 0.0) {
        *log_q = 0.0;
        *log_not_q = -INFINITY;
        return 0;
    }
    if (lam >= (double)m) { /* Q is the smaller tail */
        if (poisson_run(lam, m - 1, -1, &run) < 0)
            return -1;
        *log_q = run > 0.0 ? log(run) : -INFINITY;
        *log_not_q = log1p(-run);
        return 0;
    }
    if (poisson_run(lam, m, 1, &run) < 0) /* 1 − Q: the terms from m on */
        return -1;
    *log_q = log1p(-run);
    *log_not_q = run > 0.0 ? log(run) : -INFINITY;
    return 0;
}

/* ln(eᵃ + eᵇ): the twin's _logaddexp (numpy's npy_logaddexp). */
static double
logaddexp(double a, double b)
{
    if (a == b)
        return a + 0.6931471805599453; /* ln 2, as libm's log(2.0) rounds it */
    double gap = a - b;
    if (gap > 0)
        return a + log1p(exp(-gap));
    if (gap <= 0)
        return b + log1p(exp(gap));
    return gap; /* NaN */
}

/*
 * chi2_log_odds(m, spam_stat, ham_stat) -> float
 *
 * ln I − ln(1 − I) of Fisher's combined indicator I = (1 + H − S) / 2 over m spamicities, with
 * H = Q(spam_stat; 2m) and S = Q(ham_stat; 2m) (0 when m = 0). Q of an even dof 2m in closed
 * form: the chance of fewer than m events of a Poisson process of mean stat/2. The smaller
 * tail is summed and its log taken, the larger is log1p of minus it, so the log-odds stays
 * finite and ordered where I itself rounds to 0 or 1.
 */
static PyObject *
chi2_log_odds(PyObject *Py_UNUSED(self), PyObject *args)
{
    Py_ssize_t m;
    double spam_stat, ham_stat, log_h, log_not_h, log_s, log_not_s;
    if (!PyArg_ParseTuple(args, "ndd:chi2_log_odds", &m, &spam_stat, &ham_stat))
        return NULL;
    if (m < 0) {
        PyErr_SetString(PyExc_ValueError, "chi2_log_odds: m must be >= 0");
        return NULL;
    }
    if (m == 0)
        return PyFloat_FromDouble(0.0);
    if (log_tails(spam_stat, m, &log_h, &log_not_h) < 0
        || log_tails(ham_stat, m, &log_s, &log_not_s) < 0)
        return NULL;
    /* I = (H + (1 − S)) / 2,  1 − I = ((1 − H) + S) / 2 */
    return PyFloat_FromDouble(logaddexp(log_h, log_not_s) - logaddexp(log_not_h, log_s));
}

/* ---- module --------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"encode_tokens", encode_tokens, METH_VARARGS, "Token columns of a record (fast path)."},
    {"encode_many", encode_many, METH_VARARGS, "Present-token columns of a batch."},
    {"text_columns", text_columns, METH_VARARGS, "Columns of a text value drawn once a token."},
    {"drawn_once", drawn_once, METH_O, "Whether a text value draws each token once."},
    {"token_log_odds", token_log_odds, METH_VARARGS, "Σ log θ(present)/θ(absent) per class."},
    {"token_odds_rows", token_odds_rows, METH_VARARGS,
     "A batch's token corrections per record, from a log table."},
    {"score_tokens", score_tokens, METH_VARARGS, "encode_tokens + token_log_odds."},
    {"posterior", posterior, METH_VARARGS, "Probabilities from log-likelihoods."},
    {"token_increment", token_increment, METH_VARARGS, "Count one record's tokens."},
    {"token_increment_many", token_increment_many, METH_VARARGS,
     "A batch's token cells counted and binned."},
    {"learn_tokens", learn_tokens, METH_VARARGS, "One-record update of a message."},
    {"class_absent_sum", class_absent_sum, METH_VARARGS, "One class's all-absent log sum."},
    {"class_terms", class_terms, METH_VARARGS, "Class prior + all-absent token sums."},
    {"spam_evidence", spam_evidence, METH_VARARGS, "SpamFilter's score of one message."},
    {"covariance_add_one", covariance_add_one, METH_VARARGS,
     "One complete record added to a class's pairwise moments."},
    {"kde_log_likelihood", kde_log_likelihood, METH_VARARGS,
     "Kernel density log-likelihoods of records, per class."},
    {"binned_add_one", binned_add_one, METH_VARARGS,
     "One record added to a binned density's bins and moments."},
    {"chi2_log_odds", chi2_log_odds, METH_VARARGS, "Fisher's χ² log-odds from its statistics."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "streamnb._accel._kernels",
    .m_doc = "Per-record kernels (token path, numeric moments, χ² tails).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__kernels(void)
{
    if (name_table_import() < 0)
        return NULL;
    return PyModule_Create(&module);
}
