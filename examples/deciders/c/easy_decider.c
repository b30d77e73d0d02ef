/* A Batsim-4-protocol decider in C: FCFS with EASY backfilling.
 *
 * It serves one simulation on a ZeroMQ REP socket (libzmq) and reads and writes the
 * protocol's JSON (jansson), exactly as joulesim's Python `easy` decides:
 *   1. start queued jobs in submission order while they fit (lowest-numbered free machines);
 *   2. reserve for the first job that does not fit at the shadow time: the earliest estimated
 *      end (start + walltime) of running jobs at which enough machines are free; the machines
 *      free then beyond its needs are "extra";
 *   3. backfill, in queue order, every later job that fits now and ends (now + walltime) by the
 *      shadow time, or fits in the extra machines (which it then uses).
 * Jobs needing no machine or more machines than the platform has are rejected at submission.
 * Machine unavailability (NOTIFY event_machine_*) is not handled by this example.
 *
 *   ./easy_decider ipc:///tmp/decider.sock      then: joulesim simulate -s ipc:///tmp/decider.sock
 */

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

typedef struct {
    char *id;
    int res;
    double walltime; /* < 0: none */
} Job;

typedef struct {
    Job job;
    int *machines;    /* the machines it holds */
    double end;       /* estimated end: start + walltime, INFINITY without walltime */
    long order;       /* start order, to break ties between equal ends */
} Running;

static int nb_machines;
static unsigned char *busy; /* per machine */
static int nb_free;
static Job *queue;
static size_t queue_len, queue_cap;
static Running *running;
static size_t running_len, running_cap;
static long started;

static void *grow(void *array, size_t *cap, size_t size) {
    *cap = *cap ? *cap * 2 : 64;
    void *bigger = realloc(array, *cap * size);
    if (!bigger) { perror("realloc"); exit(1); }
    return bigger;
}

/* ------------------------------------------------------------------ decisions */
static json_t *decision(double now, const char *type, json_t *data) {
    json_t *event = json_object();
    json_object_set_new(event, "timestamp", json_real(now));
    json_object_set_new(event, "type", json_string(type));
    json_object_set_new(event, "data", data);
    return event;
}

/* "0-3 5": the interval set of a sorted list of machine ids. */
static char *interval_set(const int *ids, int n) {
    size_t cap = 32, len = 0;
    char *text = malloc(cap);
    text[0] = '\0';
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && ids[j + 1] == ids[j] + 1) j++;
        char part[48];
        int written = ids[i] == ids[j] ? snprintf(part, sizeof part, "%s%d", len ? " " : "", ids[i])
                                       : snprintf(part, sizeof part, "%s%d-%d", len ? " " : "", ids[i], ids[j]);
        while (len + (size_t)written + 1 > cap) text = realloc(text, cap *= 2);
        memcpy(text + len, part, (size_t)written + 1);
        len += (size_t)written;
        i = j + 1;
    }
    return text;
}

static void start(Job job, double now, json_t *events) {
    int *machines = malloc(sizeof(int) * (size_t)job.res);
    for (int m = 0, k = 0; k < job.res; m++) {
        if (!busy[m]) { busy[m] = 1; machines[k++] = m; }
    }
    nb_free -= job.res;
    char *alloc = interval_set(machines, job.res);
    json_t *data = json_object();
    json_object_set_new(data, "job_id", json_string(job.id));
    json_object_set_new(data, "alloc", json_string(alloc));
    json_array_append_new(events, decision(now, "EXECUTE_JOB", data));
    free(alloc);
    if (running_len == running_cap) running = grow(running, &running_cap, sizeof(Running));
    running[running_len++] = (Running){job, machines, job.walltime >= 0 ? now + job.walltime : INFINITY, ++started};
}

static void release(const char *id) {
    for (size_t i = 0; i < running_len; i++) {
        if (strcmp(running[i].job.id, id) == 0) {
            for (int k = 0; k < running[i].job.res; k++) busy[running[i].machines[k]] = 0;
            nb_free += running[i].job.res;
            free(running[i].machines);
            free(running[i].job.id);
            running[i] = running[--running_len];
            return;
        }
    }
}

static int by_end(const void *a, const void *b) {
    const Running *x = a, *y = b;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The shadow time and extra machines for a blocked job needing `needed` machines. */
static double shadow(int needed, double now, int *extra) {
    qsort(running, running_len, sizeof(Running), by_end);
    int available = nb_free;
    for (size_t i = 0; i < running_len && running[i].end != INFINITY; i++) {
        available += running[i].job.res;
        if (available >= needed) {
            *extra = available - needed;
            return running[i].end > now ? running[i].end : now;
        }
    }
    *extra = 0;
    return INFINITY;
}

static void remove_from_queue(size_t i) {
    memmove(queue + i, queue + i + 1, (queue_len - i - 1) * sizeof(Job));
    queue_len--;
}

static void schedule(double now, json_t *events) {
    while (queue_len && queue[0].res <= nb_free) { /* 1. in order while they fit */
        start(queue[0], now, events);
        remove_from_queue(0);
    }
    if (queue_len < 2) return;
    int smallest = queue[0].res;
    for (size_t i = 1; i < queue_len; i++) if (queue[i].res < smallest) smallest = queue[i].res;
    if (nb_free < smallest) return;
    int extra;
    double shadow_time = shadow(queue[0].res, now, &extra); /* 2. reservation */
    for (size_t i = 1; i < queue_len;) {                  /* 3. backfilling */
        if (nb_free < smallest) break;
        Job job = queue[i];
        int fits_in_time = job.walltime >= 0 && now + job.walltime <= shadow_time;
        if (job.res <= nb_free && (fits_in_time || job.res <= extra)) {
            if (!fits_in_time) extra -= job.res;
            start(job, now, events);
            remove_from_queue(i);
        } else {
            i++;
        }
    }
}

/* ------------------------------------------------------------------ messages */
static double number(json_t *value, double fallback) {
    return json_is_number(value) ? json_number_value(value) : fallback;
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
            nb_machines = (int)json_integer_value(json_object_get(data, "nb_compute_resources"));
            busy = calloc((size_t)nb_machines + 1, 1);
            nb_free = nb_machines;
        } else if (strcmp(type, "JOB_SUBMITTED") == 0) {
            json_t *job = json_object_get(data, "job");
            const char *id = json_string_value(json_object_get(data, "job_id"));
            int res = (int)json_integer_value(json_object_get(job, "res"));
            if (res < 1 || res > nb_machines) {
                json_t *reject = json_object();
                json_object_set_new(reject, "job_id", json_string(id));
                json_array_append_new(events, decision(now, "REJECT_JOB", reject));
                continue;
            }
            if (queue_len == queue_cap) queue = grow(queue, &queue_cap, sizeof(Job));
            queue[queue_len++] = (Job){strdup(id), res, number(json_object_get(job, "walltime"), -1)};
            changed = 1;
        } else if (strcmp(type, "JOB_COMPLETED") == 0) {
            release(json_string_value(json_object_get(data, "job_id")));
            changed = 1;
        } else if (strcmp(type, "SIMULATION_ENDS") == 0) {
            *finished = 1;
        }
    }
    if (changed && !*finished) schedule(now, events);
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
