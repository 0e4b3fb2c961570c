/*
 * word-count (API 0.2): the file-reading reference. One tool,
 * `word_count {path}`, that reads a text file of the workspace (granted by
 * `filesystem = "workspace"`) and returns its line, word, character and
 * byte counts, as text and as structured content.
 *
 * Files are plain wasi-libc stdio: relative paths resolve in the
 * workspace. The Rust and JavaScript versions answer word for word the same
 * (tests/e2e/word_count.rs).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "octet.h"

/* Files above this size are refused rather than read into memory. */
#define MAX_BYTES (1L << 20)

/* A relative path that stays in the workspace: not empty, not absolute, no
 * `..` component. */
static bool inside(const char *path)
{
    if (path[0] == '\0' || path[0] == '/')
        return false;
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return false;
        p += n;
        if (*p == '/')
            p++;
    }
    return true;
}

/* ASCII whitespace separates words (the same set in every language). */
static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0b || c == 0x0c;
}

/* Whether bytes[0..len) is UTF-8 (no overlongs, surrogates or values above
 * U+10FFFF), counting its characters into *chars. */
static bool utf8(const unsigned char *b, size_t len, size_t *chars)
{
    size_t n = 0;
    for (size_t i = 0; i < len; n++) {
        unsigned char c = b[i];
        size_t need;
        unsigned char lo = 0x80, hi = 0xbf;
        if (c < 0x80)
            need = 0;
        else if (c >= 0xc2 && c <= 0xdf)
            need = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            need = 2;
            lo = c == 0xe0 ? 0xa0 : 0x80;
            hi = c == 0xed ? 0x9f : 0xbf;
        } else if (c >= 0xf0 && c <= 0xf4) {
            need = 3;
            lo = c == 0xf0 ? 0x90 : 0x80;
            hi = c == 0xf4 ? 0x8f : 0xbf;
        } else
            return false;
        if (len - i - 1 < need)
            return false;
        for (size_t k = 1; k <= need; k++) {
            unsigned char next = b[i + k];
            if (next < (k == 1 ? lo : 0x80) || next > (k == 1 ? hi : 0xbf))
                return false;
        }
        i += need + 1;
    }
    *chars = n;
    return true;
}

static int word_count(const char *args, octet_tool_result *res, const octet_call *cx)
{
    const char *path = octet_arg_string(args, "path");
    if (path == NULL)
        return octet_invalid_params("path must be a string");
    if (!inside(path))
        return octet_invalid_params("path must be relative to the workspace, without `..`");
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return octet_failed("%s: no such file in the workspace", path);
        return octet_failed("%s cannot be read", path);
    }
    if (S_ISDIR(st.st_mode))
        return octet_failed("%s is a directory, not a file", path);
    if (st.st_size > MAX_BYTES)
        return octet_failed("%s is larger than 1 MiB", path);

    FILE *file = fopen(path, "rb");
    if (file == NULL)
        return octet_failed("%s cannot be read", path);
    unsigned char *bytes = malloc((size_t)MAX_BYTES + 1);
    size_t len = bytes ? fread(bytes, 1, (size_t)MAX_BYTES + 1, file) : 0;
    bool failed = bytes == NULL || ferror(file) || len > (size_t)MAX_BYTES;
    fclose(file);
    if (failed) {
        free(bytes);
        return octet_failed("%s cannot be read", path);
    }
    size_t chars = 0;
    if (!utf8(bytes, len, &chars)) {
        free(bytes);
        return octet_failed("%s is not UTF-8 text", path);
    }
    size_t lines = 0, words = 0;
    bool in_word = false;
    for (size_t i = 0; i < len; i++) {
        lines += bytes[i] == '\n';
        if (is_space(bytes[i]))
            in_word = false;
        else if (!in_word) {
            in_word = true;
            words++;
        }
    }
    free(bytes);
    octet_tool_text(res, "%s: %zu lines, %zu words, %zu characters, %zu bytes", path, lines, words,
                    chars, len);
    char *structured = octet_format("{\"lines\":%zu,\"words\":%zu,\"chars\":%zu,\"bytes\":%zu}",
                                    lines, words, chars, len);
    octet_tool_structured(res, structured);
    free(structured);
    return OCTET_OK;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "word-count");
    octet_tool(ext, "word_count",
               "Count the lines, words, characters and bytes of a text file in the workspace",
               "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
               "\"description\":\"A file in the workspace, relative to its root\"}},"
               "\"required\":[\"path\"],\"additionalProperties\":false}",
               word_count);
    octet_tool_output_schema(ext, "word_count",
                             "{\"type\":\"object\",\"properties\":{"
                             "\"lines\":{\"type\":\"integer\"},\"words\":{\"type\":\"integer\"},"
                             "\"chars\":{\"type\":\"integer\"},\"bytes\":{\"type\":\"integer\"}},"
                             "\"required\":[\"lines\",\"words\",\"chars\",\"bytes\"]}");
}
