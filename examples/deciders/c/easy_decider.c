/* A Batsim-4-protocol decider in C: FCFS with EASY backfilling (easy_scheduler.c), exactly
 * as joulesim's Python `easy` decides.
 *
 * It serves one simulation on a ZeroMQ REP socket (libzmq) and reads and writes the
 * protocol's JSON (jansson). Machine unavailability (NOTIFY event_machine_*) is not handled by
 * this example. easy_edc.c is the same algorithm as a Batsim 5 EDC library.
 *
 *   ./easy_decider ipc:///tmp/decider.sock      then: joulesim simulate -s ipc:///tmp/decider.sock
 */

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "easy_scheduler.h"

/* ------------------------------------------------------------------ messages */
static double number(json_t *value, double fallback) {
    return json_is_number(value) ? json_number_value(value) : fallback;
}

static json_t *decision(double now, const char *type, json_t *data) {
    json_t *event = json_object();
    json_object_set_new(event, "timestamp", json_real(now));
    json_object_set_new(event, "type", json_string(type));
    json_object_set_new(event, "data", data);
    return event;
}

typedef struct {
    double now;
    json_t *events;
} Reply;

static void execute(const char *job_id, const char *alloc, void *context) {
    Reply *reply = context;
    json_t *data = json_object();
    json_object_set_new(data, "job_id", json_string(job_id));
    json_object_set_new(data, "alloc", json_string(alloc));
    json_array_append_new(reply->events, decision(reply->now, "EXECUTE_JOB", data));
}

/* Handle one simulator message; returns the reply, and sets *finished at SIMULATION_ENDS. */
static json_t *handle(json_t *message, int *finished) {
    double now = number(json_object_get(message, "now"), 0);
    json_t *events = json_array(), *event;
    size_t index;
    int changed = 0;
    json_array_foreach(json_object_get(message, "events"), index, event) {
        const char *type = json_string_value(json_object_get(event, "type"));
        json_t *data = json_object_get(event, "data");
        if (!type) continue;
        if (strcmp(type, "SIMULATION_BEGINS") == 0) {
            easy_begin((int)json_integer_value(json_object_get(data, "nb_compute_resources")));
        } else if (strcmp(type, "JOB_SUBMITTED") == 0) {
            json_t *job = json_object_get(data, "job");
            const char *id = json_string_value(json_object_get(data, "job_id"));
            int res = (int)json_integer_value(json_object_get(job, "res"));
            if (!easy_submit(id, res, number(json_object_get(job, "walltime"), -1))) {
                json_t *reject = json_object();
                json_object_set_new(reject, "job_id", json_string(id));
                json_array_append_new(events, decision(now, "REJECT_JOB", reject));
                continue;
            }
            changed = 1;
        } else if (strcmp(type, "JOB_COMPLETED") == 0) {
            easy_complete(json_string_value(json_object_get(data, "job_id")));
            changed = 1;
        } else if (strcmp(type, "SIMULATION_ENDS") == 0) {
            *finished = 1;
        }
    }
    if (changed && !*finished) {
        Reply reply = {now, events};
        easy_schedule(now, execute, &reply);
    }
    json_t *reply = json_object();
    json_object_set_new(reply, "now", json_real(now));
    json_object_set_new(reply, "events", events);
    return reply;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s ENDPOINT (e.g. ipc:///tmp/decider.sock or tcp://127.0.0.1:28000)\n", argv[0]);
        return 2;
    }
    void *context = zmq_ctx_new();
    void *socket = zmq_socket(context, ZMQ_REP);
    if (zmq_bind(socket, argv[1]) != 0) {
        fprintf(stderr, "easy_decider: cannot bind %s: %s\n", argv[1], zmq_strerror(zmq_errno()));
        return 1;
    }
    int finished = 0;
    while (!finished) {
        zmq_msg_t request;
        zmq_msg_init(&request);
        if (zmq_msg_recv(&request, socket, 0) < 0) {
            fprintf(stderr, "easy_decider: receive failed: %s\n", zmq_strerror(zmq_errno()));
            return 1;
        }
        json_error_t error;
        json_t *message = json_loadb(zmq_msg_data(&request), zmq_msg_size(&request), 0, &error);
        zmq_msg_close(&request);
        if (!message) {
            fprintf(stderr, "easy_decider: malformed JSON from the simulator: %s\n", error.text);
            return 1;
        }
        json_t *reply = handle(message, &finished);
        char *text = json_dumps(reply, JSON_COMPACT | JSON_REAL_PRECISION(17));
        zmq_send(socket, text, strlen(text), 0);
        free(text);
        json_decref(reply);
        json_decref(message);
    }
    zmq_close(socket);
    zmq_ctx_term(context);
    return 0;
}
