/*
 * What streamnb._accel._names (the NameTable type, _names.c) offers the other extensions in C:
 * the token kernels (_kernels.c) look a message's tokens up in a NameTable without a Python
 * call a token. _names.c exports this table of functions as a capsule, the documented way for
 * one extension module to call another's C functions ("Providing a C API for an Extension
 * Module" in Python's documentation); a user calls name_table_import() once, when its module
 * is initialised. The table's layout stays _names.c's own.
 */
#ifndef STREAMNB_NAMES_H
#define STREAMNB_NAMES_H

#include <Python.h>
#include <stdint.h>

typedef struct NameTable NameTable;

#define NAME_TABLE_CAPSULE "streamnb._accel._names._C_API"
#define PREFETCH_NAMES 64  /* names a call of `prefetch` takes at most */

typedef struct {
    size_t size;         /* sizeof(NameTableAPI) where it was built: a stale build is refused */
    PyTypeObject *type;  /* NameTable */
    /* name's index in t and its value (in *value); -1 if absent; -2 with an exception */
    Py_ssize_t (*find)(NameTable *t, PyObject *name, int32_t *value);
    /* A hint: load ahead what `find` will read for names[0 .. m) (m <= PREFETCH_NAMES). */
    void (*prefetch)(const NameTable *t, PyObject *const *names, Py_ssize_t m);
    /* Whether `prefetch` does anything for t: a caller gathering names for it skips the work
       for a table that fits the caches. */
    int (*prefetch_pays)(const NameTable *t);
} NameTableAPI;

#ifndef NAME_TABLE_MODULE  /* not in _names.c, which defines the table */
static const NameTableAPI *name_table_api;

/* 0 with name_table_api set, or -1 with ImportError. */
static int
name_table_import(void)
{
    /* the module imported first: PyCapsule_Import reaches a submodule by attribute only */
    PyObject *module = PyImport_ImportModule("streamnb._accel._names");
    if (module == NULL)
        return -1;
    PyObject *capsule = PyObject_GetAttrString(module, "_C_API");
    Py_DECREF(module);
    if (capsule == NULL)
        return -1;
    const NameTableAPI *api = PyCapsule_GetPointer(capsule, NAME_TABLE_CAPSULE);
    Py_DECREF(capsule);  /* the table is static in _names, which stays imported */
    if (api == NULL)
        return -1;
    if (api->size != sizeof(NameTableAPI)) {
        PyErr_SetString(PyExc_ImportError,
                        "streamnb._accel._names was built apart from this module: rebuild both");
        return -1;
    }
    name_table_api = api;
    return 0;
}
#endif

#endif
