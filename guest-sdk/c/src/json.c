/*
 * The JSON reader of octet.h: validation, then lookups among the members
 * of the top-level object. Linear in the text; no allocation except for
 * returned strings.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* JSON reader                                                          */
/* ------------------------------------------------------------------ */

/* A recursive-descent validator over NUL-terminated text. Every scan_*
 * function advances *p past one token and returns false on invalid input. */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool read_hex4(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p[i]);
        if (d < 0)
            return false;
        v = (v << 4) | (uint32_t)d;
    }
    *out = v;
    return true;
}

static size_t utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes one character of a string literal body at *p (not the closing
 * quote) into out, advancing *p. Returns the number of bytes written, or 0
 * when the text is invalid (bad escape, lone surrogate, control character). */
static size_t string_char(const char **p, char out[4])
{
    const char *s = *p;
    unsigned char c = (unsigned char)*s;
    if (c == '\0' || c < 0x20)
        return 0;
    if (c != '\\') {
        out[0] = (char)c;
        *p = s + 1;
        return 1;
    }
    s++;
    char e = *s++;
    switch (e) {
    case '"': out[0] = '"'; break;
    case '\\': out[0] = '\\'; break;
    case '/': out[0] = '/'; break;
    case 'b': out[0] = '\b'; break;
    case 'f': out[0] = '\f'; break;
    case 'n': out[0] = '\n'; break;
    case 'r': out[0] = '\r'; break;
    case 't': out[0] = '\t'; break;
    case 'u': {
        uint32_t cp;
        if (!read_hex4(s, &cp))
            return 0;
        s += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return 0; /* a lone low surrogate */
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo;
            if (s[0] != '\\' || s[1] != 'u' || !read_hex4(s + 2, &lo) || lo < 0xDC00 ||
                lo > 0xDFFF)
                return 0; /* a high surrogate without its low half */
            s += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        *p = s;
        return utf8_encode(cp, out);
    }
    default:
        return 0;
    }
    *p = s;
    return 1;
}

/* *p at the opening quote; leaves *p after the closing quote. */
static bool scan_string(const char **p)
{
    const char *s = *p + 1;
    char buf[4];
    while (*s != '"') {
        if (string_char(&s, buf) == 0)
            return false;
    }
    *p = s + 1;
    return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool scan_number(const char **p)
{
    const char *s = *p;
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (is_digit(*s))
            s++;
    else
        return false;
    if (*s == '.') {
        s++;
        if (!is_digit(*s))
            return false;
        while (is_digit(*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!is_digit(*s))
            return false;
        while (is_digit(*s))
            s++;
    }
    *p = s;
    return true;
}

static bool scan_literal(const char **p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}

static bool scan_value(const char **p, int depth);

static bool scan_object(const char **p, int depth)
{
    const char *s = skip_ws(*p + 1);
    if (*s == '}') {
        *p = s + 1;
        return true;
    }
    for (;;) {
        if (*s != '"' || !scan_string(&s))
            return false;
        s = skip_ws(s);
        if (*s != ':')
            return false;
        s = skip_ws(s + 1);
        if (!scan_value(&s, depth))
            return false;
        s = skip_ws(s);
        if (*s == '}') {
            *p = s + 1;
            return true;
        }
        if (*s != ',')
            return false;
        s = skip_ws(s + 1);
    }
}

static bool scan_array(const char **p, int depth)
{
    const char *s = skip_ws(*p + 1);
    if (*s == ']') {
        *p = s + 1;
        return true;
    }
    for (;;) {
        if (!scan_value(&s, depth))
            return false;
        s = skip_ws(s);
        if (*s == ']') {
            *p = s + 1;
            return true;
        }
        if (*s != ',')
            return false;
        s = skip_ws(s + 1);
    }
}

/* *p at the first character of a value (no leading white space). */
static bool scan_value(const char **p, int depth)
{
    switch (**p) {
    case '{':
        return depth < OCTET_JSON_MAX_DEPTH && scan_object(p, depth + 1);
    case '[':
        return depth < OCTET_JSON_MAX_DEPTH && scan_array(p, depth + 1);
    case '"':
        return scan_string(p);
    case 't':
        return scan_literal(p, "true");
    case 'f':
        return scan_literal(p, "false");
    case 'n':
        return scan_literal(p, "null");
    default:
        return scan_number(p);
    }
}

bool octet_json_valid(const char *json)
{
    if (json == NULL)
        return false;
    const char *p = skip_ws(json);
    if (!scan_value(&p, 0))
        return false;
    return *skip_ws(p) == '\0';
}

bool octet_json_is_object(const char *json)
{
    return octet_json_valid(json) && *skip_ws(json) == '{';
}

/* Whether the string literal at lit (at its opening quote) unescapes to key. */
static bool key_equals(const char *lit, const char *key)
{
    const char *s = lit + 1;
    char buf[4];
    while (*s != '"') {
        size_t n = string_char(&s, buf);
        for (size_t i = 0; i < n; i++) {
            if (*key == '\0' || *key != buf[i])
                return false;
            key++;
        }
    }
    return *key == '\0';
}

typedef bool (*member_visitor)(const char *key_lit, const char *value, const char *value_end,
                               void *state);

/* Validates json, then calls visit for every member of the top-level object
 * in order until it returns false. */
static octet_json_status each_member(const char *json, member_visitor visit, void *state)
{
    if (!octet_json_valid(json))
        return OCTET_JSON_INVALID;
    const char *s = skip_ws(json);
    if (*s != '{')
        return OCTET_JSON_NOT_OBJECT;
    s = skip_ws(s + 1);
    while (*s == '"') {
        const char *key = s;
        scan_string(&s);
        s = skip_ws(skip_ws(s) + 1); /* past ':' */
        const char *value = s;
        scan_value(&s, 1);
        if (!visit(key, value, s, state))
            break;
        s = skip_ws(s);
        if (*s == ',')
            s = skip_ws(s + 1);
    }
    return OCTET_JSON_OK;
}

struct find_state {
    const char *key;
    const char *value, *value_end;
};

static bool find_visit(const char *key_lit, const char *value, const char *value_end, void *state)
{
    struct find_state *f = state;
    if (key_equals(key_lit, f->key)) {
        f->value = value; /* the last duplicate wins */
        f->value_end = value_end;
    }
    return true;
}

static octet_json_status find_member(const char *json, const char *key, const char **value,
                                     const char **value_end)
{
    struct find_state f = {key, NULL, NULL};
    octet_json_status st = each_member(json, find_visit, &f);
    if (st != OCTET_JSON_OK)
        return st;
    if (f.value == NULL)
        return OCTET_JSON_MISSING;
    if (strncmp(f.value, "null", 4) == 0)
        return OCTET_JSON_NULL;
    *value = f.value;
    *value_end = f.value_end;
    return OCTET_JSON_OK;
}

static octet_json_status decode_string(const char *v, const char *end, char **out);
static octet_json_status decode_int(const char *v, const char *end, int64_t *out);

octet_json_status octet_json_get_string(const char *json, const char *key, char **out)
{
    const char *v, *end;
    octet_json_status st = find_member(json, key, &v, &end);
    if (st != OCTET_JSON_OK)
        return st;
    return decode_string(v, end, out);
}

/* The string value at v (a valid JSON value ending at end), unescaped. */
static octet_json_status decode_string(const char *v, const char *end, char **out)
{
    if (*v != '"')
        return OCTET_JSON_WRONG_TYPE;
    /* Unescaping never lengthens the text. */
    char *text = malloc((size_t)(end - v) + 1);
    if (text == NULL)
        return OCTET_JSON_NO_MEMORY;
    size_t len = 0;
    const char *s = v + 1;
    while (*s != '"') {
        size_t n = string_char(&s, text + len);
        for (size_t i = 0; i < n; i++) {
            if (text[len + i] == '\0') {
                free(text);
                return OCTET_JSON_WRONG_TYPE; /* \u0000 cannot be a C string */
            }
        }
        len += n;
    }
    text[len] = '\0';
    *out = text;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_get_int(const char *json, const char *key, int64_t *out)
{
    const char *v, *end;
    octet_json_status st = find_member(json, key, &v, &end);
    if (st != OCTET_JSON_OK)
        return st;
    return decode_int(v, end, out);
}

/* The integer value at v (a valid JSON value ending at end). */
static octet_json_status decode_int(const char *v, const char *end, int64_t *out)
{
    if (*v != '-' && !is_digit(*v))
        return OCTET_JSON_WRONG_TYPE;
    bool negative = *v == '-';
    const char *s = negative ? v + 1 : v;
    /* Accumulate as a negative number: int64's range is asymmetric. */
    int64_t acc = 0;
    for (; s < end; s++) {
        if (!is_digit(*s))
            return OCTET_JSON_RANGE; /* a fraction or an exponent */
        int d = *s - '0';
        if (acc < (INT64_MIN + d) / 10)
            return OCTET_JSON_RANGE;
        acc = acc * 10 - d;
    }
    if (!negative) {
        if (acc == INT64_MIN)
            return OCTET_JSON_RANGE;
        acc = -acc;
    }
    *out = acc;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_get_bool(const char *json, const char *key, bool *out)
{
    const char *v, *end;
    octet_json_status st = find_member(json, key, &v, &end);
    if (st != OCTET_JSON_OK)
        return st;
    if (*v == 't')
        *out = true;
    else if (*v == 'f')
        *out = false;
    else
        return OCTET_JSON_WRONG_TYPE;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_get_raw(const char *json, const char *key, char **out)
{
    const char *v, *end;
    struct find_state f = {key, NULL, NULL};
    octet_json_status st = each_member(json, find_visit, &f);
    if (st != OCTET_JSON_OK)
        return st;
    if (f.value == NULL)
        return OCTET_JSON_MISSING;
    v = f.value;
    end = f.value_end;
    char *text = malloc((size_t)(end - v) + 1);
    if (text == NULL)
        return OCTET_JSON_NO_MEMORY;
    memcpy(text, v, (size_t)(end - v));
    text[end - v] = '\0';
    *out = text;
    return OCTET_JSON_OK;
}

/* Validates json as an array, then finds element index: *value and
 * *value_end bound it; *count (when not NULL) is the element count when
 * the index is past the end. */
static octet_json_status find_element(const char *json, size_t index, const char **value,
                                      const char **value_end, size_t *count)
{
    if (!octet_json_valid(json))
        return OCTET_JSON_INVALID;
    const char *s = skip_ws(json);
    if (*s != '[')
        return OCTET_JSON_NOT_ARRAY;
    s = skip_ws(s + 1);
    size_t i = 0;
    while (*s != ']') {
        const char *start = s;
        scan_value(&s, 1);
        if (i == index) {
            *value = start;
            *value_end = s;
            return OCTET_JSON_OK;
        }
        i++;
        s = skip_ws(s);
        if (*s == ',')
            s = skip_ws(s + 1);
    }
    if (count != NULL)
        *count = i;
    return OCTET_JSON_MISSING;
}

octet_json_status octet_json_array_length(const char *json, size_t *count)
{
    const char *v, *end;
    size_t n = 0;
    octet_json_status st = find_element(json, SIZE_MAX, &v, &end, &n);
    if (st != OCTET_JSON_MISSING)
        return st;
    *count = n;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_array_get_raw(const char *json, size_t index, char **out)
{
    const char *v, *end;
    octet_json_status st = find_element(json, index, &v, &end, NULL);
    if (st != OCTET_JSON_OK)
        return st;
    char *text = malloc((size_t)(end - v) + 1);
    if (text == NULL)
        return OCTET_JSON_NO_MEMORY;
    memcpy(text, v, (size_t)(end - v));
    text[end - v] = '\0';
    *out = text;
    return OCTET_JSON_OK;
}

octet_json_status octet_json_array_get_string(const char *json, size_t index, char **out)
{
    const char *v, *end;
    octet_json_status st = find_element(json, index, &v, &end, NULL);
    if (st != OCTET_JSON_OK)
        return st;
    if (strncmp(v, "null", 4) == 0)
        return OCTET_JSON_NULL;
    return decode_string(v, end, out);
}

octet_json_status octet_json_array_get_int(const char *json, size_t index, int64_t *out)
{
    const char *v, *end;
    octet_json_status st = find_element(json, index, &v, &end, NULL);
    if (st != OCTET_JSON_OK)
        return st;
    if (strncmp(v, "null", 4) == 0)
        return OCTET_JSON_NULL;
    return decode_int(v, end, out);
}

struct keys_state {
    const char *const *allowed;
    size_t count;
    const char *unknown;
};

static bool keys_visit(const char *key_lit, const char *value, const char *value_end, void *state)
{
    (void)value;
    (void)value_end;
    struct keys_state *k = state;
    for (size_t i = 0; i < k->count; i++)
        if (key_equals(key_lit, k->allowed[i]))
            return true;
    k->unknown = key_lit;
    return false;
}

octet_json_status octet_json_only_keys(const char *json, const char *const *allowed, size_t count,
                                       char **unknown)
{
    struct keys_state k = {allowed, count, NULL};
    octet_json_status st = each_member(json, keys_visit, &k);
    if (st != OCTET_JSON_OK)
        return st;
    if (k.unknown == NULL)
        return OCTET_JSON_OK;
    if (unknown != NULL) {
        /* Decode the key (no \u0000 check needed: it only names the key). */
        const char *s = k.unknown;
        scan_string(&s);
        char *text = malloc((size_t)(s - k.unknown) + 1);
        if (text != NULL) {
            size_t len = 0;
            const char *c = k.unknown + 1;
            while (*c != '"')
                len += string_char(&c, text + len);
            text[len] = '\0';
        }
        *unknown = text;
    }
    return OCTET_JSON_WRONG_TYPE;
}

const char *octet_json_status_text(octet_json_status status)
{
    switch (status) {
    case OCTET_JSON_OK: return "ok";
    case OCTET_JSON_MISSING: return "missing";
    case OCTET_JSON_NULL: return "null";
    case OCTET_JSON_WRONG_TYPE: return "of the wrong type";
    case OCTET_JSON_RANGE: return "out of range";
    case OCTET_JSON_NOT_OBJECT: return "not a JSON object";
    case OCTET_JSON_INVALID: return "not valid JSON";
    case OCTET_JSON_NO_MEMORY: return "out of memory";
    case OCTET_JSON_NOT_ARRAY: return "not a JSON array";
    }
    return "unknown status";
}


/* ------------------------------------------------------------------ */
/* The handler's shortcuts                                              */
/* ------------------------------------------------------------------ */

const char *octet_arg_string(const char *json, const char *key)
{
    char *value = NULL;
    if (octet_json_get_string(json, key, &value) != OCTET_JSON_OK)
        return NULL;
    return arena_keep(value);
}

bool octet_arg_int(const char *json, const char *key, int64_t *out)
{
    int64_t value;
    if (octet_json_get_int(json, key, &value) != OCTET_JSON_OK)
        return false;
    *out = value;
    return true;
}

bool octet_arg_bool(const char *json, const char *key, bool *out)
{
    bool value;
    if (octet_json_get_bool(json, key, &value) != OCTET_JSON_OK)
        return false;
    *out = value;
    return true;
}
