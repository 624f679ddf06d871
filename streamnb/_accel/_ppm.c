/*
 * Byte-context (PPM) kernels (the extension streamnb._accel._ppm): learn a message's bytes into
 * a class's context counts, and score a message under both classes' models.
 *
 * The table is three arrays owned by streamnb.stats.ppm.ByteContexts: keys (int64, -1 for an
 * empty slot; a power-of-two number of slots, open addressing with linear probing), counts
 * (float64, 2 x slots: c(h, s) at a (context, byte) key, n(h) at a context key) and distinct
 * (uint16, 2 x slots: d(h) at a context key). A key packs the order k, the k context bytes and
 * the byte (or a flag for the context itself) into 63 bits, so no two keys collide. The caller
 * keeps the table at most half full (it prunes before a message could fill it), so a probe
 * always ends. Each message costs O(bytes x (order + 1)) probes.
 *
 * Each function has a pure-Python twin in streamnb/_accel/ppm.py with the same results (the same
 * operations in the same order, libm's log); tests/test_ppm.py checks each against its twin.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A hint to load a cache line that a later read will need: the table outgrows the CPU caches,
   and a position's keys are independent, so their probes can overlap. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif

#define MAX_ORDER 6
#define CONTEXT_FLAG ((int64_t)1 << 60)
#define EMPTY ((int64_t)-1)

typedef struct {
    Py_buffer views[3];
    int64_t *keys;
    double *counts;
    uint16_t *distinct;
    Py_ssize_t size; /* slots */
    int shift;       /* 64 - log2(size) */
} Table;

static void
table_release(Table *t)
{
    for (int i = 0; i < 3; i++)
        PyBuffer_Release(&t->views[i]);
}

/* The three arrays, checked: contiguous, writable, of the right item sizes and shapes. */
static int
table_acquire(Table *t, PyObject *keys, PyObject *counts, PyObject *distinct, const char *where)
{
    PyObject *objects[3] = {keys, counts, distinct};
    const char *names[3] = {"keys", "counts", "distinct"};
    const Py_ssize_t items[3] = {8, 8, 2};
    const Py_ssize_t per_slot[3] = {1, 2, 2};
    int got = 0;
    for (; got < 3; got++) {
        if (PyObject_GetBuffer(objects[got], &t->views[got],
                               PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            goto fail;
        if (t->views[got].itemsize != items[got]) {
            PyErr_Format(PyExc_TypeError, "%s: %s has items of %zd bytes, expected %zd", where,
                         names[got], t->views[got].itemsize, items[got]);
            got++;
            goto fail;
        }
    }
    t->size = t->views[0].len / 8;
    for (int i = 1; i < 3; i++) {
        if (t->views[i].len / items[i] != per_slot[i] * t->size) {
            PyErr_Format(PyExc_ValueError, "%s: %s does not hold 2 rows of %zd slots", where,
                         names[i], t->size);
            goto fail;
        }
    }
    if (t->size < 2 || (t->size & (t->size - 1)) != 0) {
        PyErr_Format(PyExc_ValueError, "%s: the table's size must be a power of two", where);
        goto fail;
    }
    t->shift = 64;
    for (Py_ssize_t s = t->size; s > 1; s >>= 1)
        t->shift--;
    t->keys = (int64_t *)t->views[0].buf;
    t->counts = (double *)t->views[1].buf;
    t->distinct = (uint16_t *)t->views[2].buf;
    return 0;
fail:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&t->views[i]);
    return -1;
}

static inline Py_ssize_t
home(int64_t key, int shift)
{
    return (Py_ssize_t)(((uint64_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> shift);
}

/* The keys of byte i under its contexts of 0..top bytes (top = min(i, order)): the byte with
 * k bytes before it, and those k bytes alone, each tagged with k; their slots are prefetched
 * while the next key is built. Returns top. */
static inline int
byte_keys(const Table *t, const unsigned char *b, Py_ssize_t i, int order, int64_t *sym_key,
          int64_t *ctx_key)
{
    int64_t packed = 0;
    int top = i < order ? (int)i : order;
    for (int k = 0; k <= top; k++) {
        packed |= (int64_t)b[i - k] << (8 * k);
        int64_t tag = (int64_t)k << 56;
        sym_key[k] = packed | tag;
        ctx_key[k] = (packed >> 8) | tag | CONTEXT_FLAG;
        PREFETCH(&t->keys[home(sym_key[k], t->shift)]);
        PREFETCH(&t->keys[home(ctx_key[k], t->shift)]);
    }
    return top;
}

/* The slot of key, or -1 if absent. */
static inline Py_ssize_t
find(const int64_t *keys, Py_ssize_t size, int shift, int64_t key)
{
    Py_ssize_t at = home(key, shift);
    for (;;) {
        int64_t held = keys[at];
        if (held == key)
            return at;
        if (held == EMPTY)
            return -1;
        at = (at + 1) & (size - 1);
    }
}

/* The slot of key, claimed if absent (*inserted counts the claims). */
static inline Py_ssize_t
find_or_insert(Table *t, int64_t key, Py_ssize_t *inserted)
{
    Py_ssize_t at = home(key, t->shift);
    for (;;) {
        int64_t held = t->keys[at];
        if (held == key)
            return at;
        if (held == EMPTY) {
            t->keys[at] = key;
            (*inserted)++;
            return at;
        }
        at = (at + 1) & (t->size - 1);
    }
}

static int
check_arguments(int order, int cls, const char *where)
{
    if (order < 0 || order > MAX_ORDER) {
        PyErr_Format(PyExc_ValueError, "%s: order must be in 0..%d, got %d", where, MAX_ORDER,
                     order);
        return -1;
    }
    if (cls != 0 && cls != 1) {
        PyErr_Format(PyExc_ValueError, "%s: class must be 0 or 1, got %d", where, cls);
        return -1;
    }
    return 0;
}

/* ppm_learn(data, order, cls, keys, counts, distinct) -> new slots claimed */
static PyObject *
ppm_learn(PyObject *self, PyObject *args)
{
    Py_buffer data;
    int order, cls;
    PyObject *keys, *counts, *distinct;
    if (!PyArg_ParseTuple(args, "y*iiOOO", &data, &order, &cls, &keys, &counts, &distinct))
        return NULL;
    Table t;
    if (check_arguments(order, cls, "ppm_learn") < 0 ||
        table_acquire(&t, keys, counts, distinct, "ppm_learn") < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)data.buf;
    double *c_row = t.counts + cls * t.size;
    uint16_t *d_row = t.distinct + cls * t.size;
    Py_ssize_t inserted = 0;
    int64_t sym_key[MAX_ORDER + 1], ctx_key[MAX_ORDER + 1];
    for (Py_ssize_t i = 0; i < data.len; i++) {
        int top = byte_keys(&t, b, i, order, sym_key, ctx_key);
        for (int k = 0; k <= top; k++) {
            Py_ssize_t s = find_or_insert(&t, sym_key[k], &inserted);
            Py_ssize_t h = find_or_insert(&t, ctx_key[k], &inserted);
            if (c_row[s] == 0.0)
                d_row[h]++;
            c_row[s] += 1.0;
            c_row[h] += 1.0;
        }
    }
    table_release(&t);
    PyBuffer_Release(&data);
    return PyLong_FromSsize_t(inserted);
}

/* The in-message counts of adaptive scoring: a scratch open-addressing table of the message's
   own keys with, per class, c (or n) and d. It is kept from call to call (the GIL is held
   throughout) and only its claimed slots are cleared: a fresh one a message would cost more
   in page faults than the scoring itself. */
typedef struct {
    int64_t key;
    double count[2];
    double distinct[2];
} Local;

typedef struct {
    Local *slots;
    Py_ssize_t *claimed; /* the slots in use, to clear */
    Py_ssize_t size, n_claimed;
    int shift;
} Scratch;

static Scratch scratch = {NULL, NULL, 0, 0, 64};

/* The scratch table with at least `needed` slots, all empty; -1 (MemoryError) if it cannot
   grow. */
static int
scratch_ready(Py_ssize_t needed)
{
    if (scratch.size < needed) {
        Py_ssize_t size = 2;
        int shift = 63;
        while (size < needed) {
            size <<= 1;
            shift--;
        }
        Local *slots = malloc(size * sizeof(Local));
        Py_ssize_t *claimed = malloc(size * sizeof(Py_ssize_t));
        if (slots == NULL || claimed == NULL) {
            free(slots);
            free(claimed);
            PyErr_NoMemory();
            return -1;
        }
        free(scratch.slots);
        free(scratch.claimed);
        for (Py_ssize_t i = 0; i < size; i++)
            slots[i] = (Local){EMPTY, {0.0, 0.0}, {0.0, 0.0}};
        scratch = (Scratch){slots, claimed, size, 0, shift};
    }
    return 0;
}

static void
scratch_clear(void)
{
    for (Py_ssize_t i = 0; i < scratch.n_claimed; i++)
        scratch.slots[scratch.claimed[i]] = (Local){EMPTY, {0.0, 0.0}, {0.0, 0.0}};
    scratch.n_claimed = 0;
}

static inline Local *
scratch_slot(int64_t key)
{
    Py_ssize_t at = home(key, scratch.shift);
    for (;;) {
        Local *slot = &scratch.slots[at];
        if (slot->key == key)
            return slot;
        if (slot->key == EMPTY) {
            slot->key = key;
            scratch.claimed[scratch.n_claimed++] = at;
            return slot;
        }
        at = (at + 1) & (scratch.size - 1);
    }
}

/* ppm_score(data, order, keys, counts, distinct) -> (ln P_0(data), ln P_1(data)), each class's
   model also learning the message as it codes it (adaptive), the table itself unchanged. Each
   key is looked up once for both classes: the table outgrows the CPU caches, and its probes
   are most of the cost. */
static PyObject *
ppm_score(PyObject *self, PyObject *args)
{
    Py_buffer data;
    int order;
    PyObject *keys, *counts, *distinct;
    if (!PyArg_ParseTuple(args, "y*iOOO", &data, &order, &keys, &counts, &distinct))
        return NULL;
    Table t;
    if (check_arguments(order, 0, "ppm_score") < 0 ||
        table_acquire(&t, keys, counts, distinct, "ppm_score") < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    /* at most 2 (order + 1) keys a byte: at most half full */
    if (scratch_ready(4 * (order + 1) * (data.len + 1)) < 0) {
        table_release(&t);
        PyBuffer_Release(&data);
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)data.buf;
    double total[2] = {0.0, 0.0};
    Py_ssize_t sym_slot[MAX_ORDER + 1], ctx_slot[MAX_ORDER + 1];
    Local *sym_local[MAX_ORDER + 1], *ctx_local[MAX_ORDER + 1];
    int64_t sym_key[MAX_ORDER + 1], ctx_key[MAX_ORDER + 1];
    for (Py_ssize_t i = 0; i < data.len; i++) {
        int top = byte_keys(&t, b, i, order, sym_key, ctx_key);
        for (int k = 0; k <= top; k++) {
            int64_t sym = sym_key[k], ctx = ctx_key[k];
            sym_slot[k] = find(t.keys, t.size, t.shift, sym);
            ctx_slot[k] = find(t.keys, t.size, t.shift, ctx);
            sym_local[k] = scratch_slot(sym);
            ctx_local[k] = scratch_slot(ctx);
        }
        for (int cls = 0; cls < 2; cls++) {
            const double *c_row = t.counts + cls * t.size;
            const uint16_t *d_row = t.distinct + cls * t.size;
            double p = 1.0 / 256;
            for (int k = 0; k <= top; k++) {
                double n = (ctx_slot[k] >= 0 ? c_row[ctx_slot[k]] : 0.0) +
                           ctx_local[k]->count[cls];
                if (n > 0.0) {
                    double c = (sym_slot[k] >= 0 ? c_row[sym_slot[k]] : 0.0) +
                               sym_local[k]->count[cls];
                    double d = (ctx_slot[k] >= 0 ? (double)d_row[ctx_slot[k]] : 0.0) +
                               ctx_local[k]->distinct[cls];
                    p = fmax(c - 0.5, 0.0) / n + d / (2.0 * n) * p;
                }
            }
            total[cls] += log(p);
            for (int k = 0; k <= top; k++) {
                double before = sym_slot[k] >= 0 ? c_row[sym_slot[k]] : 0.0;
                if (before == 0.0 && sym_local[k]->count[cls] == 0.0)
                    ctx_local[k]->distinct[cls] += 1.0;
                sym_local[k]->count[cls] += 1.0;
                ctx_local[k]->count[cls] += 1.0;
            }
        }
    }
    scratch_clear();
    table_release(&t);
    PyBuffer_Release(&data);
    return Py_BuildValue("(dd)", total[0], total[1]);
}

static PyMethodDef methods[] = {
    {"ppm_learn", ppm_learn, METH_VARARGS, "Learn a message's bytes into a class's counts."},
    {"ppm_score", ppm_score, METH_VARARGS, "Adaptive log-likelihoods of a message per class."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "streamnb._accel._ppm",
    .m_doc = "Byte-context (PPM) kernels.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__ppm(void)
{
    return PyModule_Create(&module);
}
