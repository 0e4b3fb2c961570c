/*
 * Allocation, WIT strings and the per-call arena, and the string helpers
 * of octet.h (octet_format, octet_json_quote, octet_utf8_chars).
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Allocation                                                           */
/* ------------------------------------------------------------------ */

/* Out of memory is a trap: the shim answers the request and replaces the
 * instance. */
void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (p == NULL)
        abort();
    return p;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xrealloc(NULL, n);
    memcpy(p, s, n);
    return p;
}

char *xstrdup_opt(const char *s) { return s ? xstrdup(s) : NULL; }

/* Grows *arr by one element of `size` bytes and returns the new element,
 * zeroed. */
void *push(void *arr_ptr, size_t *len, size_t size)
{
    void **arr = arr_ptr;
    *arr = xrealloc(*arr, (*len + 1) * size);
    void *item = (char *)*arr + *len * size;
    memset(item, 0, size);
    (*len)++;
    return item;
}
#define PUSH(arr, len) ((__typeof__(&(arr)[0]))push(&(arr), &(len), sizeof *(arr)))

/* A WIT string to return: a malloc'd copy, or {NULL, 0} when empty. */
wstr wstr_of(const char *s)
{
    wstr w = {NULL, 0};
    size_t n = s ? strlen(s) : 0;
    if (n > 0) {
        w.ptr = xrealloc(NULL, n);
        memcpy(w.ptr, s, n);
        w.len = n;
    }
    return w;
}

/* Same, taking over a malloc'd C string (whose NUL is simply not sent). */
wstr wstr_take(char *s)
{
    wstr w = {NULL, 0};
    if (s != NULL && *s != '\0') {
        w.ptr = (uint8_t *)s;
        w.len = strlen(s);
    } else {
        free(s);
    }
    return w;
}

extension_option_string_t wopt_of(const char *s)
{
    extension_option_string_t o;
    memset(&o, 0, sizeof o);
    if (s != NULL) {
        o.is_some = true;
        o.val = wstr_of(s);
    }
    return o;
}

/* A borrowed WIT view of a C string, for import arguments. */
wstr wstr_borrow(const char *s)
{
    wstr w = {(uint8_t *)s, s ? strlen(s) : 0};
    return w;
}

/* A malloc'd NUL-terminated copy of a WIT string. */
char *cstr_of(const wstr *w)
{
    char *s = xrealloc(NULL, w->len + 1);
    if (w->len > 0)
        memcpy(s, w->ptr, w->len);
    s[w->len] = '\0';
    return s;
}

/* Per-call arena: the C strings handed to a handler live until the export
 * returns. */
static void **g_arena;
static size_t g_arena_len;

const char *arena_keep(char *s)
{
    *PUSH(g_arena, g_arena_len) = s;
    return s;
}

const char *arena_cstr(const wstr *w) { return arena_keep(cstr_of(w)); }

const char *arena_opt(const extension_option_string_t *o)
{
    return o->is_some ? arena_cstr(&o->val) : NULL;
}

void arena_release(void)
{
    for (size_t i = 0; i < g_arena_len; i++)
        free(g_arena[i]);
    free(g_arena);
    g_arena = NULL;
    g_arena_len = 0;
}

/* ------------------------------------------------------------------ */
/* Strings                                                              */
/* ------------------------------------------------------------------ */

char *octet_vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s == NULL)
        return NULL;
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *octet_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = octet_vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* vformat that traps instead of returning NULL. */
char *xvformat(const char *fmt, va_list ap)
{
    char *s = octet_vformat(fmt, ap);
    if (s == NULL)
        abort();
    return s;
}

char *octet_json_quote(const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 2;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        n += (*p < 0x20) ? 6 : (*p == '"' || *p == '\\') ? 2 : 1;
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (c < 0x20) {
            *o++ = '\\';
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        } else {
            *o++ = (char)c;
        }
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

size_t octet_utf8_chars(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            n++;
    return n;
}


/* ------------------------------------------------------------------ */
/* Lists for imports and JSON for results                               */
/* ------------------------------------------------------------------ */

extension_list_string_t wlist_of(char *const *items, size_t n)
{
    extension_list_string_t l = {NULL, 0};
    for (size_t i = 0; i < n; i++)
        *PUSH(l.ptr, l.len) = wstr_of(items[i]);
    return l;
}

extension_list_string_t owned_list(const char *const *items, size_t n)
{
    extension_list_string_t l = {NULL, 0};
    for (size_t i = 0; i < n; i++)
        *PUSH(l.ptr, l.len) = wstr_borrow(items[i]);
    return l;
}

void sb_init(sb *b)
{
    b->cap = 64;
    b->len = 0;
    b->s = xrealloc(NULL, b->cap);
    b->s[0] = '\0';
}

static void sb_raw(sb *b, const char *text, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        while (b->len + n + 1 > b->cap)
            b->cap *= 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void sb_add(sb *b, const char *text) { sb_raw(b, text, strlen(text)); }

void sb_addf(sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *text = xvformat(fmt, ap);
    va_end(ap);
    sb_add(b, text);
    free(text);
}

void sb_json_string(sb *b, const char *text)
{
    char *quoted = octet_json_quote(text);
    if (quoted == NULL)
        abort();
    sb_add(b, quoted);
    free(quoted);
}

void sb_json_wstr(sb *b, const wstr *w)
{
    char *text = cstr_of(w);
    sb_json_string(b, text);
    free(text);
}

void sb_json_raw(sb *b, const wstr *w)
{
    char *text = cstr_of(w);
    sb_add(b, octet_json_valid(text) ? text : "null");
    free(text);
}

char *sb_finish(sb *b)
{
    char *s = b->s;
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}
