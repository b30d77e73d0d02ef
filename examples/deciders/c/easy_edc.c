/* FCFS with EASY backfilling (easy_scheduler.c) as a Batsim 5 External Decision Component
 * library: the three functions of Batsim 5's batsim_edc.h, called by the simulator in its own
 * process. It speaks batprotocol in its JSON format (flatbuffers' JSON form of the messages),
 * read and written with jansson, so it needs no batprotocol or flatbuffers library.
 *
 *   make                      # ./libeasy_edc.so
 *   joulesim simulate -p cluster32 -w default --edc-library ./libeasy_edc.so
 *
 * Its schedule equals easy_decider.c's (the same algorithm over Batsim 4's protocol), and
 * joulesim's Python `easy`.
 */

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "easy_scheduler.h"

#define BATSIM_EDC_FORMAT_JSON 0x2

/* The reply handed to the simulator: ours until the next call, as batsim_edc.h asks. */
static char *reply_text;

static uint8_t *keep(json_t *message, uint32_t *size) {
    free(reply_text);
    reply_text = json_dumps(message, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(message);
    *size = (uint32_t)strlen(reply_text) + 1; /* a C string: its NUL counts */
    return (uint8_t *)reply_text;
}

static json_t *event(double timestamp, const char *type, json_t *body) {
    json_t *e = json_object();
    json_object_set_new(e, "timestamp", json_real(timestamp));
    json_object_set_new(e, "event_type", json_string(type));
    json_object_set_new(e, "event", body);
    return e;
}

static json_t *message(double now, json_t *events) {
    json_t *m = json_object();
    json_object_set_new(m, "now", json_real(now));
    json_object_set_new(m, "events", events);
    return m;
}

uint8_t batsim_edc_init(const uint8_t *init_data, uint32_t init_size, uint32_t *flags, uint8_t **reply_data,
                        uint32_t *reply_size) {
    (void)init_data;
    (void)init_size;
    easy_reset();
    *flags = BATSIM_EDC_FORMAT_JSON;
    json_t *hello = json_object();
    json_object_set_new(hello, "batprotocol_version", json_string("0.1.0"));
    json_object_set_new(hello, "decision_component_name", json_string("easy-c"));
    json_object_set_new(hello, "decision_component_version", json_string("1.0.0"));
    json_t *events = json_array();
    json_array_append_new(events, event(0.0, "EDCHelloEvent", hello));
    *reply_data = keep(message(0.0, events), reply_size);
    return 0;
}

uint8_t batsim_edc_deinit(void) {
    easy_reset();
    free(reply_text);
    reply_text = NULL;
    return 0;
}

typedef struct {
    double now;
    json_t *events;
} Reply;

static void execute(const char *job_id, const char *alloc, void *context) {
    Reply *reply = context;
    json_t *placement = json_object();
    json_object_set_new(placement, "strategy", json_string("SpreadOverHostsFirst"));
    json_t *allocation = json_object();
    json_object_set_new(allocation, "host_allocation", json_string(alloc));
    json_object_set_new(allocation, "executor_placement_type", json_string("PredefinedExecutorPlacementStrategyWrapper"));
    json_object_set_new(allocation, "executor_placement", placement);
    json_t *body = json_object();
    json_object_set_new(body, "job_id", json_string(job_id));
    json_object_set_new(body, "allocation", allocation);
    json_array_append_new(reply->events, event(reply->now, "ExecuteJobEvent", body));
}

uint8_t batsim_edc_take_decisions(const uint8_t *what_happened, uint32_t what_happened_size, uint8_t **decisions,
                                  uint32_t *decisions_size) {
    json_error_t error;
    /* (the size counts the C string's NUL) */
    json_t *in = json_loadb((const char *)what_happened, strnlen((const char *)what_happened, what_happened_size), 0,
                            &error);
    if (!in) return 1;
    double now = json_number_value(json_object_get(in, "now"));
    json_t *events = json_array(), *e;
    size_t index;
    int changed = 0, finished = 0;
    json_array_foreach(json_object_get(in, "events"), index, e) {
        const char *type = json_string_value(json_object_get(e, "event_type"));
        json_t *body = json_object_get(e, "event");
        if (!type) continue;
        if (strcmp(type, "SimulationBeginsEvent") == 0) {
            easy_begin((int)json_integer_value(json_object_get(body, "computation_host_number")));
        } else if (strcmp(type, "JobSubmittedEvent") == 0) {
            const char *id = json_string_value(json_object_get(body, "job_id"));
            json_t *job = json_object_get(body, "job");
            json_t *walltime = json_object_get(job, "walltime");
            int res = (int)json_integer_value(json_object_get(job, "resource_request"));
            if (!easy_submit(id, res, json_is_number(walltime) ? json_number_value(walltime) : -1)) {
                json_t *reject = json_object();
                json_object_set_new(reject, "job_id", json_string(id));
                json_array_append_new(events, event(now, "RejectJobEvent", reject));
                continue;
            }
            changed = 1;
        } else if (strcmp(type, "JobCompletedEvent") == 0) {
            easy_complete(json_string_value(json_object_get(body, "job_id")));
            changed = 1;
        } else if (strcmp(type, "SimulationEndsEvent") == 0) {
            finished = 1;
        }
    }
    if (changed && !finished) {
        Reply reply = {now, events};
        easy_schedule(now, execute, &reply);
    }
    json_decref(in);
    *decisions = keep(message(now, events), decisions_size);
    return 0;
}
