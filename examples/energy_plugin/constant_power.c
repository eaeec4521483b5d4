/*
 * An example replay energy plugin: a meter that reads a constant power (42 W, or the number
 * of watts given as its config) integrated over CLOCK_MONOTONIC time since open.
 *
 *   cc -shared -fPIC -O2 -Iinclude examples/energy_plugin/constant_power.c -o libconstant_power.so
 *   replay isolated --kernels S --energy "plugin:./libconstant_power.so 42"
 *
 * The CONSTANT_POWER_ABI_VERSION, CONSTANT_POWER_OMIT_READ and CONSTANT_POWER_FAULT defines
 * exist only so replay's tests can build broken variants (wrong ABI version, missing symbol,
 * a read that fails) from this one file. With CONSTANT_POWER_FAULT=N, every read after the
 * first CONSTANT_POWER_FAULT_AFTER (default 2) fails: 1 returns error code 7, 2 reads NaN,
 * 3 reads a value below the previous one.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "replay_energy_probe.h"

#ifndef CONSTANT_POWER_ABI_VERSION
#define CONSTANT_POWER_ABI_VERSION REPLAY_ENERGY_PROBE_ABI_VERSION
#endif
#ifndef CONSTANT_POWER_FAULT_AFTER
#define CONSTANT_POWER_FAULT_AFTER 2
#endif

struct constant_power {
    struct timespec start;
    double watts;
    unsigned long reads;
};

uint32_t replay_energy_probe_abi_version(void) { return CONSTANT_POWER_ABI_VERSION; }

const char *replay_energy_probe_name(void) { return "constant-power"; }

void *replay_energy_probe_open(const char *config) {
    double watts = 42.0;
    if (config != NULL && config[0] != '\0') {
        char *end = NULL;
        watts = strtod(config, &end);
        if (end == config || watts < 0.0) {
            fprintf(stderr, "constant-power: config must be a number of watts, got '%s'\n", config);
            return NULL;
        }
    }
    struct constant_power *p = calloc(1, sizeof *p);
    if (p == NULL) return NULL;
    p->watts = watts;
    if (clock_gettime(CLOCK_MONOTONIC, &p->start) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

#ifndef CONSTANT_POWER_OMIT_READ
static double seconds_between(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

int replay_energy_probe_read_joules(void *handle, double *joules_out) {
    struct constant_power *p = handle;
    struct timespec now;
    if (p == NULL || joules_out == NULL || clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 1;
    *joules_out = p->watts * seconds_between(&p->start, &now);
#ifdef CONSTANT_POWER_FAULT
    if (++p->reads > CONSTANT_POWER_FAULT_AFTER) {
#if CONSTANT_POWER_FAULT == 1
        return 7;
#elif CONSTANT_POWER_FAULT == 2
        *joules_out = NAN;
#else
        *joules_out = -1.0;
#endif
    }
#endif
    return 0;
}
#endif

void replay_energy_probe_close(void *handle) { free(handle); }

/* Optional: the value changes continuously, so any window is long enough. */
double replay_energy_probe_update_period_s(void) { return 1e-6; }
