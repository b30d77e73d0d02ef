/* FCFS with EASY backfilling (see easy_scheduler.h): the scheduling state and its passes. */

#include "easy_scheduler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void start(Job job, double now, easy_start_fn on_start, void *context) {
    int *machines = malloc(sizeof(int) * (size_t)job.res);
    for (int m = 0, k = 0; k < job.res; m++) {
        if (!busy[m]) { busy[m] = 1; machines[k++] = m; }
    }
    nb_free -= job.res;
    char *alloc = interval_set(machines, job.res);
    on_start(job.id, alloc, context);
    free(alloc);
    if (running_len == running_cap) running = grow(running, &running_cap, sizeof(Running));
    running[running_len++] = (Running){job, machines, job.walltime >= 0 ? now + job.walltime : INFINITY, ++started};
}

void easy_complete(const char *id) {
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

void easy_schedule(double now, easy_start_fn on_start, void *context) {
    while (queue_len && queue[0].res <= nb_free) { /* 1. in order while they fit */
        start(queue[0], now, on_start, context);
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
            start(job, now, on_start, context);
            remove_from_queue(i);
        } else {
            i++;
        }
    }
}

void easy_begin(int machines) {
    easy_reset();
    nb_machines = machines;
    busy = calloc((size_t)nb_machines + 1, 1);
    nb_free = nb_machines;
}

int easy_submit(const char *id, int res, double walltime) {
    if (res < 1 || res > nb_machines) return 0;
    if (queue_len == queue_cap) queue = grow(queue, &queue_cap, sizeof(Job));
    queue[queue_len++] = (Job){strdup(id), res, walltime};
    return 1;
}

void easy_reset(void) {
    for (size_t i = 0; i < queue_len; i++) free(queue[i].id);
    for (size_t i = 0; i < running_len; i++) { free(running[i].job.id); free(running[i].machines); }
    free(queue); free(running); free(busy);
    queue = NULL; running = NULL; busy = NULL;
    queue_len = queue_cap = running_len = running_cap = 0;
    nb_machines = nb_free = 0;
    started = 0;
}
