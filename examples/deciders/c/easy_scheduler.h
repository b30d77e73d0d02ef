/* FCFS with EASY backfilling, the algorithm alone: the Batsim 4 decider (easy_decider.c) and
 * the Batsim 5 EDC library (easy_edc.c) both drive it, each speaking its own protocol.
 *   1. start queued jobs in submission order while they fit (lowest-numbered free machines);
 *   2. reserve for the first job that does not fit at the shadow time: the earliest estimated
 *      end (start + walltime) of running jobs at which enough machines are free; the machines
 *      free then beyond its needs are "extra";
 *   3. backfill, in queue order, every later job that fits now and ends (now + walltime) by the
 *      shadow time, or fits in the extra machines (which it then uses).
 * Jobs needing no machine or more machines than the platform has are rejected at submission.
 */
#ifndef EASY_SCHEDULER_H
#define EASY_SCHEDULER_H

/* Called for each job started: its id and its machines as an interval set ("0-3 5"). */
typedef void (*easy_start_fn)(const char *job_id, const char *alloc, void *context);

void easy_begin(int nb_machines);
/* Queue a submitted job (walltime < 0: none); 0 when it must be rejected instead. */
int easy_submit(const char *job_id, int res, double walltime);
/* Free the machines of a job that ended. */
void easy_complete(const char *job_id);
/* Start what can start at `now`, calling `start` for each job started. */
void easy_schedule(double now, easy_start_fn start, void *context);
/* Forget everything (a library may serve several simulations). */
void easy_reset(void);

#endif
