/*
 * turn-tracker (API 0.2): tracks which turns are active from lifecycle
 * events, shows `awake` while any is, and answers `/turns`.
 *
 * A sandboxed variant of a keep-awake extension: the native original starts
 * an operating-system helper while turns run; a wasm guest cannot start
 * processes, so it only keeps the state.
 */
#include <string.h>

#include "octet.h"

/* The active turns: a set of (session_id, turn_id) pairs. Statics live as
 * long as the instance. */
struct turn {
    char *session_id;
    char *turn_id;
};
static struct turn *turns;
static size_t n_turns;

static size_t find(const char *session_id, const char *turn_id)
{
    for (size_t i = 0; i < n_turns; i++)
        if (strcmp(turns[i].session_id, session_id) == 0 &&
            strcmp(turns[i].turn_id, turn_id) == 0)
            return i;
    return n_turns;
}

static void drop(size_t i)
{
    free(turns[i].session_id);
    free(turns[i].turn_id);
    turns[i] = turns[--n_turns];
}

static char *copy(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p == NULL)
        abort();
    return memcpy(p, s, n);
}

static int observe(const octet_lifecycle_event *event)
{
    switch (event->kind) {
    case OCTET_TURN_STARTED:
        if (event->turn_id != NULL && find(event->session_id, event->turn_id) == n_turns) {
            struct turn *grown = realloc(turns, (n_turns + 1) * sizeof *turns);
            if (grown == NULL)
                abort();
            turns = grown;
            turns[n_turns].session_id = copy(event->session_id);
            turns[n_turns].turn_id = copy(event->turn_id);
            n_turns++;
        }
        break;
    case OCTET_TURN_SETTLED:
        if (event->turn_id != NULL) {
            size_t i = find(event->session_id, event->turn_id);
            if (i < n_turns)
                drop(i);
        }
        break;
    case OCTET_SESSION_SETTLED:
        for (size_t i = n_turns; i-- > 0;)
            if (strcmp(turns[i].session_id, event->session_id) == 0)
                drop(i);
        break;
    default:
        break;
    }
    return OCTET_OK;
}

static int turns_command(size_t argc, const char *const *argv, octet_command_result *res,
                         const octet_call *cx)
{
    (void)argv;
    (void)cx;
    if (argc > 0)
        octet_command_text(res, "Usage: /turns");
    else if (n_turns == 0)
        octet_command_text(res, "No turn is active.");
    else if (n_turns == 1)
        octet_command_text(res, "1 turn active.");
    else
        octet_command_text(res, "%zu turns active.", n_turns);
    return OCTET_OK;
}

static int status(const char *surface, octet_status_item *out, const octet_call *cx)
{
    (void)surface;
    (void)cx;
    if (n_turns > 0)
        octet_status_show(out, "awake", "extension.turn_tracker.active", 10);
    return OCTET_OK; /* untouched: null */
}

static int on_shutdown(void)
{
    while (n_turns > 0)
        drop(n_turns - 1);
    return OCTET_OK;
}

void octet_setup(octet_ext *ext)
{
    octet_name(ext, "turn-tracker");
    octet_on_lifecycle(ext, OCTET_SESSION_SETTLED | OCTET_TURN_SETTLED | OCTET_TURN_STARTED,
                       observe);
    octet_command(ext, "turns", "Show how many turns are active", "/turns", turns_command);
    octet_status(ext, "status", status);
    octet_on_shutdown(ext, on_shutdown);
}
