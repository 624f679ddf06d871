/*
 * The text scans of the e-mail and SMS tokenisers (the extension streamnb.features._scan):
 * words, dotted names, link hosts and their parent domains, header fields and their tokens,
 * HTML signals and visible text. Each function has a pure-Python twin in
 * streamnb/features/scan.py with the same results; tests/test_scan.py checks each pair.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---- e-mail words --------------------------------------------------------------------------- */

/*
 * The word set of (lower-cased) e-mail text: maximal runs of word characters (\w as re sees it
 * in a str: str.isalnum() or "_"; also "$", "!" and "'"), stripped of apostrophes at both ends;
 * words of 2 to 40 characters as they are, longer ones as "skip:<first char>:<length rounded
 * down to 10>", shorter ones dropped. email_words(text[, words]): added to the set `words`
 * (a new set without it), which is returned. Twin: scan.email_words.
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
 * Twin: scan.email_hosts.
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
 * as a set. Twin: scan.url_hosts, which is those two findall calls.
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
 * its length). Twin: scan.host_tokens.
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
 * scan.header_fields, which is the two regular expressions the tokeniser used.
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
 * scan.header_tokens.
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
 * them in a str (\w, \s). Twin: scan.html_signals, which is the one regex it replaces.
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
 * The visible text of lower-cased HTML, in the passes of its twin scan.html_text:
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

/* ---- module --------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"email_words", email_words, METH_VARARGS, "The words of lower-cased e-mail text."},
    {"email_hosts", email_hosts, METH_O, "The dotted names and addresses of e-mail text."},
    {"url_hosts", url_hosts, METH_O, "The hosts of the links in text."},
    {"host_tokens", host_tokens, METH_VARARGS, "Tokens of host names and their parent domains."},
    {"header_fields", header_fields, METH_VARARGS, "An entity's header block and chosen fields."},
    {"header_tokens", header_tokens, METH_VARARGS, "The tokens of a message's header fields."},
    {"html_signals", html_signals, METH_O, "The signal tags of HTML source."},
    {"html_text", html_text, METH_O, "The visible text of lower-cased HTML."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "streamnb.features._scan",
    .m_doc = "Text scans of the e-mail and SMS tokenisers.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    email_words_init();
    email_hosts_init();
    if (header_fields_init() < 0 || header_tokens_init() < 0)
        return NULL;
    return PyModule_Create(&module);
}
