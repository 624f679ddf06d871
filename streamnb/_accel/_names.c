/*
 * NameTable, the schema's registry of attribute and token names (the extension
 * streamnb._accel._names). Its Python twin is streamnb/_accel/names.py; tests/test_names.py
 * checks the two against each other. The token kernels (_kernels.c) read it through the
 * functions _names.h declares.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#define NAME_TABLE_MODULE
#include "_names.h"

/* A hint to load a cache line that a later, dependent read will need (the vocabulary's tables
   and counts outgrow the CPU caches at ~10^5 tokens). */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif


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

struct NameTable {
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
};

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
 * table at most 2/3 full, loading them would be about one needless cache miss a lookup);
 * slots stay 4 bytes. The fingerprint has 31 - index_bits bits (10 at 10^6 names, none from
 * 2**31 slots).
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

#define PREFETCH_CHAIN 4  /* probe-chain slots looked at (of one or two cache lines) */

/*
 * Load ahead what the lookups of names[0 .. m) (m <= PREFETCH_NAMES) in t will read, stage by
 * stage: each name's slot, then the entries its probe chain's fingerprints point to (which
 * hold the values), then a long name's arena bytes. Past the CPU caches a lookup is two or
 * three dependent misses; this way the names wait for each stage together instead of one name
 * after another. Hints only: nothing is decided here, names that are not str are passed over,
 * and a small table is skipped.
 */
static int
names_prefetch_pays(const NameTable *t)
{
    return t->n_slots >= (1 << 16);  /* a smaller table (256 KiB of slots) stays in the caches */
}

static void
names_prefetch(const NameTable *t, PyObject *const *names, Py_ssize_t m)
{
    if (!names_prefetch_pays(t))
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

/* The hash Python gives the str of UTF-8 s[0 .. len), or -1 with an exception (not UTF-8):
   the str's own hash, through public API only (no assumption about how str hashes). The str
   of an ASCII name is its bytes copied, without decoding; Python 3.14's public Py_HashBuffer
   hashes such a name's bytes without making it (an ASCII str's hash is its bytes'). */
static Py_hash_t
utf8_str_hash(const char *s, Py_ssize_t len)
{
    Py_ssize_t k = 0;
    while (k < len && !(s[k] & 0x80))
        k++;
#if PY_VERSION_HEX >= 0x030E0000
    if (k == len)
        return Py_HashBuffer(s, len);
#endif
    PyObject *str;
    if (k == len) {
        str = PyUnicode_New(len, 127);
        if (str != NULL)
            memcpy(PyUnicode_1BYTE_DATA(str), s, (size_t)len);
    }
    else
        str = PyUnicode_DecodeUTF8(s, len, "strict");
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
    .tp_name = "streamnb._accel._names.NameTable",
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

/* ---- module --------------------------------------------------------------------------------- */

/* name's index in t, with its value in *value; -1 if absent; -2 with an exception */
static Py_ssize_t
name_lookup(NameTable *t, PyObject *name, int32_t *value)
{
    Py_ssize_t e = name_find(t, name);
    if (e >= 0)
        *value = t->entries[e].value;
    return e;
}

static const NameTableAPI name_table_c_api = {
    .size = sizeof(NameTableAPI),
    .type = &NameTableType,
    .find = name_lookup,
    .prefetch = names_prefetch,
    .prefetch_pays = names_prefetch_pays,
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "streamnb._accel._names",
    .m_doc = "NameTable: names <-> indices in order of addition, each with an int32 value.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__names(void)
{
    if (PyType_Ready(&NameTableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    /* the capsule holds a pointer to a static table: nothing to free with it */
    PyObject *api = PyCapsule_New((void *)&name_table_c_api, NAME_TABLE_CAPSULE, NULL);
    if (api == NULL || PyModule_AddObjectRef(m, "NameTable", (PyObject *)&NameTableType) < 0
            || PyModule_AddObjectRef(m, "_C_API", api) < 0)
        Py_CLEAR(m);
    Py_XDECREF(api);
    return m;
}
