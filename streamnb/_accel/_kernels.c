/*
 * Per-record kernels of the token path.
 *
 * A message touches ~20 of possibly 100k token columns. Every numpy call costs about a
 * microsecond however small its array, so the one-record path (encode a message, add it to the
 * counts, score it) is a few short loops here instead of a dozen tiny numpy operations. Each
 * function has a pure-Python twin beside this file, in kernels.py, with the same results (same
 * operations in the same order, libm's log); tests/test_kernels.py checks each against its twin.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

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

/*
 * PyMem_Realloc for a table that lookups read at random (a NameTable's entries, slots and
 * arena), asking Linux for transparent huge pages once it is 4 MiB or more, as numpy does for
 * its arrays: past the CPU caches each lookup's loads would otherwise also miss the TLB (at
 * 10^6 names, ~6% of learn_many's time on this machine). Advice only; a failure is ignored.
 */
static void *
table_realloc(void *p, size_t size)
{
    p = PyMem_Realloc(p, size);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != NULL && size >= ((size_t)1 << 22)) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
        uintptr_t end = ((uintptr_t)p + size) & ~(page - 1);
        if (end > start)
            (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
#endif
    return p;
}

/* ---- name table ----------------------------------------------------------------------------- */

/*
 * NameTable: names ↔ indices 0, 1, ... in order of addition, each name with an int32 value its
 * owner assigns (-1 unless set): the schema's attribute registry, whose size is the vocabulary,
 * a value being a token's count-array column. A Python dict from str costs ~150 B a name (the
 * str object, its entry, an int object for the index); here a str name is a 16-byte entry (its
 * value and its UTF-8 bytes when they are at most NAME_INLINE, else their place in an arena,
 * length-prefixed) plus 4 bytes of hash (read only to rehash) and 6-12 bytes of
 * open-addressing slots (int32: the entry's index and a fingerprint of the hash, slot_of). A
 * lookup past the CPU caches then reads the slot and one entry, which holds all it needs: a
 * short name's bytes, which confirm the match, and the value (at 10^6 names the arena's bytes,
 * a column kept in an array of its own and the entries of other names on the probe chain
 * each cost another scattered load, each a fifth to a third of a token's lookup).
 * Names that are not str (sparse ids, n-gram tuples, bools) and str that UTF-8 cannot encode
 * (lone surrogates) live in a side dict, with Python's own equality (True == 1). Limits: 2**31 - 1
 * names, 4 GiB of them in UTF-8.
 */
#define NAME_EMPTY (-1)
#define NAME_DELETED (-2)

#define NAME_INLINE 11   /* UTF-8 bytes an entry holds */
#define NAME_FAR 0xfe    /* length: the bytes are in the arena */
#define NAME_SIDE 0xff   /* length: a side name */

/* The layout name_probe relies on: `length` and `bytes` are the entry's last 12 bytes. */
typedef struct {
    int32_t value;    /* the owner's */
    uint8_t length;   /* 0 .. NAME_INLINE: the UTF-8 bytes are in `bytes`; NAME_FAR, NAME_SIDE */
    unsigned char bytes[NAME_INLINE];  /* NAME_FAR: bytes[0 .. 3], the arena offset of the
                                          length-prefixed UTF-8 (unaligned: memcpy) */
} NameEntry;
_Static_assert(sizeof(NameEntry) == 16 && offsetof(NameEntry, bytes) == 5,
               "a NameEntry is 16 bytes, its last 12 the length and the bytes");

typedef struct {
    PyObject_HEAD
    NameEntry *entries;
    uint32_t *hashes;     /* per entry: the low 32 bits of the str's hash (0 for a side name) */
    Py_ssize_t n, capacity;
    int32_t *slots;       /* NAME_EMPTY, NAME_DELETED or a name's (slot_of) */
    Py_ssize_t n_slots;   /* 0 or a power of two, 2**index_bits (2**31 at most) */
    int index_bits;       /* of a slot: the entry's index; those above, the fingerprint */
    Py_ssize_t filled;    /* slots not NAME_EMPTY */
    unsigned char *arena;
    Py_ssize_t arena_used, arena_capacity;
    PyObject *side;       /* non-str name -> index */
    PyObject *side_names; /* index -> non-str name */
} NameTable;

static PyTypeObject NameTableType;
static int name_truncate(NameTable *t, Py_ssize_t n);

/* 1 and the name's UTF-8 if it is stored in the arena, 0 if in the side dict, -1 on error. */
static int
name_utf8(PyObject *name, const char **s, Py_ssize_t *len)
{
    if (!PyUnicode_Check(name))
        return 0;
    *s = PyUnicode_AsUTF8AndSize(name, len);
    if (*s != NULL)
        return 1;
    if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
        return -1;
    PyErr_Clear();
    return 0;
}

/* A far name's place in the arena. */
static uint32_t
name_start(const NameEntry *e)
{
    uint32_t start;
    memcpy(&start, e->bytes, sizeof start);
    return start;
}

/* The stored bytes of entry e (not a side name). */
static const unsigned char *
name_bytes(const NameTable *t, const NameEntry *e, Py_ssize_t *len)
{
    if (e->length <= NAME_INLINE) {
        *len = e->length;
        return e->bytes;
    }
    const unsigned char *p = t->arena + name_start(e);
    Py_ssize_t n = 0;
    int shift = 0;
    for (;;) {
        unsigned char byte = *p++;
        n |= (Py_ssize_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            break;
        shift += 7;
    }
    *len = n;
    return p;
}

/*
 * A short name (len <= NAME_INLINE) as its entry stores it from `length` on, the length byte
 * and the UTF-8 zero-padded to 11 bytes, as two little-endian words: *head bytes 0 .. 7, *tail
 * bytes 8 .. 11. Built from fixed-size reads within s (overlapping where len is not a power of
 * two), since a memcpy of a variable length is a call per lookup.
 */
static inline void
name_key(const char *s, Py_ssize_t len, uint64_t *head, uint32_t *tail)
{
    uint64_t bytes = 0;  /* s[0 .. min(len, 7)) */
    uint32_t rest = 0;   /* s[7 .. len) */
    if (len >= 8) {
        uint32_t last;
        memcpy(&bytes, s, 8);
        memcpy(&last, s + len - 4, 4);  /* s[len - 4 .. len): s[7] is its byte 11 - len */
        rest = last >> (8 * (11 - len));
    }
    else if (len >= 4) {
        uint32_t first, last;
        memcpy(&first, s, 4);
        memcpy(&last, s + len - 4, 4);
        bytes = first | ((uint64_t)last << (8 * (len - 4)));
    }
    else
        for (Py_ssize_t k = 0; k < len; k++)
            bytes |= (uint64_t)(unsigned char)s[k] << (8 * k);
    *head = (uint64_t)len | (bytes << 8);  /* s[7] drops off the top: it is in rest */
    *tail = rest;
}

/*
 * A name's slot: its entry's index in the low index_bits bits and above them, up to bit 30, a
 * fingerprint, the hash's bits above those that chose the home slot. A probe passes the other
 * names of its chain on the slots alone, without loading their entries (at 10^6 names, in a
 * table at most 2/3 full, that was about one needless cache miss a lookup); slots stay 4
 * bytes. The fingerprint has 31 - index_bits bits (10 at 10^6 names, none from 2**31 slots).
 */
static inline int32_t
slot_fingerprint(const NameTable *t, uint32_t hash)
{
    uint32_t bits = 31 - (uint32_t)t->index_bits;
    return (int32_t)(((hash >> t->index_bits) & ((1u << bits) - 1)) << t->index_bits);
}

static inline uint32_t
slot_index_mask(const NameTable *t)
{
    return t->index_bits >= 31 ? 0x7fffffffu : (1u << t->index_bits) - 1;
}

static inline int32_t
slot_of(const NameTable *t, Py_ssize_t e, uint32_t hash)
{
    return slot_fingerprint(t, hash) | (int32_t)e;
}

/* The entry a slot names when it is a name's with this fingerprint (a candidate for the name
   whose hash gave it), else -1: empty, deleted, or another name's. */
static inline Py_ssize_t
slot_candidate(int32_t slot, int32_t fingerprint, uint32_t index_mask)
{
    if (slot < 0 || (int32_t)((uint32_t)slot & ~index_mask) != fingerprint)
        return -1;
    return (Py_ssize_t)((uint32_t)slot & index_mask);
}

/* The slot holding the str (hash, s, len), or of the empty slot ending its probe (< 0 never;
   requires n_slots > 0). */
static Py_ssize_t
name_probe(const NameTable *t, uint32_t hash, const char *s, Py_ssize_t len)
{
    size_t mask = (size_t)t->n_slots - 1, i = (size_t)hash & mask;
    int32_t fingerprint = slot_fingerprint(t, hash);
    uint32_t index_mask = slot_index_mask(t);
    int far = len > NAME_INLINE;
    /* a short name as its entry stores it from `length` on (the bytes zero-padded): twelve
       bytes compared as two words, where a call to memcmp per entry of the probe cost more
       than the hash compare it replaces */
    uint64_t key_head = 0;
    uint32_t key_tail = 0;
    if (!far)
        name_key(s, len, &key_head, &key_tail);
    for (;;) {
        int32_t slot = t->slots[i];
        if (slot == NAME_EMPTY)
            return (Py_ssize_t)i;
        Py_ssize_t e = slot_candidate(slot, fingerprint, index_mask);
        if (e >= 0) {
            const NameEntry *entry = &t->entries[e];
            if (!far) {
                uint64_t head;
                uint32_t tail;
                memcpy(&head, &entry->length, 8);
                memcpy(&tail, (const unsigned char *)&entry->length + 8, 4);
                if (head == key_head && tail == key_tail)
                    return (Py_ssize_t)i;
            }
            else if (entry->length == NAME_FAR) {  /* the fingerprint matched: compare */
                Py_ssize_t stored;
                const unsigned char *bytes = name_bytes(t, entry, &stored);
                if (stored == len && memcmp(bytes, s, (size_t)len) == 0)
                    return (Py_ssize_t)i;
            }
        }
        i = (i + 1) & mask;
    }
}

/* Index of name, -1 if absent, -2 on error. */
static Py_ssize_t
name_find(NameTable *t, PyObject *name)
{
    const char *s;
    Py_ssize_t len;
    int in_arena = name_utf8(name, &s, &len);
    if (in_arena < 0)
        return -2;
    if (!in_arena) {
        PyObject *index = PyDict_GetItemWithError(t->side, name);
        if (index == NULL)
            return PyErr_Occurred() ? -2 : -1;
        return PyLong_AsSsize_t(index);
    }
    if (t->n_slots == 0)
        return -1;
    Py_hash_t hash = PyObject_Hash(name);
    if (hash == -1)
        return -2;
    int32_t slot = t->slots[name_probe(t, (uint32_t)hash, s, len)];
    return slot >= 0 ? (Py_ssize_t)((uint32_t)slot & slot_index_mask(t)) : -1;
}

#define PREFETCH_NAMES 64
#define PREFETCH_CHAIN 4  /* probe-chain slots looked at (of one or two cache lines) */

/*
 * Load ahead what the lookups of names[0 .. m) (m <= PREFETCH_NAMES) in t will read, stage by
 * stage: each name's slot, then the entries its probe chain's fingerprints point to (which
 * hold the values), then a long name's arena bytes. Past the CPU caches a lookup is two or
 * three dependent misses; this way the names wait for each stage together instead of one name
 * after another. Hints only: nothing is decided here, names that are not str are passed over,
 * and a small table is skipped.
 */
static void
names_prefetch(const NameTable *t, PyObject *const *names, Py_ssize_t m)
{
    if (t->n_slots < (1 << 16))  /* 256 KiB of slots, within the caches */
        return;
    size_t mask = (size_t)t->n_slots - 1, at[PREFETCH_NAMES];
    uint32_t hashes[PREFETCH_NAMES];
    Py_ssize_t used = 0, n_far = 0, far[PREFETCH_NAMES];
    for (Py_ssize_t k = 0; k < m; k++) {
        if (!PyUnicode_CheckExact(names[k]))
            continue;
        Py_hash_t hash = PyObject_Hash(names[k]);  /* cached in the str */
        if (hash == -1) {
            PyErr_Clear();
            continue;
        }
        hashes[used] = (uint32_t)hash;
        at[used] = (size_t)(uint32_t)hash & mask;
        PREFETCH(&t->slots[at[used]]);
        /* may have more than NAME_INLINE bytes of UTF-8 */
        if (!PyUnicode_IS_ASCII(names[k]) || PyUnicode_GET_LENGTH(names[k]) > NAME_INLINE)
            far[n_far++] = used;
        used++;
    }
    /* the entries whose fingerprint matches: the name's own, most likely, or none */
    uint32_t index_mask = slot_index_mask(t);
    Py_ssize_t first[PREFETCH_NAMES];  /* each name's first candidate, or -1 */
    for (Py_ssize_t k = 0; k < used; k++) {
        size_t i = at[k];
        int32_t fingerprint = slot_fingerprint(t, hashes[k]);
        first[k] = -1;
        for (int step = 0; step < PREFETCH_CHAIN; step++, i = (i + 1) & mask) {
            int32_t slot = t->slots[i];
            if (slot == NAME_EMPTY)
                break;
            Py_ssize_t e = slot_candidate(slot, fingerprint, index_mask);
            if (e >= 0) {
                PREFETCH(&t->entries[e]);
                if (first[k] < 0)
                    first[k] = e;
            }
        }
    }
    /* a long name's arena bytes, when its first candidate is a far entry (the name's own but
       once in 2**(31 - index_bits): a fingerprint that matches another name's) */
    for (Py_ssize_t f = 0; f < n_far && t->arena_used; f++) {
        Py_ssize_t k = far[f];
        if (first[k] < 0)
            continue;
        const NameEntry *entry = &t->entries[first[k]];
        if (entry->length == NAME_FAR)
            PREFETCH(t->arena + name_start(entry));
    }
}

static int
name_rehash(NameTable *t, Py_ssize_t n_slots)
{
    int32_t *slots = table_realloc(NULL, sizeof(int32_t) * (size_t)n_slots);
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(slots, 0xff, sizeof(int32_t) * (size_t)n_slots);  /* NAME_EMPTY */
    size_t mask = (size_t)n_slots - 1;
    int bits = 0;
    while (((Py_ssize_t)1 << bits) < n_slots)
        bits++;
    t->index_bits = bits < 31 ? bits : 31;
    for (Py_ssize_t e = 0; e < t->n; e++) {
        if (t->entries[e].length == NAME_SIDE)
            continue;
        size_t i = (size_t)t->hashes[e] & mask;
        while (slots[i] != NAME_EMPTY)
            i = (i + 1) & mask;
        slots[i] = slot_of(t, e, t->hashes[e]);
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->n_slots = n_slots;
    t->filled = 0;
    for (Py_ssize_t e = 0; e < t->n; e++)
        t->filled += t->entries[e].length != NAME_SIDE;
    return 0;
}

/* Room for `more` new names: entries, and slots at most 2/3 filled. */
static int
name_reserve(NameTable *t, Py_ssize_t more)
{
    if (t->n + more > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a NameTable holds at most 2**31 - 1 names");
        return -1;
    }
    if (t->n + more > t->capacity) {
        Py_ssize_t capacity = t->capacity ? t->capacity : 16;
        while (capacity < t->n + more)
            capacity += capacity / 2;
        NameEntry *grown = table_realloc(t->entries, sizeof(NameEntry) * (size_t)capacity);
        if (grown != NULL)
            t->entries = grown;
        uint32_t *hashes = grown ? PyMem_Realloc(t->hashes, sizeof(uint32_t) * (size_t)capacity)
                                 : NULL;
        if (hashes == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->hashes = hashes;
        t->capacity = capacity;
    }
    if (3 * (t->filled + more) >= 2 * t->n_slots) {
        Py_ssize_t n_slots = 16, live = t->n + more;
        while (3 * live >= 2 * n_slots)
            n_slots *= 2;
        return name_rehash(t, n_slots);
    }
    return 0;
}

#define NAME_PRESENT (-3)

/* Append name with value (name_reserve(t, 1) done): its index, NAME_PRESENT (nothing done)
   if it is already there, or -1 on error. The probe that looks for it finds its slot. */
static Py_ssize_t name_append_utf8(NameTable *t, const char *s, Py_ssize_t len, uint32_t hash,
                                   int32_t value);

static Py_ssize_t
name_append(NameTable *t, PyObject *name, int32_t value)
{
    const char *s;
    Py_ssize_t len, e = t->n;
    int in_arena = name_utf8(name, &s, &len);
    if (in_arena < 0)
        return -1;
    if (!in_arena) {
        int present = PyDict_Contains(t->side, name);
        if (present)
            return present < 0 ? -1 : NAME_PRESENT;
        PyObject *index = PyLong_FromSsize_t(e);
        if (index == NULL)
            return -1;
        if (PyDict_SetItem(t->side, name, index) < 0) {
            Py_DECREF(index);
            return -1;
        }
        if (PyDict_SetItem(t->side_names, index, name) < 0) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            if (PyDict_DelItem(t->side, name) < 0)
                PyErr_Clear();
            PyErr_Restore(type, value, tb);
            Py_DECREF(index);
            return -1;
        }
        Py_DECREF(index);
        t->entries[e].value = value;
        t->entries[e].length = NAME_SIDE;
        t->hashes[e] = 0;
        t->n++;
        return e;
    }
    Py_hash_t hash = PyObject_Hash(name);
    if (hash == -1)
        return -1;
    return name_append_utf8(t, s, len, (uint32_t)hash, value);
}

/* Append the str name of UTF-8 s[0 .. len) whose hash is `hash` (name_reserve(t, 1) done), as
   name_append. */
static Py_ssize_t
name_append_utf8(NameTable *t, const char *s, Py_ssize_t len, uint32_t hash, int32_t value)
{
    Py_ssize_t e = t->n;
    int far = len > NAME_INLINE;
    if (far && t->arena_used + len + 10 >= (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a NameTable holds at most 4 GiB of long names");
        return -1;
    }
    if (far && t->arena_used + len + 10 > t->arena_capacity) {
        Py_ssize_t capacity = t->arena_capacity ? t->arena_capacity : 256;
        while (t->arena_used + len + 10 > capacity)
            capacity += capacity / 2;
        unsigned char *grown = table_realloc(t->arena, (size_t)capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->arena = grown;
        t->arena_capacity = capacity;
    }
    Py_ssize_t i = name_probe(t, (uint32_t)hash, s, len);
    if (t->slots[i] >= 0)
        return NAME_PRESENT;
    NameEntry *entry = &t->entries[e];
    memset(entry, 0, sizeof *entry);
    entry->value = value;
    t->hashes[e] = (uint32_t)hash;
    t->slots[i] = slot_of(t, e, (uint32_t)hash);
    t->filled++;
    t->n++;
    if (!far) {
        entry->length = (uint8_t)len;
        memcpy(entry->bytes, s, (size_t)len);
        return e;
    }
    entry->length = NAME_FAR;
    uint32_t start = (uint32_t)t->arena_used;
    memcpy(entry->bytes, &start, sizeof start);
    unsigned char *p = t->arena + t->arena_used;
    size_t rest = (size_t)len;
    do {
        unsigned char byte = rest & 0x7f;
        rest >>= 7;
        *p++ = byte | (rest ? 0x80 : 0);
    } while (rest);
    memcpy(p, s, (size_t)len);
    t->arena_used = (p - t->arena) + len;
    return e;
}

/* A new reference to the name of index e (0 <= e < n). */
static PyObject *
name_at(const NameTable *t, Py_ssize_t e)
{
    if (t->entries[e].length == NAME_SIDE) {
        PyObject *index = PyLong_FromSsize_t(e);
        if (index == NULL)
            return NULL;
        PyObject *name = PyDict_GetItemWithError(t->side_names, index);
        Py_DECREF(index);
        if (name == NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "NameTable: a side name is missing");
        return Py_XNewRef(name);
    }
    Py_ssize_t len;
    const unsigned char *bytes = name_bytes(t, &t->entries[e], &len);
    return PyUnicode_DecodeUTF8((const char *)bytes, len, NULL);
}

static PyObject *
NameTable_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "NameTable() takes no arguments");
        return NULL;
    }
    NameTable *t = (NameTable *)type->tp_alloc(type, 0);
    if (t == NULL)
        return NULL;
    t->side = PyDict_New();
    t->side_names = PyDict_New();
    if (t->side == NULL || t->side_names == NULL) {
        Py_DECREF(t);
        return NULL;
    }
    return (PyObject *)t;
}

static void
NameTable_dealloc(NameTable *t)
{
    PyMem_Free(t->entries);
    PyMem_Free(t->hashes);
    PyMem_Free(t->slots);
    PyMem_Free(t->arena);
    Py_XDECREF(t->side);
    Py_XDECREF(t->side_names);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static Py_ssize_t
NameTable_len(NameTable *t)
{
    return t->n;
}

static int
NameTable_contains(NameTable *t, PyObject *name)
{
    Py_ssize_t e = name_find(t, name);
    return e == -2 ? -1 : e >= 0;
}

/* get(name, default=None) -> index or default */
static PyObject *
NameTable_get(NameTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get() takes a name and an optional default");
        return NULL;
    }
    Py_ssize_t e = name_find(t, args[0]);
    if (e == -2)
        return NULL;
    if (e == -1)
        return Py_NewRef(nargs == 2 ? args[1] : Py_None);
    return PyLong_FromSsize_t(e);
}

/* A value argument: an int in [-1, 2**31 - 1]. */
static int
name_value_arg(PyObject *arg, int32_t *value)
{
    long long v = PyLong_AsLongLong(arg);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < -1 || v > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "a NameTable value is in [-1, 2**31 - 1], not %lld", v);
        return -1;
    }
    *value = (int32_t)v;
    return 0;
}

/* Forget the names added from index `before` on, after a failed addition whose exception
   stays the one raised. */
static void
name_undo(NameTable *t, Py_ssize_t before)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (name_truncate(t, before) < 0)
        PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

/* add(name, value=-1) -> its index, the name added first (with value) if it is new */
static PyObject *
NameTable_add(NameTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    int32_t value = -1;
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "add() takes a name and an optional value");
        return NULL;
    }
    if (nargs == 2 && name_value_arg(args[1], &value) < 0)
        return NULL;
    Py_ssize_t e = name_find(t, args[0]);
    if (e == -2 || (e == -1 && (name_reserve(t, 1) < 0
                                || (e = name_append(t, args[0], value)) < 0)))
        return NULL;
    return PyLong_FromSsize_t(e);
}

/* add_new(names, first=-1): append names none of which is present or repeated (else
   ValueError, with nothing added), the k-th with value first + k (each -1 when first is -1) */
static PyObject *
NameTable_add_new(NameTable *t, PyObject *args)
{
    PyObject *names, *first_obj = NULL;
    int32_t first = -1;
    if (!PyArg_ParseTuple(args, "O|O:add_new", &names, &first_obj)
            || (first_obj != NULL && name_value_arg(first_obj, &first) < 0))
        return NULL;
    PyObject *seq = PySequence_Fast(names, "add_new() takes a sequence of names");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), before = t->n;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    if (first >= 0 && n > 0 && (long long)first + n - 1 > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a NameTable value is at most 2**31 - 1");
        goto fail;
    }
    if (name_reserve(t, n) < 0)
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i % PREFETCH_NAMES == 0)  /* each append probes for the name first */
            names_prefetch(t, items + i, Py_MIN(PREFETCH_NAMES, n - i));
        Py_ssize_t e = name_append(t, items[i], first < 0 ? -1 : (int32_t)(first + i));
        if (e == NAME_PRESENT)
            PyErr_Format(PyExc_ValueError, "add_new(): %R is already present", items[i]);
        if (e < 0)
            goto undo;
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
undo:
    name_undo(t, before);
fail:
    Py_DECREF(seq);
    return NULL;
}

/* The hash Python gives the str of UTF-8 s[0 .. len), or -1 with an exception (not UTF-8): an
   ASCII str hashes its bytes, which are its own; another one is made to be hashed. */
static Py_hash_t
utf8_str_hash(const char *s, Py_ssize_t len)
{
    Py_ssize_t k = 0;
    while (k < len && !(s[k] & 0x80))
        k++;
    if (k == len)
#if PY_VERSION_HEX >= 0x030E0000
        return Py_HashBuffer(s, len);
#else
        return _Py_HashBytes(s, len);
#endif
    PyObject *str = PyUnicode_DecodeUTF8(s, len, "strict");
    if (str == NULL)
        return -1;
    Py_hash_t hash = PyObject_Hash(str);
    Py_DECREF(str);
    return hash;
}

/* add_joined(utf8, values): append the names of utf8 (UTF-8 separated by NUL bytes, as
   joined() gives them), one a value of values (int32 bytes), none of them present or repeated
   (else ValueError, with nothing added): a vocabulary read back without a str object a name
   (an ASCII one hashed from its bytes) */
static PyObject *
NameTable_add_joined(NameTable *t, PyObject *args)
{
    Py_buffer utf8, values;
    if (!PyArg_ParseTuple(args, "y*y*:add_joined", &utf8, &values))
        return NULL;
    PyObject *result = NULL;
    const char *s = utf8.buf, *end = s + utf8.len;
    const int32_t *value = values.buf;
    Py_ssize_t n = values.len / (Py_ssize_t)sizeof(int32_t), before = t->n;
    Py_ssize_t pieces = utf8.len || n ? 1 : 0;
    for (const char *p = s; (p = memchr(p, 0, (size_t)(end - p))) != NULL; p++)
        pieces++;
    if (values.len % (Py_ssize_t)sizeof(int32_t) || pieces != n) {
        PyErr_Format(PyExc_ValueError, "add_joined(): %zd names but %zd values", pieces,
                     values.len / (Py_ssize_t)sizeof(int32_t));
        goto done;
    }
    if (name_reserve(t, n) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        const char *stop = memchr(s, 0, (size_t)(end - s));
        Py_ssize_t len = (stop ? stop : end) - s;
        int32_t v;
        memcpy(&v, value + i, sizeof v);
        if (v < -1) {
            PyErr_Format(PyExc_OverflowError, "a NameTable value is in [-1, 2**31 - 1], not %d",
                         (int)v);
            goto undo;
        }
        Py_hash_t hash = utf8_str_hash(s, len);
        if (hash == -1)
            goto undo;
        Py_ssize_t e = name_append_utf8(t, s, len, (uint32_t)hash, v);
        if (e == NAME_PRESENT) {
            PyObject *name = PyUnicode_DecodeUTF8(s, len, "strict");
            if (name != NULL) {
                PyErr_Format(PyExc_ValueError, "add_joined(): %R is already present", name);
                Py_DECREF(name);
            }
        }
        if (e < 0)
            goto undo;
        s += len + 1;
    }
    result = Py_NewRef(Py_None);
    goto done;
undo:
    name_undo(t, before);
done:
    PyBuffer_Release(&utf8);
    PyBuffer_Release(&values);
    return result;
}

static Py_ssize_t
name_index_arg(const NameTable *t, PyObject *arg)
{
    Py_ssize_t e = PyNumber_AsSsize_t(arg, PyExc_IndexError);
    if (e == -1 && PyErr_Occurred())
        return -1;
    if (e < 0 || e >= t->n) {
        PyErr_Format(PyExc_IndexError, "name index %zd out of range [0, %zd)", e, t->n);
        return -1;
    }
    return e;
}

/* name(i) -> the name of index i */
static PyObject *
NameTable_name(NameTable *t, PyObject *arg)
{
    Py_ssize_t e = name_index_arg(t, arg);
    return e < 0 ? NULL : name_at(t, e);
}

/* value(i) -> the value of index i */
static PyObject *
NameTable_value(NameTable *t, PyObject *arg)
{
    Py_ssize_t e = name_index_arg(t, arg);
    return e < 0 ? NULL : PyLong_FromLong(t->entries[e].value);
}

/* set_value(i, value) */
static PyObject *
NameTable_set_value(NameTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    int32_t value;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "set_value() takes an index and a value");
        return NULL;
    }
    Py_ssize_t e = name_index_arg(t, args[0]);
    if (e < 0 || name_value_arg(args[1], &value) < 0)
        return NULL;
    t->entries[e].value = value;
    Py_RETURN_NONE;
}

/* The (lo=0, hi=len) arguments of names() and values(), clipped to the table: 0, or -1. */
static int
name_range_args(const NameTable *t, PyObject *args, Py_ssize_t *lo, Py_ssize_t *hi)
{
    *lo = 0;
    *hi = t->n;
    if (!PyArg_ParseTuple(args, "|nn", lo, hi))
        return -1;
    *lo = *lo < 0 ? 0 : *lo > t->n ? t->n : *lo;
    *hi = *hi < *lo ? *lo : *hi > t->n ? t->n : *hi;
    return 0;
}

/* values(lo=0, hi=len) -> the values of indices lo .. hi - 1, as int32 bytes (bounds clipped) */
static PyObject *
NameTable_values(NameTable *t, PyObject *args)
{
    Py_ssize_t lo, hi;
    if (name_range_args(t, args, &lo, &hi) < 0)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (hi - lo) * (Py_ssize_t)sizeof(int32_t));
    if (out == NULL)
        return NULL;
    int32_t *values = (int32_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t e = lo; e < hi; e++)
        values[e - lo] = t->entries[e].value;
    return out;
}

/* names(lo=0, hi=len) -> the names of indices lo .. hi - 1, as a list (bounds clipped) */
static PyObject *
NameTable_names(NameTable *t, PyObject *args)
{
    Py_ssize_t lo, hi;
    if (name_range_args(t, args, &lo, &hi) < 0)
        return NULL;
    PyObject *out = PyList_New(hi - lo);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t e = lo; e < hi; e++) {
        PyObject *name = name_at(t, e);
        if (name == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, e - lo, name);
    }
    return out;
}

/* joined(lo=0, hi=len) -> the UTF-8 of the names of indices lo .. hi - 1 joined by NUL bytes,
   or None if one of them is not a str UTF-8 encodes or holds a NUL (bounds clipped): a
   vocabulary saved as it is stored, without a str object a name. */
static PyObject *
NameTable_joined(NameTable *t, PyObject *args)
{
    Py_ssize_t lo, hi, size = 0, len;
    if (name_range_args(t, args, &lo, &hi) < 0)
        return NULL;
    for (Py_ssize_t e = lo; e < hi; e++) {
        if (t->entries[e].length == NAME_SIDE)
            Py_RETURN_NONE;
        const unsigned char *bytes = name_bytes(t, &t->entries[e], &len);
        if (memchr(bytes, 0, (size_t)len) != NULL)
            Py_RETURN_NONE;
        size += len + 1;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size ? size - 1 : 0);
    if (out == NULL)
        return NULL;
    char *p = PyBytes_AS_STRING(out);
    for (Py_ssize_t e = lo; e < hi; e++) {
        const unsigned char *bytes = name_bytes(t, &t->entries[e], &len);
        if (e > lo)
            *p++ = '\0';
        memcpy(p, bytes, (size_t)len);
        p += len;
    }
    return out;
}

/* Forget the names of index n and above (a rollback of the newest): 0, or -1 on error. */
static int
name_truncate(NameTable *t, Py_ssize_t n)
{
    for (Py_ssize_t e = t->n - 1; e >= n; e--) {
        NameEntry *entry = &t->entries[e];
        if (entry->length == NAME_SIDE) {
            PyObject *index = PyLong_FromSsize_t(e);
            PyObject *name = index ? PyDict_GetItemWithError(t->side_names, index) : NULL;
            Py_XINCREF(name);
            int failed = name == NULL || PyDict_DelItem(t->side, name) < 0
                         || PyDict_DelItem(t->side_names, index) < 0;
            Py_XDECREF(name);
            Py_XDECREF(index);
            if (failed) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_SystemError, "NameTable: a side name is missing");
                return -1;
            }
        }
        else {
            size_t mask = (size_t)t->n_slots - 1, i = (size_t)t->hashes[e] & mask;
            int32_t slot = slot_of(t, e, t->hashes[e]);
            while (t->slots[i] != slot)
                i = (i + 1) & mask;
            t->slots[i] = NAME_DELETED;  /* still filled: a later probe must pass it */
            if (entry->length == NAME_FAR)  /* newest first: the last one is the earliest */
                t->arena_used = name_start(entry);
        }
        t->n = e;
    }
    return 0;
}

/* truncate(n): forget the names of index n and above */
static PyObject *
NameTable_truncate(NameTable *t, PyObject *arg)
{
    Py_ssize_t n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "truncate(): a negative size");
        return NULL;
    }
    if (name_truncate(t, n) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
NameTable_iter(NameTable *t)
{
    PyObject *empty = PyTuple_New(0);
    PyObject *names = empty ? NameTable_names(t, empty) : NULL;
    Py_XDECREF(empty);
    PyObject *it = names ? PyObject_GetIter(names) : NULL;
    Py_XDECREF(names);
    return it;
}

static PyObject *
NameTable_nbytes(NameTable *t, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t((Py_ssize_t)sizeof(NameTable)
                              + t->capacity * (Py_ssize_t)(sizeof(NameEntry) + sizeof(uint32_t))
                              + t->n_slots * (Py_ssize_t)sizeof(int32_t) + t->arena_capacity);
}

/* Pickling and copying (a model is a plain Python object whose users may deepcopy it): the
   names, added back in order, and their values. */
static PyObject *
NameTable_reduce(NameTable *t, PyObject *Py_UNUSED(ignored))
{
    PyObject *empty = PyTuple_New(0);
    PyObject *names = empty ? NameTable_names(t, empty) : NULL;
    PyObject *values = empty ? NameTable_values(t, empty) : NULL;
    Py_XDECREF(empty);
    if (names == NULL || values == NULL) {
        Py_XDECREF(names);
        Py_XDECREF(values);
        return NULL;
    }
    return Py_BuildValue("(O()(NN))", (PyObject *)Py_TYPE(t), names, values);
}

/* __setstate__((names, values)): values as int32 bytes, from __reduce__ */
static PyObject *
NameTable_setstate(NameTable *t, PyObject *state)
{
    PyObject *names;
    Py_buffer values;
    if (t->n) {
        PyErr_SetString(PyExc_ValueError, "__setstate__() fills an empty NameTable only");
        return NULL;
    }
    if (!PyArg_ParseTuple(state, "Oy*:__setstate__", &names, &values))
        return NULL;
    PyObject *added = NULL, *args = Py_BuildValue("(O)", names);
    if (args != NULL)
        added = NameTable_add_new(t, args);
    Py_XDECREF(args);
    if (added != NULL && values.len != t->n * (Py_ssize_t)sizeof(int32_t)) {
        PyErr_SetString(PyExc_ValueError, "__setstate__(): one value a name");
        Py_CLEAR(added);
        if (name_truncate(t, 0) < 0)
            PyErr_Clear();
    }
    if (added != NULL)
        for (Py_ssize_t e = 0; e < t->n; e++)
            memcpy(&t->entries[e].value, (const char *)values.buf + e * sizeof(int32_t),
                   sizeof(int32_t));
    PyBuffer_Release(&values);
    return added;
}

static PySequenceMethods NameTable_as_sequence = {
    .sq_length = (lenfunc)NameTable_len,
    .sq_contains = (objobjproc)NameTable_contains,
};

static PyMethodDef NameTable_methods[] = {
    {"get", (PyCFunction)(void (*)(void))NameTable_get, METH_FASTCALL,
     "get(name, default=None): the index of name, or default."},
    {"add", (PyCFunction)(void (*)(void))NameTable_add, METH_FASTCALL,
     "add(name, value=-1): its index, added (with value) if new."},
    {"add_new", (PyCFunction)NameTable_add_new, METH_VARARGS,
     "add_new(names, first=-1): append names, none present or repeated (else ValueError, none "
     "added), the k-th with value first + k (-1 each when first is -1)."},
    {"add_joined", (PyCFunction)NameTable_add_joined, METH_VARARGS,
     "add_joined(utf8, values): append the NUL-separated UTF-8 names of utf8 (as joined() "
     "gives them), none present or repeated (else ValueError, none added), each with its "
     "value of values (int32 bytes)."},
    {"name", (PyCFunction)NameTable_name, METH_O, "name(i): the name of index i."},
    {"value", (PyCFunction)NameTable_value, METH_O, "value(i): the value of index i."},
    {"set_value", (PyCFunction)(void (*)(void))NameTable_set_value, METH_FASTCALL,
     "set_value(i, value): set the value of index i (in [-1, 2**31 - 1])."},
    {"values", (PyCFunction)NameTable_values, METH_VARARGS,
     "values(lo=0, hi=len): the values of indices lo .. hi - 1, as int32 bytes."},
    {"names", (PyCFunction)NameTable_names, METH_VARARGS,
     "names(lo=0, hi=len): the names of indices lo .. hi - 1."},
    {"joined", (PyCFunction)NameTable_joined, METH_VARARGS,
     "joined(lo=0, hi=len): the UTF-8 of the names of indices lo .. hi - 1 joined by NUL "
     "bytes, or None if one is not a str UTF-8 encodes or holds a NUL."},
    {"truncate", (PyCFunction)NameTable_truncate, METH_O,
     "truncate(n): forget the names of index n and above."},
    {"__reduce__", (PyCFunction)NameTable_reduce, METH_NOARGS, "Pickle as the names."},
    {"__setstate__", (PyCFunction)NameTable_setstate, METH_O, "Add the pickled names."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef NameTable_getset[] = {
    {"nbytes", (getter)NameTable_nbytes, NULL, "Bytes held outside the side dict.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject NameTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "streamnb._accel._kernels.NameTable",
    .tp_basicsize = sizeof(NameTable),
    .tp_dealloc = (destructor)NameTable_dealloc,
    .tp_as_sequence = &NameTable_as_sequence,
    .tp_iter = (getiterfunc)NameTable_iter,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Names <-> indices in order of addition, str names stored as UTF-8 (long ones in "
              "an arena).",
    .tp_methods = NameTable_methods,
    .tp_getset = NameTable_getset,
    .tp_new = NameTable_new,
};

/* ---- encoding ------------------------------------------------------------------------------- */


/* The NameTable that an encoder reads (the schema's attribute registry: a token's value is its
   column, any other attribute's -1), or NULL with TypeError. */
static NameTable *
lookup_table(PyObject *table, const char *where)
{
    if (!PyObject_TypeCheck(table, &NameTableType)) {
        PyErr_Format(PyExc_TypeError, "%s: the attribute table must be a NameTable", where);
        return NULL;
    }
    return (NameTable *)table;
}

/* names_prefetch for the first names of record x (a dict). */
static void
lookup_prefetch(const NameTable *t, PyObject *x)
{
    PyObject *names[PREFETCH_NAMES], *name, *value;
    Py_ssize_t m = 0, pos = 0;
    while (m < PREFETCH_NAMES && PyDict_Next(x, &pos, &name, &value))
        names[m++] = name;
    names_prefetch(t, names, m);
}

/* 1 and *column for a token, 0 for an unknown name, 2 for a known attribute of another kind,
   -1 on error. */
static int
lookup_token(NameTable *t, PyObject *name, Py_ssize_t *column)
{
    Py_ssize_t a = name_find(t, name);
    if (a < 0)
        return a == -1 ? 0 : -1;
    int32_t value = t->entries[a].value;
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
 * (names_prefetch): a message's ~200 tokens in a vocabulary of 10^5 are as many cache misses.
 */
static PyObject *
text_columns(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *bag, *table;
    int grow;
    long long first_new = 0;
    if (!PyArg_ParseTuple(args, "OOp|L", &bag, &table, &grow, &first_new))
        return NULL;
    if (!PyObject_TypeCheck(table, &NameTableType)) {
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
    for (Py_ssize_t k = 0; k < (t->n || grow ? m : 0); k++) {
        if (k % PREFETCH_NAMES == 0)
            names_prefetch(t, tokens + k, Py_MIN(PREFETCH_NAMES, m - k));
        Py_ssize_t e = name_find(t, tokens[k]);
        if (e == -2)
            goto done;
        if (e >= 0)
            found[n_found++] = t->entries[e].value;
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
 * learn_tokens(x, table, value_counts, c, bins, is_head, binned)
 *     -> crossed | None
 *
 * token_increment for a message whose names are all known tokens with bool/int values (unknown
 * absent ones are skipped); None, changing nothing, when it needs the general path.
 */
static PyObject *
learn_tokens(PyObject *Py_UNUSED(self), PyObject *args)
{
    PyObject *x, *table, *vc_obj, *bins_obj, *head_obj;
    Py_ssize_t c, limit;
    int binned;
    NameTable *t;
    if (!PyArg_ParseTuple(args, "O!OOnOOp", &PyDict_Type, &x, &table, &vc_obj, &c, &bins_obj,
                          &head_obj, &binned)
            || (t = lookup_table(table, "learn_tokens")) == NULL)
        return NULL;
    Py_buffer b[3];
    if (increment_buffers(vc_obj, bins_obj, head_obj, c, b, &limit) < 0)
        return NULL;
    PyObject *crossed = NULL;
    Py_ssize_t *cols = NULL;
    Py_ssize_t n = simple_token_columns(x, t, 1, limit, &cols, NULL);
    if (n == -1)
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

/* ---- e-mail words --------------------------------------------------------------------------- */

/*
 * The word set of (lower-cased) e-mail text: maximal runs of word characters (\w as re sees it
 * in a str: str.isalnum() or "_"; also "$", "!" and "'"), stripped of apostrophes at both ends;
 * words of 2 to 40 characters as they are, longer ones as "skip:<first char>:<length rounded
 * down to 10>", shorter ones dropped. email_words(text[, words]): added to the set `words`
 * (a new set without it), which is returned. Twin: kernels._email_words.
 */
#define EMAIL_MIN_WORD 2
#define EMAIL_MAX_WORD 40

#define EMAIL_SEEN_MAX 2048  /* entries of the table of words seen (a power of 2) */

typedef struct {
    Py_ssize_t start;
    uint32_t hash;
    int32_t length;  /* 0: an empty slot */
} email_seen;

static unsigned char email_word_latin1[256];  /* 1: a word character (code points < 256) */

static void
email_words_init(void)
{
    for (Py_UCS4 ch = 0; ch < 256; ch++)
        email_word_latin1[ch] = Py_UNICODE_ISALNUM(ch) || ch == '_' || ch == '$' || ch == '!'
                                || ch == '\'';
}

static inline int
email_word_char(Py_UCS4 ch)
{
    return ch < 256 ? email_word_latin1[ch] : Py_UNICODE_ISALNUM(ch);
}

/* The next word of 1-byte text s[*i:n]: its bounds, apostrophes stripped at both ends, in
 * *start and *end (maybe empty), *i past it; 0 when no word is left. */
static inline int
email_next_word(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t *i, Py_ssize_t *start,
                Py_ssize_t *end)
{
    Py_ssize_t k = *i;
    while (k < n && !email_word_latin1[s[k]])
        k++;
    if (k >= n) {
        *i = n;
        return 0;
    }
    Py_ssize_t a = k;
    while (k < n && email_word_latin1[s[k]])
        k++;
    Py_ssize_t b = k;
    while (a < b && s[a] == '\'')
        a++;
    while (b > a && s[b - 1] == '\'')
        b--;
    *i = k;
    *start = a;
    *end = b;
    return 1;
}

static int
email_add_word(PyObject *words, PyObject *text, int kind, const void *data, Py_ssize_t start,
               Py_ssize_t end)
{
    while (start < end && PyUnicode_READ(kind, data, start) == '\'')
        start++;
    while (end > start && PyUnicode_READ(kind, data, end - 1) == '\'')
        end--;
    Py_ssize_t length = end - start;
    if (length < EMAIL_MIN_WORD)
        return 0;
    PyObject *word = length <= EMAIL_MAX_WORD
        ? PyUnicode_Substring(text, start, end)
        : PyUnicode_FromFormat("skip:%c:%zd", (int)PyUnicode_READ(kind, data, start),
                               length / 10 * 10);
    if (word == NULL)
        return -1;
    int failed = PySet_Add(words, word);
    Py_DECREF(word);
    return failed;
}

static PyObject *
email_words(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text, *words = NULL;
    if (!PyArg_ParseTuple(args, "U|O!:email_words", &text, &PySet_Type, &words))
        return NULL;
    if (PyUnicode_READY(text) < 0)
        return NULL;
    words = words == NULL ? PySet_New(NULL) : Py_NewRef(words);
    if (words == NULL)
        return NULL;
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t i = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        /* Most words recur: a small table of the words added so far (FNV-1a hashes of their
         * bytes) skips building a str for each repeat. When it is half full, later words go
         * to the set directly, which removes the duplicates anyway. */
        const Py_UCS1 *s = data;
        email_seen seen[EMAIL_SEEN_MAX];
        Py_ssize_t size = 64, filled = 0;
        while (size < n && size < EMAIL_SEEN_MAX)
            size <<= 1;
        memset(seen, 0, (size_t)size * sizeof(email_seen));
        Py_ssize_t start, end;
        while (email_next_word(s, n, &i, &start, &end)) {
            Py_ssize_t length = end - start;
            if (length < EMAIL_MIN_WORD)
                continue;
            if (length <= EMAIL_MAX_WORD && filled < size / 2) {
                uint32_t hash = 2166136261u;
                for (Py_ssize_t k = start; k < end; k++)
                    hash = (hash ^ s[k]) * 16777619u;
                Py_ssize_t slot = hash & (size - 1);
                int repeat = 0;
                while (seen[slot].length) {
                    if (seen[slot].hash == hash && seen[slot].length == length
                        && memcmp(s + seen[slot].start, s + start, (size_t)length) == 0) {
                        repeat = 1;
                        break;
                    }
                    slot = (slot + 1) & (size - 1);
                }
                if (repeat)
                    continue;
                seen[slot].start = start;
                seen[slot].hash = hash;
                seen[slot].length = (int32_t)length;
                filled++;
            }
            if (email_add_word(words, text, kind, data, start, end) < 0)
                goto error;
        }
    }
    else {
        while (i < n) {
            while (i < n && !email_word_char(PyUnicode_READ(kind, data, i)))
                i++;
            Py_ssize_t start = i;
            while (i < n && email_word_char(PyUnicode_READ(kind, data, i)))
                i++;
            if (i > start && email_add_word(words, text, kind, data, start, i) < 0)
                goto error;
        }
    }
    return words;
error:
    Py_DECREF(words);
    return NULL;
}

/*
 * The host names and addresses of e-mail text: maximal runs of ASCII letters, digits, "_", "."
 * and "-" that hold a ".", stripped of "." and "-" at both ends (empty ones dropped).
 * Twin: kernels._email_hosts.
 */
static inline int
email_name_char(Py_UCS4 ch)
{
    return ch < 128 && (Py_ISALNUM(ch) || ch == '_' || ch == '.' || ch == '-');
}

static unsigned char email_name_latin1[256];  /* email_name_char of code points < 256 */

static void
email_hosts_init(void)
{
    for (Py_UCS4 ch = 0; ch < 256; ch++)
        email_name_latin1[ch] = (unsigned char)email_name_char(ch);
}

/* The empty set a scan of text fills, after checking that text is a str (NULL if not). */
static PyObject *
scan_set(PyObject *text, const char *name)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "%s: expected str, got %s", name, Py_TYPE(text)->tp_name);
        return NULL;
    }
    if (PyUnicode_READY(text) < 0)
        return NULL;
    return PySet_New(NULL);
}

static PyObject *
email_hosts(PyObject *Py_UNUSED(module), PyObject *text)
{
    PyObject *hosts = scan_set(text, "email_hosts");
    if (hosts == NULL)
        return NULL;
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t start;
        int dotted = 0;
        if (kind == PyUnicode_1BYTE_KIND) {  /* Received headers: 1 KiB of them a message */
            const Py_UCS1 *s = data;
            while (i < n && !email_name_latin1[s[i]])
                i++;
            start = i;
            for (; i < n && email_name_latin1[s[i]]; i++)
                dotted |= s[i] == '.';
        }
        else {
            while (i < n && !email_name_char(PyUnicode_READ(kind, data, i)))
                i++;
            start = i;
            for (Py_UCS4 ch; i < n && email_name_char(ch = PyUnicode_READ(kind, data, i)); i++)
                dotted |= ch == '.';
        }
        if (!dotted)
            continue;
        Py_ssize_t end = i;
        for (Py_UCS4 ch; start < end && ((ch = PyUnicode_READ(kind, data, start)) == '.'
                                         || ch == '-');)
            start++;
        for (Py_UCS4 ch; end > start && ((ch = PyUnicode_READ(kind, data, end - 1)) == '.'
                                         || ch == '-');)
            end--;
        if (end == start)
            continue;
        PyObject *host = PyUnicode_Substring(text, start, end);
        if (host == NULL || PySet_Add(hosts, host) < 0) {
            Py_XDECREF(host);
            Py_DECREF(hosts);
            return NULL;
        }
        Py_DECREF(host);
    }
    return hosts;
}

/* ---- link hosts ----------------------------------------------------------------------------- */

/*
 * The hosts of the links in (lower-cased) text: what Python's re (ASCII) finds with
 *   https?://(?:[^\s/@<>"']+@)?(\[?[\w-]+(?:\.[\w-]+)+)   (group 1)  and
 *   www\.[\w-]+(?:\.[\w-]+)+                               (the match)
 * each scanned with findall (a match resumes the scan at its end, a failure one character on),
 * as a set. Twin: kernels._url_hosts, which is those two findall calls.
 */
static inline int
url_word_char(Py_UCS4 ch)  /* [\w-] under re.ASCII */
{
    return ch < 128 && (Py_ISALNUM(ch) || ch == '_' || ch == '-');
}

static inline int
url_user_char(Py_UCS4 ch)  /* [^\s/@<>"'] under re.ASCII: \s is [ \t\n\r\f\v] */
{
    return !(ch == ' ' || (ch >= '\t' && ch <= '\r') || ch == '/' || ch == '@' || ch == '<'
             || ch == '>' || ch == '"' || ch == '\'');
}

/* The end of [\w-]+(?:\.[\w-]+)+ matched at i (greedy: no shorter match is ever needed), or
   -1. */
static Py_ssize_t
url_dotted_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t i)
{
    Py_ssize_t j = i, end = -1;
    while (j < n && url_word_char(PyUnicode_READ(kind, data, j)))
        j++;
    if (j == i)
        return -1;
    while (j + 1 < n && PyUnicode_READ(kind, data, j) == '.'
           && url_word_char(PyUnicode_READ(kind, data, j + 1))) {
        j += 2;
        while (j < n && url_word_char(PyUnicode_READ(kind, data, j)))
            j++;
        end = j;
    }
    return end;
}

/* Whether text[i:] starts with the ASCII literal s (within n characters). */
static inline int
text_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, const char *s)
{
    for (; *s; s++, i++)
        if (i >= n || PyUnicode_READ(kind, data, i) != (Py_UCS4)(unsigned char)*s)
            return 0;
    return 1;
}

/* The next i >= from where text[i] == ch, or n. */
static inline Py_ssize_t
url_next(int kind, const void *data, Py_ssize_t n, Py_ssize_t from, char ch)
{
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = data;
        const void *at = from < n ? memchr(s + from, ch, (size_t)(n - from)) : NULL;
        return at ? (const Py_UCS1 *)at - s : n;
    }
    while (from < n && PyUnicode_READ(kind, data, from) != (Py_UCS4)ch)
        from++;
    return from;
}

static int
url_add(PyObject *hosts, PyObject *text, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *host = PyUnicode_Substring(text, start, end);
    int failed = host == NULL || PySet_Add(hosts, host) < 0;
    Py_XDECREF(host);
    return failed ? -1 : 0;
}

static PyObject *
url_hosts(PyObject *Py_UNUSED(module), PyObject *text)
{
    PyObject *hosts = scan_set(text, "url_hosts");
    if (hosts == NULL)
        return NULL;
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    /* https?://, an optional user part ending in "@", then the host (group 1) */
    for (Py_ssize_t p = url_next(kind, data, n, 0, 'h'); p < n;) {
        Py_ssize_t q = -1, end = -1, host = -1;
        if (text_at(kind, data, n, p, "https://"))
            q = p + 8;
        else if (text_at(kind, data, n, p, "http://"))
            q = p + 7;
        if (q >= 0) {
            Py_ssize_t r = q;
            while (r < n && url_user_char(PyUnicode_READ(kind, data, r)))
                r++;
            /* with the user part first, as re tries it, then without */
            Py_ssize_t starts[2] = {r > q && r < n && PyUnicode_READ(kind, data, r) == '@'
                                    ? r + 1 : -1, q};
            for (int k = 0; k < 2 && end < 0; k++) {
                Py_ssize_t h = starts[k];
                if (h < 0)
                    continue;
                Py_ssize_t from = h < n && PyUnicode_READ(kind, data, h) == '[' ? h + 1 : h;
                end = url_dotted_end(kind, data, n, from);
                host = h;
            }
        }
        if (end >= 0) {
            if (url_add(hosts, text, host, end) < 0)
                goto error;
            p = url_next(kind, data, n, end, 'h');
        }
        else
            p = url_next(kind, data, n, p + 1, 'h');
    }
    for (Py_ssize_t p = url_next(kind, data, n, 0, 'w'); p < n;) {
        Py_ssize_t end = text_at(kind, data, n, p, "www.")
            ? url_dotted_end(kind, data, n, p + 4) : -1;
        if (end >= 0) {
            if (url_add(hosts, text, p, end) < 0)
                goto error;
            p = url_next(kind, data, n, end, 'w');
        }
        else
            p = url_next(kind, data, n, p + 1, 'w');
    }
    return hosts;
error:
    Py_DECREF(hosts);
    return NULL;
}

/*
 * host_tokens(prefix, hosts, tokens): for each host name or address (an iterable of str),
 * prefix + the host and each parent domain with at least two labels added to the set tokens,
 * after stripping "[", "]", "." and "-" at both ends and lower-casing; a registry such as
 * "co.uk" is not a parent domain. A numeric IPv4 address (\d{1,3}(\.\d{1,3}){3}, Unicode
 * digits as re's \d) gives prefix + "ip"; a host that is neither an address nor a name whose
 * last label is letters gives nothing, and neither does one longer than DNS allows (253
 * characters after stripping, 257 before: its parent domains would grow with the square of
 * its length). Twin: kernels._host_tokens.
 */
#define HOST_MAX 253

static inline int
host_strip(Py_UCS4 ch)
{
    return ch == '[' || ch == ']' || ch == '.' || ch == '-';
}

static const char *const host_registries[] = {"co", "com", "net", "org", "ac", "gov", "edu",
                                              "ne", "or", NULL};

/* Whether text[start:end] is a registry label (ASCII: the registries are). */
static int
host_is_registry(int kind, const void *data, Py_ssize_t start, Py_ssize_t end)
{
    for (const char *const *r = host_registries; *r != NULL; r++)
        if ((Py_ssize_t)strlen(*r) == end - start && text_at(kind, data, end, start, *r))
            return 1;
    return 0;
}

/* Whether host (a ready str) is \d{1,3}(\.\d{1,3}){3} as a whole. */
static int
host_is_ipv4(int kind, const void *data, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (int group = 0; group < 4; group++) {
        if (group) {
            if (i >= n || PyUnicode_READ(kind, data, i) != '.')
                return 0;
            i++;
        }
        Py_ssize_t digits = 0;
        while (i < n && digits < 3 && Py_UNICODE_ISDECIMAL(PyUnicode_READ(kind, data, i))) {
            i++;
            digits++;
        }
        if (!digits)
            return 0;
    }
    return i == n;
}

static int
host_add(PyObject *tokens, PyObject *prefix, PyObject *host, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *name = PyUnicode_Substring(host, start, end);
    PyObject *token = name ? PyUnicode_Concat(prefix, name) : NULL;
    int failed = token == NULL || PySet_Add(tokens, token) < 0;
    Py_XDECREF(name);
    Py_XDECREF(token);
    return failed ? -1 : 0;
}

/* host_tokens for one host: 0, or -1 on error. */
static int
host_tokens_one(PyObject *prefix, PyObject *raw, PyObject *tokens)
{
    if (!PyUnicode_Check(raw)) {
        PyErr_Format(PyExc_TypeError, "host_tokens: hosts must be str, got %s",
                     Py_TYPE(raw)->tp_name);
        return -1;
    }
    if (PyUnicode_READY(raw) < 0)
        return -1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(raw);
    if (n > HOST_MAX + 4)
        return 0;
    int kind = PyUnicode_KIND(raw);
    const void *data = PyUnicode_DATA(raw);
    Py_ssize_t start = 0, end = n;
    while (start < end && host_strip(PyUnicode_READ(kind, data, start)))
        start++;
    while (end > start && host_strip(PyUnicode_READ(kind, data, end - 1)))
        end--;
    /* the stripped host, lower-cased as str.lower does (ASCII inline, the rest by str.lower) */
    PyObject *host;
    int ascii_lower = PyUnicode_IS_ASCII(raw);
    for (Py_ssize_t k = start; ascii_lower && k < end; k++)
        ascii_lower = !Py_ISUPPER(PyUnicode_READ(kind, data, k));
    if (ascii_lower)
        host = PyUnicode_Substring(raw, start, end);
    else {
        PyObject *stripped = PyUnicode_Substring(raw, start, end);
        host = stripped ? PyObject_CallMethod(stripped, "lower", NULL) : NULL;
        Py_XDECREF(stripped);
    }
    if (host == NULL || PyUnicode_READY(host) < 0) {
        Py_XDECREF(host);
        return -1;
    }
    int result = 0;
    n = PyUnicode_GET_LENGTH(host);
    kind = PyUnicode_KIND(host);
    data = PyUnicode_DATA(host);
    if (n > HOST_MAX)
        goto done;
    Py_ssize_t last = PyUnicode_FindChar(host, '.', 0, n, -1);
    if (last == -2) {
        result = -1;
        goto done;
    }
    int named = last >= 0 && last + 1 < n;
    for (Py_ssize_t k = last + 1; named && k < n; k++)
        named = Py_UNICODE_ISALPHA(PyUnicode_READ(kind, data, k));
    if (!named) {
        if (host_is_ipv4(kind, data, n)) {
            PyObject *token = PyUnicode_FromFormat("%Uip", prefix);
            result = token == NULL || PySet_Add(tokens, token) < 0 ? -1 : 0;
            Py_XDECREF(token);
        }
        goto done;
    }
    /* the host, then the name after each dot but the last: every suffix of 2 labels or more,
       the last of them (the two last labels) left out when it is a registry */
    Py_ssize_t second = -1;  /* the dot before the last one */
    for (Py_ssize_t k = last - 1; k >= 0 && second < 0; k--)
        if (PyUnicode_READ(kind, data, k) == '.')
            second = k;
    int registry = second >= 0 && n - (last + 1) == 2
                   && host_is_registry(kind, data, second + 1, last);
    if (host_add(tokens, prefix, host, 0, n) < 0) {
        result = -1;
        goto done;
    }
    for (Py_ssize_t k = 0; k < last; k++) {
        if (PyUnicode_READ(kind, data, k) != '.' || (registry && k == second))
            continue;
        if (host_add(tokens, prefix, host, k + 1, n) < 0) {
            result = -1;
            goto done;
        }
    }
done:
    Py_DECREF(host);
    return result;
}

static PyObject *
host_tokens(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *prefix, *hosts, *tokens;
    if (!PyArg_ParseTuple(args, "UOO!:host_tokens", &prefix, &hosts, &PySet_Type, &tokens))
        return NULL;
    PyObject *it = PyObject_GetIter(hosts);
    if (it == NULL)
        return NULL;
    for (PyObject *host; (host = PyIter_Next(it)) != NULL;) {
        int failed = host_tokens_one(prefix, host, tokens);
        Py_DECREF(host);
        if (failed) {
            Py_DECREF(it);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

/* ---- e-mail header fields -------------------------------------------------------------------- */

/*
 * header_fields(text, start, end[, max_value]) -> (header_end, fields, content)
 *
 * The header block of the entity at text[start:end] (text[start - 1] is a newline): its field
 * lines ("Name:" with RFC 5322 field-name characters, then the rest of the line) and folded
 * continuations (a line starting with a space or a tab), up to the first line that is neither
 * (the blank line, or the body when it is missing); header_end is where that line starts, or
 * end (start when end < start, as re reads them). The fields whose name (case-insensitively)
 * is one of header_names are read, the name lower-cased and the value its folded lines (the
 * newlines kept, the final one not), cut to max_value characters (a message's header may be
 * megabytes of one field): fields, the (name, value) of the message fields (the names before
 * "content-type") in order; content, {name: value} of the first of each content-* field (as
 * email.Message.get reads them). Twin:
 * kernels._header_fields, which is the two regular expressions the tokeniser used.
 */
static const char *const header_names[] = {
    "subject", "from", "to", "cc", "reply-to", "x-mailer", "received", "message-id",
    "content-type", "content-transfer-encoding", "content-disposition", NULL};
#define HEADER_CONTENT 8  /* header_names[HEADER_CONTENT] and after: the content-* fields */
static PyObject *header_name_objects[sizeof(header_names) / sizeof(header_names[0])];

static inline int
header_name_char(Py_UCS4 ch)
{
    return ch >= '!' && ch <= '~' && ch != ':';
}

/* The index in header_names of text[start:stop] (ASCII, any case), or -1. */
static int
header_name_index(int kind, const void *data, Py_ssize_t start, Py_ssize_t stop)
{
    for (int k = 0; header_names[k] != NULL; k++) {
        const char *name = header_names[k];
        Py_ssize_t len = (Py_ssize_t)strlen(name), i = 0;
        if (len != stop - start)
            continue;
        while (i < len && Py_TOLOWER(PyUnicode_READ(kind, data, start + i)) == (Py_UCS4)name[i])
            i++;
        if (i == len)
            return k;
    }
    return -1;
}

static PyObject *
header_fields(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *text;
    Py_ssize_t start, end, max_value = PY_SSIZE_T_MAX;
    if (!PyArg_ParseTuple(args, "Unn|n:header_fields", &text, &start, &end, &max_value)
            || PyUnicode_READY(text) < 0)
        return NULL;
    if (max_value < 0) {
        PyErr_SetString(PyExc_ValueError, "header_fields: max_value must be >= 0");
        return NULL;
    }
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    /* as re reads pos and endpos: within the text, an end before start an empty block */
    start = Py_MIN(start, n);
    end = Py_MAX(Py_MIN(end, n), start);
    if (start < 1) {
        PyErr_Format(PyExc_ValueError, "header_fields: start must be 1 or more (after the "
                     "newline before the entity), got %zd", start);
        return NULL;
    }
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *fields = PyList_New(0), *content = PyDict_New();
    if (fields == NULL || content == NULL)
        goto error;
    Py_ssize_t pos = start, value = -1, value_end = -1;
    int field = -1;  /* the wanted field whose value is text[value:value_end] so far, or -1 */
    for (;;) {
        /* pos starts a line (or is end): is it a field line, a continuation or neither? */
        Py_ssize_t colon = -1;
        int continuation = pos < end && (PyUnicode_READ(kind, data, pos) == ' '
                                         || PyUnicode_READ(kind, data, pos) == '\t');
        if (!continuation) {
            Py_ssize_t i = pos;
            while (i < end && header_name_char(PyUnicode_READ(kind, data, i)))
                i++;
            if (i > pos && i < end && PyUnicode_READ(kind, data, i) == ':')
                colon = i;
            if (field >= 0) {  /* the open field's value ended with the line before */
                PyObject *name = header_name_objects[field], *pair = NULL;
                PyObject *v = PyUnicode_Substring(
                    text, value, value_end - value > max_value ? value + max_value : value_end);
                int failed = v == NULL;
                if (!failed && field < HEADER_CONTENT)
                    failed = (pair = PyTuple_Pack(2, name, v)) == NULL
                             || PyList_Append(fields, pair) < 0;
                else if (!failed)
                    failed = PyDict_SetDefault(content, name, v) == NULL;
                Py_XDECREF(v);
                Py_XDECREF(pair);
                if (failed)
                    goto error;
                field = -1;
            }
            if (colon < 0)  /* neither (end included): the block ends here */
                break;
            /* a field is read after a newline: the first line's only if text[start - 1] is */
            field = pos > start || PyUnicode_READ(kind, data, start - 1) == '\n'
                    ? header_name_index(kind, data, pos, colon) : -1;
            value = colon + 1;
        }
        Py_ssize_t i = pos;
        while (i < end && PyUnicode_READ(kind, data, i) != '\n')
            i++;
        value_end = i;  /* before the line's newline, or end */
        pos = i < end ? i + 1 : end;
    }
    return Py_BuildValue("(nNN)", pos, fields, content);
error:
    Py_XDECREF(fields);
    Py_XDECREF(content);
    return NULL;
}

static int
header_fields_init(void)
{
    for (int k = 0; header_names[k] != NULL; k++)
        if ((header_name_objects[k] = PyUnicode_InternFromString(header_names[k])) == NULL)
            return -1;
    return 0;
}

/* ---- e-mail header tokens ------------------------------------------------------------------- */

/*
 * header_tokens(fields, tokens) -> rest
 *
 * The tokens of a message's header fields (header_fields' list of (name, value), the names
 * lower-cased), added to the set tokens; rest lists, in order, the fields whose value must be
 * decoded first (the tokeniser decodes them and calls field_tokens): a subject, from or
 * x-mailer value that is not ASCII or holds an RFC 2047 encoded word ("=?"), and any other
 * non-ASCII value but a received one. The values of the received fields are joined with a
 * space and lower-cased, and their host names (email_hosts) give received:<host> and its
 * parent domains (host_tokens). Every other value is lower-cased and read as field_tokens
 * reads it: for subject and x-mailer, its words (email_words) as "<name>:<word>"; for from,
 * the words left once the addresses are blanked (re.sub(r"<[^<>]*>|(?<!\S)\S*@\S*", " ", v))
 * as "from:<word>", and the domains after an "@" (re.findall(r"@([\w-]+(?:\.[\w-]+)+)", v))
 * with their parent domains as "from:<domain>"; for to, cc, reply-to and message-id, those
 * domains as "<name>:<domain>". White space and \w as re reads them in a str. Twin:
 * kernels._header_tokens.
 */
enum {HT_SUBJECT, HT_FROM, HT_X_MAILER, HT_TO, HT_CC, HT_REPLY_TO, HT_MESSAGE_ID, HT_RECEIVED};
static const char *const ht_names[] = {"subject", "from", "x-mailer", "to", "cc", "reply-to",
                                       "message-id", "received", NULL};
static PyObject *ht_from_prefix, *ht_received_prefix, *ht_space, *ht_encoded;

#define HT_PREFIX_MAX 16  /* "message-id:" and the like */

/* prefix + s[0:n] added to tokens (ASCII). */
static int
ht_add(PyObject *tokens, const char *prefix, Py_ssize_t prefix_len, const char *s, Py_ssize_t n)
{
    char small[HT_PREFIX_MAX + 64];
    char *buffer = prefix_len + n <= (Py_ssize_t)sizeof(small) ? small
                   : PyMem_Malloc((size_t)(prefix_len + n));
    if (buffer == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(buffer, prefix, (size_t)prefix_len);
    memcpy(buffer + prefix_len, s, (size_t)n);
    PyObject *token = PyUnicode_FromStringAndSize(buffer, prefix_len + n);
    if (buffer != small)
        PyMem_Free(buffer);
    int failed = token == NULL || PySet_Add(tokens, token) < 0;
    Py_XDECREF(token);
    return failed ? -1 : 0;
}

/* The words of s[0:n] (ASCII, lower-cased), as email_words finds them, each added to tokens
 * after prefix. */
static int
ht_words(PyObject *tokens, const char *prefix, Py_ssize_t prefix_len, const char *s,
         Py_ssize_t n)
{
    Py_ssize_t i = 0, start, end;
    while (email_next_word((const Py_UCS1 *)s, n, &i, &start, &end)) {
        Py_ssize_t length = end - start;
        if (length < EMAIL_MIN_WORD)
            continue;
        if (length <= EMAIL_MAX_WORD) {
            if (ht_add(tokens, prefix, prefix_len, s + start, length) < 0)
                return -1;
            continue;
        }
        char skip[64];
        int k = PyOS_snprintf(skip, sizeof(skip), "skip:%c:%zd", s[start], length / 10 * 10);
        if (ht_add(tokens, prefix, prefix_len, skip, k) < 0)
            return -1;
    }
    return 0;
}

/* The domains of s[0:n] (ASCII) as re.findall(r"@([\w-]+(?:\.[\w-]+)+)", s) finds them: each
 * added to tokens after prefix (host_prefix NULL), or read by host_tokens with host_prefix. */
static int
ht_domains(PyObject *tokens, const char *prefix, Py_ssize_t prefix_len, PyObject *host_prefix,
           const char *s, Py_ssize_t n)
{
    Py_ssize_t p = 0;
    while (p < n) {
        const char *at = memchr(s + p, '@', (size_t)(n - p));
        if (at == NULL)
            break;
        Py_ssize_t start = at - s + 1, k = start;
        while (k < n && url_word_char((unsigned char)s[k]))
            k++;
        int groups = 0;
        if (k > start)
            while (k + 1 < n && s[k] == '.' && url_word_char((unsigned char)s[k + 1])) {
                k += 2;
                while (k < n && url_word_char((unsigned char)s[k]))
                    k++;
                groups++;
            }
        if (!groups) {  /* no match at this "@": the search goes on after it */
            p = start;
            continue;
        }
        int failed;
        if (host_prefix == NULL)
            failed = ht_add(tokens, prefix, prefix_len, s + start, k - start);
        else {
            PyObject *domain = PyUnicode_FromStringAndSize(s + start, k - start);
            failed = domain == NULL || host_tokens_one(host_prefix, domain, tokens) < 0;
            Py_XDECREF(domain);
        }
        if (failed)
            return -1;
        p = k;
    }
    return 0;
}

static inline int
ht_space_char(unsigned char ch)  /* \s of re in a str, for an ASCII character */
{
    return Py_UNICODE_ISSPACE(ch);
}

/* s[0:n] (ASCII) with re.sub(r"<[^<>]*>|(?<!\S)\S*@\S*", " ", s) done into out (n bytes at
 * least, as a match gives way to one space); its length. */
static Py_ssize_t
ht_blank_addresses(const char *s, Py_ssize_t n, char *out)
{
    Py_ssize_t i = 0, o = 0;
    while (i < n) {
        if (s[i] == '<') {  /* <[^<>]*> */
            Py_ssize_t j = i + 1;
            while (j < n && s[j] != '<' && s[j] != '>')
                j++;
            if (j < n && s[j] == '>') {
                out[o++] = ' ';
                i = j + 1;
                continue;
            }
        }
        if ((i == 0 || ht_space_char((unsigned char)s[i - 1]))
                && !ht_space_char((unsigned char)s[i])) {  /* (?<!\S)\S*@\S* */
            Py_ssize_t j = i;
            int at = 0;
            while (j < n && !ht_space_char((unsigned char)s[j]))
                at |= s[j++] == '@';
            if (at) {
                out[o++] = ' ';
                i = j;
                continue;
            }
        }
        out[o++] = s[i++];
    }
    return o;
}

/* The tokens of field k's ASCII value (not received). */
static int
ht_field(PyObject *tokens, int k, PyObject *value)
{
    const Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    const char *raw = (const char *)PyUnicode_1BYTE_DATA(value);
    char *lower = PyMem_Malloc((size_t)(2 * n + 1));
    if (lower == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        lower[i] = (char)Py_TOLOWER((unsigned char)raw[i]);
    char prefix[HT_PREFIX_MAX];
    Py_ssize_t prefix_len = (Py_ssize_t)strlen(ht_names[k]);
    memcpy(prefix, ht_names[k], (size_t)prefix_len);
    prefix[prefix_len++] = ':';
    int result;
    if (k == HT_FROM) {
        char *blanked = lower + n;
        Py_ssize_t m = ht_blank_addresses(lower, n, blanked);
        result = ht_words(tokens, prefix, prefix_len, blanked, m) < 0
                 || ht_domains(tokens, prefix, prefix_len, ht_from_prefix, lower, n) < 0
                 ? -1 : 0;
    }
    else if (k == HT_SUBJECT || k == HT_X_MAILER)
        result = ht_words(tokens, prefix, prefix_len, lower, n);
    else
        result = ht_domains(tokens, prefix, prefix_len, NULL, lower, n);
    PyMem_Free(lower);
    return result;
}

/* The relays of a stream recur from message to message: the received: tokens of the last
 * hosts met, a tuple by host name (emptied when it holds HT_CACHE of them). */
#define HT_CACHE 4096
static PyObject *ht_received_cache;

static int
ht_received_host(PyObject *tokens, PyObject *host)
{
    PyObject *known = PyDict_GetItemWithError(ht_received_cache, host);  /* borrowed */
    if (known == NULL) {
        if (PyErr_Occurred())
            return -1;
        PyObject *found = PySet_New(NULL);
        if (found == NULL || host_tokens_one(ht_received_prefix, host, found) < 0) {
            Py_XDECREF(found);
            return -1;
        }
        known = PySequence_Tuple(found);
        Py_DECREF(found);
        if (known == NULL)
            return -1;
        if (PyDict_GET_SIZE(ht_received_cache) >= HT_CACHE)
            PyDict_Clear(ht_received_cache);
        int failed = PyDict_SetItem(ht_received_cache, host, known);
        Py_DECREF(known);  /* the cache holds it */
        if (failed < 0)
            return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(known); i++)
        if (PySet_Add(tokens, PyTuple_GET_ITEM(known, i)) < 0)
            return -1;
    return 0;
}

/* received:<host> tokens of the received values, joined and lower-cased. */
static int
ht_received(PyObject *tokens, PyObject *received)
{
    PyObject *joined = PyUnicode_Join(ht_space, received);
    PyObject *lowered = joined ? PyObject_CallMethod(joined, "lower", NULL) : NULL;
    PyObject *hosts = lowered ? email_hosts(NULL, lowered) : NULL;
    PyObject *it = hosts ? PyObject_GetIter(hosts) : NULL;
    int result = it == NULL ? -1 : 0;
    for (PyObject *host; result == 0 && (host = PyIter_Next(it)) != NULL;) {
        result = ht_received_host(tokens, host);
        Py_DECREF(host);
    }
    if (result == 0 && PyErr_Occurred())
        result = -1;
    Py_XDECREF(it);
    Py_XDECREF(joined);
    Py_XDECREF(lowered);
    Py_XDECREF(hosts);
    return result;
}

static PyObject *
header_tokens(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *fields, *tokens;
    if (!PyArg_ParseTuple(args, "OO!:header_tokens", &fields, &PySet_Type, &tokens))
        return NULL;
    PyObject *seq = PySequence_Fast(fields, "header_tokens: fields must be a sequence");
    if (seq == NULL)
        return NULL;
    PyObject *rest = PyList_New(0), *received = PyList_New(0);
    if (rest == NULL || received == NULL)
        goto error;
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t f = 0; f < count; f++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, f);
        PyObject *name, *value;
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2
                || !PyUnicode_Check(name = PyTuple_GET_ITEM(item, 0))
                || !PyUnicode_Check(value = PyTuple_GET_ITEM(item, 1))) {
            PyErr_Format(PyExc_TypeError, "header_tokens: a field must be a (str, str) pair, "
                         "got %s", Py_TYPE(item)->tp_name);
            goto error;
        }
        if (PyUnicode_READY(name) < 0 || PyUnicode_READY(value) < 0)
            goto error;
        int k = 0;
        while (ht_names[k] != NULL && PyUnicode_CompareWithASCIIString(name, ht_names[k]))
            k++;
        if (ht_names[k] == NULL) {
            PyErr_Format(PyExc_ValueError, "header_tokens: no tokens are read from field %R",
                         name);
            goto error;
        }
        if (k == HT_RECEIVED) {  /* host names are ASCII: no decoding needed */
            if (PyList_Append(received, value) < 0)
                goto error;
            continue;
        }
        int decode = !PyUnicode_IS_ASCII(value);
        if (!decode && k <= HT_X_MAILER) {
            Py_ssize_t at = PyUnicode_Find(value, ht_encoded, 0, PY_SSIZE_T_MAX, 1);
            if (at == -2)
                goto error;
            decode = at >= 0;
        }
        if (decode ? PyList_Append(rest, item) < 0 : ht_field(tokens, k, value) < 0)
            goto error;
    }
    if (PyList_GET_SIZE(received) && ht_received(tokens, received) < 0)
        goto error;
    Py_DECREF(seq);
    Py_DECREF(received);
    return rest;
error:
    Py_DECREF(seq);
    Py_XDECREF(rest);
    Py_XDECREF(received);
    return NULL;
}

static int
header_tokens_init(void)
{
    ht_from_prefix = PyUnicode_InternFromString("from:");
    ht_received_prefix = PyUnicode_InternFromString("received:");
    ht_space = PyUnicode_InternFromString(" ");
    ht_encoded = PyUnicode_InternFromString("=?");
    ht_received_cache = PyDict_New();
    return ht_from_prefix && ht_received_prefix && ht_space && ht_encoded && ht_received_cache
           ? 0 : -1;
}

/* ---- HTML signals --------------------------------------------------------------------------- */

/*
 * html_signals(source) -> set: the names of the signal tags of (lower-cased) HTML: "<" then one
 * of html_signal_tags not followed by a word character or "-" ("<img", "<table>", not
 * "<imgx"), and "a" for a link: "<a", white space, then before the next "<" or ">" an "href"
 * not preceded by a word character or "-", "=" between optional white space, and a value
 * (a character neither white space nor ">"). Word characters and white space as re reads
 * them in a str (\w, \s). Twin: kernels._html_signals, which is the one regex it replaces.
 */
static const char *const html_signal_tags[] = {"img", "font", "form", "table", "iframe",
                                               "script", "embed", NULL};

/* A character of a tag name as re's [\w-] reads it in a str. */
static inline int
html_name_char(Py_UCS4 ch)
{
    if (ch < 128)  /* Py_UNICODE_ISALNUM's answer there, without its four table lookups */
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'
               || (ch >= 'A' && ch <= 'Z');
    return Py_UNICODE_ISALNUM(ch);
}

/* Whether the "<a" at text[i - 2:i] opens a link (text[i] white space, then an href value
   before the next "<" or ">"). */
static int
html_is_link(int kind, const void *data, Py_ssize_t n, Py_ssize_t i)
{
    if (i >= n || !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)))
        return 0;
    for (Py_ssize_t q = i + 1; q < n; q++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, q);
        if (ch == '<' || ch == '>')
            return 0;
        if (ch != 'h' || !text_at(kind, data, n, q, "href")
                || html_name_char(PyUnicode_READ(kind, data, q - 1)))
            continue;
        Py_ssize_t r = q + 4;
        while (r < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, r)))
            r++;
        if (r >= n || PyUnicode_READ(kind, data, r) != '=')
            continue;
        r++;
        while (r < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, r)))
            r++;
        if (r < n && PyUnicode_READ(kind, data, r) != '>')
            return 1;
    }
    return 0;
}

static PyObject *
html_signals(PyObject *Py_UNUSED(module), PyObject *text)
{
    PyObject *names = scan_set(text, "html_signals");
    if (names == NULL)
        return NULL;
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    for (Py_ssize_t p = 0; p < n; p++) {
        if (PyUnicode_READ(kind, data, p) != '<')
            continue;
        const char *name = NULL;
        Py_ssize_t end = -1;
        for (const char *const *tag = html_signal_tags; *tag != NULL && name == NULL; tag++)
            if (text_at(kind, data, n, p + 1, *tag)) {
                end = p + 1 + (Py_ssize_t)strlen(*tag);
                name = *tag;
            }
        if (name == NULL && text_at(kind, data, n, p + 1, "a")
                && html_is_link(kind, data, n, p + 2)) {
            end = p + 2;
            name = "a";
        }
        if (name == NULL || (end < n && html_name_char(PyUnicode_READ(kind, data, end))))
            continue;
        PyObject *found = PyUnicode_FromString(name);
        int failed = found == NULL || PySet_Add(names, found) < 0;
        Py_XDECREF(found);
        if (failed) {
            Py_DECREF(names);
            return NULL;
        }
        p = end - 1;
    }
    return names;
}

/* ---- HTML text ------------------------------------------------------------------------------ */

/*
 * The visible text of lower-cased HTML, in the passes of its twin kernels._html_text:
 * (1) comments "<!--" ... "-->" removed, looked for only up to the last "-->" (after it, "<!--"
 * is an ordinary tag); (2) scripts and style sheets removed, from "<script" / "<style" (not
 * followed by a name character) to the next "</script" / "</style" or the end; (3) block tags
 * ("<p", "</td", ... up to the next ">" or before the next "<") replaced by a space; (4) other
 * tags ("<" then "!", or a letter a-z, or "/" or "?" and a letter) removed the same way. (3) and
 * (4) cannot be one pass: the space of a block tag may end an unterminated tag before it.
 */
static const char *const html_block_tags[] = {
    "br", "p", "div", "td", "th", "tr", "li", "ul", "ol", "table", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "title", "blockquote", "pre", "center", "option", "body", "head", NULL,
};

/* Whether s[i:] starts with the ASCII literal `lit` (within n characters). */
static inline int
html_at(const Py_UCS4 *s, Py_ssize_t n, Py_ssize_t i, const char *lit)
{
    for (; *lit; lit++, i++)
        if (i >= n || s[i] != (Py_UCS4)(unsigned char)*lit)
            return 0;
    return 1;
}

/* The first i >= from with s[i:] starting with "</" + name, or -1. */
static Py_ssize_t
html_find_close(const Py_UCS4 *s, Py_ssize_t n, Py_ssize_t from, const char *name)
{
    for (Py_ssize_t i = from; i + 1 < n; i++)
        if (s[i] == '<' && s[i + 1] == '/' && html_at(s, n, i + 2, name))
            return i;
    return -1;
}

static int
html_is_block(const Py_UCS4 *s, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t length = end - start;
    for (const char *const *name = html_block_tags; *name; name++)  /* first letters first */
        if ((Py_UCS4)(unsigned char)(*name)[0] == s[start] && (Py_ssize_t)strlen(*name) == length
            && html_at(s, end, start, *name))
            return 1;
    return 0;
}

/* The end of a tag starting at s[i] == '<': before the next "<", or after the next ">". */
static inline Py_ssize_t
html_tag_end(const Py_UCS4 *s, Py_ssize_t n, Py_ssize_t i)
{
    for (i++; i < n && s[i] != '<' && s[i] != '>'; i++)
        ;
    return i < n && s[i] == '>' ? i + 1 : i;
}

static PyObject *
html_text(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "html_text: expected str, got %s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    Py_UCS4 *s = PyUnicode_AsUCS4Copy(text);  /* each pass writes behind where it reads */
    if (s == NULL)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), w, i;
    /* (1) comments, up to the last "-->" */
    Py_ssize_t comments_end = -1;
    for (i = n - 3; i >= 0; i--)
        if (s[i] == '-' && s[i + 1] == '-' && s[i + 2] == '>') {
            comments_end = i + 3;
            break;
        }
    if (comments_end > 0) {
        for (w = i = 0; i < comments_end;) {
            if (s[i] == '<' && html_at(s, comments_end, i, "<!--")) {
                Py_ssize_t j = i + 4;
                while (j + 2 < comments_end
                       && !(s[j] == '-' && s[j + 1] == '-' && s[j + 2] == '>'))
                    j++;
                if (j + 2 < comments_end) {
                    i = j + 3;
                    continue;
                }
            }
            s[w++] = s[i++];
        }
        memmove(s + w, s + comments_end, (size_t)(n - comments_end) * sizeof(Py_UCS4));
        n = w + (n - comments_end);
    }
    /* (2) scripts and style sheets */
    for (w = i = 0; i < n;) {
        if (s[i] == '<') {
            const char *name = html_at(s, n, i + 1, "script") ? "script"
                               : html_at(s, n, i + 1, "style") ? "style" : NULL;
            Py_ssize_t after = name ? i + 1 + (Py_ssize_t)strlen(name) : 0;
            if (name && (after >= n || !html_name_char(s[after]))) {
                Py_ssize_t close = html_find_close(s, n, after, name);
                i = close < 0 ? n : close + 2 + (Py_ssize_t)strlen(name);
                continue;
            }
        }
        s[w++] = s[i++];
    }
    n = w;
    /* (3) block tags become a space */
    for (w = i = 0; i < n;) {
        if (s[i] == '<' && i + 1 < n) {
            Py_ssize_t start = s[i + 1] == '/' ? i + 2 : i + 1, end = start;
            while (end < n && html_name_char(s[end]))
                end++;
            if (end > start && html_is_block(s, start, end)) {
                s[w++] = ' ';
                i = html_tag_end(s, n, i);
                continue;
            }
        }
        s[w++] = s[i++];
    }
    n = w;
    /* (4) other tags are removed */
    for (w = i = 0; i < n;) {
        if (s[i] == '<' && i + 1 < n) {
            Py_UCS4 c = s[i + 1];
            if (c == '!' || (c >= 'a' && c <= 'z')
                || ((c == '/' || c == '?') && i + 2 < n && s[i + 2] >= 'a' && s[i + 2] <= 'z')) {
                i = html_tag_end(s, n, i);
                continue;
            }
        }
        s[w++] = s[i++];
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, s, w);
    PyMem_Free(s);
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

/* ---- module --------------------------------------------------------------------------------- */

/* ---- frozen sets ---------------------------------------------------------------------------- */

/* set and frozenset share CPython's PySetObject layout and its deallocation (checked at import:
   else frozen copies) */
static int set_layout_shared;

/*
 * frozen(items) -> frozenset
 *
 * frozenset(items), without the copy where it can: a tokeniser builds a message's ~200 tokens
 * in a set and hands them out frozen, and copying them into a new table was ~5 % of
 * SpamFilter's whole step. An exact set that nothing else holds (the caller's variable and the
 * call's own reference: a reference count of at most 2) becomes the frozenset in place — it
 * has no hash yet (-1, as every set) and its entries stay where they are; anything else is
 * copied, as frozenset() does (an exact frozenset is returned as it is).
 */
static PyObject *
frozen(PyObject *Py_UNUSED(module), PyObject *items)
{
    if (PyFrozenSet_CheckExact(items))
        return Py_NewRef(items);
    if (set_layout_shared && PySet_CheckExact(items) && Py_REFCNT(items) <= 2) {
        ((PySetObject *)items)->hash = -1;
        Py_SET_TYPE(items, &PyFrozenSet_Type);
        return Py_NewRef(items);
    }
    return PyFrozenSet_New(items);
}

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
    {"email_words", email_words, METH_VARARGS, "The words of lower-cased e-mail text."},
    {"email_hosts", email_hosts, METH_O, "The dotted names and addresses of e-mail text."},
    {"url_hosts", url_hosts, METH_O, "The hosts of the links in text."},
    {"host_tokens", host_tokens, METH_VARARGS, "Tokens of host names and their parent domains."},
    {"header_fields", header_fields, METH_VARARGS, "An entity's header block and chosen fields."},
    {"header_tokens", header_tokens, METH_VARARGS, "The tokens of a message's header fields."},
    {"html_signals", html_signals, METH_O, "The signal tags of HTML source."},
    {"html_text", html_text, METH_O, "The visible text of lower-cased HTML."},
    {"spam_evidence", spam_evidence, METH_VARARGS, "SpamFilter's score of one message."},
    {"frozen", frozen, METH_O, "frozenset(items), a set nothing else holds frozen in place."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "streamnb._accel._kernels",
    .m_doc = "Per-record kernels of the token path.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__kernels(void)
{
    email_words_init();
    email_hosts_init();
    set_layout_shared = PySet_Type.tp_basicsize == PyFrozenSet_Type.tp_basicsize
        && PySet_Type.tp_itemsize == PyFrozenSet_Type.tp_itemsize
        && PySet_Type.tp_dealloc == PyFrozenSet_Type.tp_dealloc
        && PySet_Type.tp_free == PyFrozenSet_Type.tp_free;
    if (header_fields_init() < 0 || header_tokens_init() < 0 || PyType_Ready(&NameTableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObjectRef(m, "NameTable", (PyObject *)&NameTableType) < 0)
        Py_CLEAR(m);
    return m;
}
