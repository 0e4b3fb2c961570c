/*
 * showcase (API 0.2): the API 0.2 services together, as in the Rust and
 * JavaScript versions (the same transcript: tests/e2e/showcase.rs).
 *
 * - `chart {values}` draws a bar chart, publishes it as a PNG artifact,
 *   shows it in the extension's presentation panel and returns it as an
 *   image part;
 * - `unlock_stats {}` registers the dynamic tool `chart_stats` (min, max,
 *   mean of the last chart) and returns the new catalog revision;
 * - `/charts` lists how many charts this instance drew (the panel's action).
 */
#include <stdio.h>
#include <string.h>

#include "octet.h"

#define MAX_VALUES 64
#define BAR 8
#define HEIGHT 64

/* What this instance drew: kept across requests, lost with the instance. */
static uint64_t charts;
static uint8_t last[MAX_VALUES];
static size_t n_last;

/* A growing byte buffer for the PNG. */
typedef struct bytes {
    uint8_t *p;
    size_t len;
} bytes;

static void put(bytes *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->len + n);
    if (b->p == NULL)
        abort();
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_be32(bytes *b, uint32_t n)
{
    uint8_t be[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
    put(b, be, 4);
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

static void chunk(bytes *out, const char *kind, const uint8_t *data, size_t n)
{
    bytes body = {NULL, 0};
    put(&body, kind, 4);
    if (n > 0)
        put(&body, data, n);
    put_be32(out, (uint32_t)n);
    put(out, body.p, body.len);
    put_be32(out, crc32(body.p, body.len));
    free(body.p);
}

/* The bar chart as a grayscale PNG (stored, uncompressed deflate). */
static bytes bar_chart(const uint8_t *values, size_t count)
{
    uint32_t width = (uint32_t)(count ? count : 1) * BAR;
    bytes raw = {NULL, 0};
    for (uint32_t y = 0; y < HEIGHT; y++) {
        uint8_t filter = 0;
        put(&raw, &filter, 1);
        for (uint32_t x = 0; x < width; x++) {
            uint32_t value = x / BAR < count ? values[x / BAR] : 0;
            uint32_t top = HEIGHT - value * HEIGHT / 256;
            uint8_t pixel = (y >= top && x % BAR != 0) ? 32 : 240;
            put(&raw, &pixel, 1);
        }
    }
    bytes zlib = {NULL, 0};
    put(&zlib, "\x78\x01", 2);
    for (size_t at = 0; at < raw.len; at += 65535) {
        uint16_t len = (uint16_t)(raw.len - at < 65535 ? raw.len - at : 65535);
        uint16_t nlen = (uint16_t)~len;
        uint8_t header[5] = {(uint8_t)(at + len == raw.len), (uint8_t)len, (uint8_t)(len >> 8),
                             (uint8_t)nlen, (uint8_t)(nlen >> 8)};
        put(&zlib, header, 5);
        put(&zlib, raw.p + at, len);
    }
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < raw.len; i++) {
        a = (a + raw.p[i]) % 65521;
        b = (b + a) % 65521;
    }
    put_be32(&zlib, (b << 16) | a);
    free(raw.p);

    bytes out = {NULL, 0};
    put(&out, "\x89PNG\r\n\x1a\n", 8);
    bytes header = {NULL, 0};
    put_be32(&header, width);
    put_be32(&header, HEIGHT);
    put(&header, "\x08\x00\x00\x00\x00", 5); /* 8-bit grayscale */
    chunk(&out, "IHDR", header.p, header.len);
    chunk(&out, "IDAT", zlib.p, zlib.len);
    chunk(&out, "IEND", NULL, 0);
    free(header.p);
    free(zlib.p);
    return out;
}

/* Reads `values` (1..=64 integers of 0..=255) into out. The list is valid
 * JSON (octet_json_get_raw checked it), so splitting at commas finds its
 * elements; any element that is not a lone integer fails to read. */
static int chart_values(const char *args, uint8_t *out, size_t *count)
{
    char *list = NULL;
    if (octet_json_get_raw(args, "values", &list) != OCTET_JSON_OK || list[0] != '[') {
        free(list);
        return octet_invalid_params("values must be a list of integers from 0 to 255");
    }
    /* The reader takes objects: wrap each element as {"v": element}. */
    size_t n = 0;
    const char *p = list + 1;
    p += strspn(p, " \t\r\n");
    int rc = OCTET_OK;
    while (rc == OCTET_OK && *p && *p != ']') {
        size_t len = strcspn(p, ",]");
        char *member = octet_format("{\"v\":%.*s}", (int)len, p);
        int64_t v;
        if (!octet_arg_int(member, "v", &v) || v < 0 || v > 255)
            rc = octet_invalid_params("values must be a list of integers from 0 to 255");
        else if (n == MAX_VALUES)
            rc = octet_invalid_params("values must have 1 to 64 entries");
        else
            out[n++] = (uint8_t)v;
        free(member);
        p += len;
        if (*p == ',')
            p++;
    }
    free(list);
    if (rc == OCTET_OK && n == 0)
        rc = octet_invalid_params("values must have 1 to 64 entries");
    *count = n;
    return rc;
}

static int chart(const char *args, octet_tool_result *res, const octet_call *cx)
{
    uint8_t values[MAX_VALUES];
    size_t count = 0;
    if (chart_values(args, values, &count) != OCTET_OK)
        return OCTET_ERROR;
    bytes image = bar_chart(values, count);
    char *id = NULL;
    int rc = octet_artifacts_publish("image/png", image.p, image.len, &id);
    free(image.p);
    if (rc != OCTET_OK)
        return OCTET_ERROR;
    uint64_t n = ++charts;
    memcpy(last, values, count);
    n_last = count;
    char *quoted = octet_json_quote(id);
    char *snapshot = octet_format(
        "{\"revision\":%llu,\"status\":{\"state\":\"succeeded\",\"label\":\"%llu chart(s)\"},"
        "\"activities\":[{\"id\":\"chart:%llu\",\"kind\":\"chart\",\"state\":\"succeeded\","
        "\"summary\":\"Bar chart of %zu values\","
        "\"references\":[{\"kind\":\"artifact\",\"id\":%s,\"label\":\"Chart\"}]}],"
        "\"actions\":[{\"id\":\"count\",\"label\":\"Count charts\",\"command\":\"charts\"}]}",
        (unsigned long long)n, (unsigned long long)n, (unsigned long long)n, count, quoted);
    rc = octet_presentation_update(snapshot);
    free(quoted);
    free(snapshot);
    if (rc == OCTET_OK) {
        octet_tool_text(res, "Chart of %zu values.", count);
        octet_tool_image(res, id, "image/png", "bar chart");
    }
    free(id);
    return rc;
}

static int unlock_stats(const char *args, octet_tool_result *res, const octet_call *cx)
{
    static const char *const names[] = {"chart_stats"};
    octet_catalog_update update;
    if (octet_tools_catalog_register_dynamic(names, 1, &update) != OCTET_OK)
        return OCTET_ERROR;
    octet_tool_text(res, "chart_stats is available from catalog revision %llu",
                    (unsigned long long)update.revision);
    octet_catalog_update_free(&update);
    return OCTET_OK;
}

static int chart_stats(const char *args, octet_tool_result *res, const octet_call *cx)
{
    if (n_last == 0)
        return octet_failed("no chart drawn yet in this instance");
    unsigned min = 255, max = 0, sum = 0;
    for (size_t i = 0; i < n_last; i++) {
        min = last[i] < min ? last[i] : min;
        max = last[i] > max ? last[i] : max;
        sum += last[i];
    }
    double mean = (double)sum / (double)n_last;
    octet_tool_text(res, "min %u, max %u, mean %.1f", min, max, mean);
    char *structured = octet_format("{\"min\":%u,\"max\":%u,\"mean\":%.17g}", min, max, mean);
    octet_tool_structured(res, structured);
    free(structured);
    return OCTET_OK;
}

static int count_charts(size_t argc, const char *const *argv, octet_command_result *res,
                        const octet_call *cx)
{
    octet_command_text(res, "%llu chart(s) drawn", (unsigned long long)charts);
    return OCTET_OK;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "showcase");
    octet_uses_artifacts(ext);
    octet_uses_dynamic_tools(ext);
    octet_tool(ext, "chart", "Draw a bar chart of 1-64 values (0-255) and show it",
               "{\"type\":\"object\",\"properties\":{\"values\":{\"type\":\"array\","
               "\"items\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":255},"
               "\"minItems\":1,\"maxItems\":64}},\"required\":[\"values\"]}",
               chart);
    octet_tool(ext, "unlock_stats", "Make the chart_stats tool available", NULL, unlock_stats);
    octet_dynamic_tool(ext, "chart_stats", "Min, max and mean of the last chart's values", NULL,
                       chart_stats);
    octet_tool_output_schema(ext, "chart_stats",
                             "{\"type\":\"object\",\"properties\":{\"min\":{\"type\":\"integer\"},"
                             "\"max\":{\"type\":\"integer\"},\"mean\":{\"type\":\"number\"}},"
                             "\"required\":[\"min\",\"max\",\"mean\"]}");
    octet_command(ext, "charts", "How many charts this session drew", NULL, count_charts);
}
