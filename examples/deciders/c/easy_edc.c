/* FCFS with EASY backfilling (easy_scheduler.c) as a Batsim 5 External Decision Component
 * library: the three functions of Batsim 5's batsim_edc.h, called by the simulator in its own
 * process. It speaks batprotocol in its JSON format (flatbuffers' JSON form of the messages):
 * messages are split into tokens with jsmn (a tokenizer that allocates nothing), and replies
 * are written as text. Job ids and times are copied from the message as they are written
 * there, so a reply names a job and a time exactly as the simulator did, with nothing decoded
 * and printed again. It needs no batprotocol or flatbuffers library.
 *
 *   make                      # ./libeasy_edc.so
 *   joulesim simulate -p cluster32 -w default --edc-library ./libeasy_edc.so
 *
 * Its schedule equals easy_decider.c's (the same algorithm over Batsim 4's protocol), and
 * joulesim's Python `easy`.
 */

#define JSMN_STATIC /* jsmn.h holds the tokenizer itself: private to this library */
#define JSMN_STRICT /* JSON as RFC 8259 has it, nothing looser */
#include <jsmn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "easy_scheduler.h"

#define BATSIM_EDC_FORMAT_JSON 0x2

/* ----------------------------------------------------------------------------- the reply
 * Ours until the next call, as batsim_edc.h asks; grown as needed, never shrunk. */
static char *reply;
static size_t reply_len, reply_cap;

static int append(const char *text, size_t len) {
    if (reply_len + len + 1 > reply_cap) {
        size_t cap = reply_cap ? reply_cap : 256;
        while (reply_len + len + 1 > cap) cap *= 2;
        char *bigger = realloc(reply, cap);
        if (!bigger) return 0;
        reply = bigger;
        reply_cap = cap;
    }
    memcpy(reply + reply_len, text, len);
    reply_len += len;
    reply[reply_len] = '\0';
    return 1;
}

#define APPEND_LITERAL(text) append(text, sizeof(text) - 1)

/* ------------------------------------------------------------------------ the message read */
static const char *message;  /* the message being read */
static jsmntok_t *tokens;
static unsigned token_cap;
static int token_count;

/* Split the message into tokens; 0 when it is not JSON (or memory runs out). */
static int tokenize(const char *json, size_t len) {
    if (!token_cap) {
        token_cap = 256;
        tokens = malloc(token_cap * sizeof *tokens);
        if (!tokens) return 0;
    }
    for (;;) {
        jsmn_parser parser;
        jsmn_init(&parser);
        token_count = jsmn_parse(&parser, json, len, tokens, token_cap);
        if (token_count != JSMN_ERROR_NOMEM) break;
        jsmntok_t *bigger = realloc(tokens, 2 * token_cap * sizeof *tokens);
        if (!bigger) return 0;
        tokens = bigger;
        token_cap *= 2;
    }
    message = json;
    return token_count > 0 && tokens[0].type == JSMN_OBJECT;
}

/* The token after value `i` and everything inside it (nested tokens start before it ends). */
static int after(int i) {
    int end = tokens[i].end;
    for (i++; i < token_count && tokens[i].start < end; i++) {}
    return i;
}

/* Whether string token `token` is `text` (as written in the message). */
static int is(int token, const char *text) {
    size_t len = strlen(text);
    return token >= 0 && tokens[token].type == JSMN_STRING && (size_t)(tokens[token].end - tokens[token].start) == len &&
           memcmp(message + tokens[token].start, text, len) == 0;
}

/* The value of `key` in object `object`, or -1. */
static int member(int object, const char *key) {
    if (object < 0 || tokens[object].type != JSMN_OBJECT) return -1;
    int i = object + 1;
    for (int k = 0; k < tokens[object].size; k++) {
        if (is(i, key)) return i + 1;
        i = after(i + 1);
    }
    return -1;
}

static int is_number(int token) {
    return token >= 0 && tokens[token].type == JSMN_PRIMITIVE &&
           (message[tokens[token].start] == '-' || (message[tokens[token].start] >= '0' && message[tokens[token].start] <= '9'));
}

static double number(int token) { return is_number(token) ? strtod(message + tokens[token].start, NULL) : 0.0; }

/* A string's text as written in the message (escapes kept: it goes back into a reply as it
 * is), as a C string valid until the next call; NULL if the token is no string. */
static char *copied;
static size_t copied_cap;

static const char *text_of(int token) {
    if (token < 0 || tokens[token].type != JSMN_STRING) return NULL;
    size_t len = (size_t)(tokens[token].end - tokens[token].start);
    if (len + 1 > copied_cap) {
        char *bigger = realloc(copied, len + 1);
        if (!bigger) return NULL;
        copied = bigger;
        copied_cap = len + 1;
    }
    memcpy(copied, message + tokens[token].start, len);
    copied[len] = '\0';
    return copied;
}

/* ------------------------------------------------------------------------------ the calls */
static const char *now_text;  /* the message's `now`, as written there */
static size_t now_len;

static int begin_event(int *first) {
    int ok = (*first ? 1 : APPEND_LITERAL(",")) && APPEND_LITERAL("{\"timestamp\":") && append(now_text, now_len);
    *first = 0;
    return ok;
}

typedef struct {
    int first;
    int ok;
} Events;

static void execute(const char *job_id, const char *alloc, void *context) {
    Events *events = context;
    events->ok = events->ok && begin_event(&events->first) &&
                 APPEND_LITERAL(",\"event_type\":\"ExecuteJobEvent\",\"event\":{\"job_id\":\"") &&
                 append(job_id, strlen(job_id)) &&
                 APPEND_LITERAL("\",\"allocation\":{\"host_allocation\":\"") && append(alloc, strlen(alloc)) &&
                 APPEND_LITERAL("\",\"executor_placement_type\":\"PredefinedExecutorPlacementStrategyWrapper\","
                                "\"executor_placement\":{\"strategy\":\"SpreadOverHostsFirst\"}}}}");
}

static void reject(const char *job_id, Events *events) {
    events->ok = events->ok && begin_event(&events->first) &&
                 APPEND_LITERAL(",\"event_type\":\"RejectJobEvent\",\"event\":{\"job_id\":\"") &&
                 append(job_id, strlen(job_id)) && APPEND_LITERAL("\"}}");
}

static uint8_t hand_over(uint8_t **data, uint32_t *size) {
    *data = (uint8_t *)reply;
    *size = (uint32_t)reply_len + 1; /* a C string: its NUL counts */
    return 0;
}

uint8_t batsim_edc_init(const uint8_t *init_data, uint32_t init_size, uint32_t *flags, uint8_t **reply_data,
                        uint32_t *reply_size) {
    (void)init_data;
    (void)init_size;
    easy_reset();
    *flags = BATSIM_EDC_FORMAT_JSON;
    reply_len = 0;
    if (!APPEND_LITERAL("{\"now\":0.0,\"events\":[{\"timestamp\":0.0,\"event_type\":\"EDCHelloEvent\",\"event\":{"
                        "\"batprotocol_version\":\"0.1.0\",\"decision_component_name\":\"easy-c\","
                        "\"decision_component_version\":\"1.0.0\"}}]}"))
        return 1;
    return hand_over(reply_data, reply_size);
}

uint8_t batsim_edc_deinit(void) {
    easy_reset();
    free(reply);
    free(tokens);
    free(copied);
    reply = NULL;
    tokens = NULL;
    copied = NULL;
    reply_len = reply_cap = token_cap = copied_cap = 0;
    return 0;
}

uint8_t batsim_edc_take_decisions(const uint8_t *what_happened, uint32_t what_happened_size, uint8_t **decisions,
                                  uint32_t *decisions_size) {
    /* (the size counts the C string's NUL) */
    const char *json = (const char *)what_happened;
    if (!tokenize(json, strnlen(json, what_happened_size))) return 1;
    int now = member(0, "now"), events = member(0, "events");
    if (!is_number(now) || events < 0 || tokens[events].type != JSMN_ARRAY) return 1;
    now_text = message + tokens[now].start;
    now_len = (size_t)(tokens[now].end - tokens[now].start);
    reply_len = 0;
    Events out = {1, APPEND_LITERAL("{\"now\":") && append(now_text, now_len) && APPEND_LITERAL(",\"events\":[")};
    int changed = 0, finished = 0, e = events + 1;
    const char *id;
    for (int k = 0; k < tokens[events].size; k++, e = after(e)) {
        int type = member(e, "event_type"), body = member(e, "event");
        if (is(type, "SimulationBeginsEvent")) {
            easy_begin((int)number(member(body, "computation_host_number")));
        } else if (is(type, "JobSubmittedEvent")) {
            int job = member(body, "job"), walltime = member(job, "walltime");
            if (!(id = text_of(member(body, "job_id")))) return 1;
            if (!easy_submit(id, (int)number(member(job, "resource_request")), is_number(walltime) ? number(walltime) : -1)) {
                reject(id, &out);
                continue;
            }
            changed = 1;
        } else if (is(type, "JobCompletedEvent")) {
            if (!(id = text_of(member(body, "job_id")))) return 1;
            easy_complete(id);
            changed = 1;
        } else if (is(type, "SimulationEndsEvent")) {
            finished = 1;
        }
    }
    if (changed && !finished) easy_schedule(number(now), execute, &out);
    if (!out.ok || !APPEND_LITERAL("]}")) return 1;
    return hand_over(decisions, decisions_size);
}
