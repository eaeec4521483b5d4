/*
 * replay_energy_probe.h: the C ABI of replay's `plugin:` energy probes.
 *
 * A plugin is a shared library (`--energy plugin:/path/libmy_probe.so [CONFIG]`) exporting the
 * functions below with C linkage. Write it in C, C++ (the declarations are `extern "C"`) or
 * Rust (`#[no_mangle] pub extern "C" fn ...`, crate-type cdylib).
 *
 * replay loads the library, checks replay_energy_probe_abi_version() equals the version it
 * speaks, resolves every required symbol (a missing one is an error naming it), then:
 *
 *   handle = replay_energy_probe_open(config);         once; NULL means failure
 *   replay_energy_probe_read_joules(handle, &joules);  any number of times, same thread
 *   replay_energy_probe_close(handle);                 once, then the library is unloaded
 *
 * All calls come from the thread that opened the probe; a plugin needs no locking unless it
 * starts threads of its own.
 */
#ifndef REPLAY_ENERGY_PROBE_H
#define REPLAY_ENERGY_PROBE_H

#include <stdint.h>

/* Bumped on any incompatible change; replay rejects a plugin reporting another version. */
#define REPLAY_ENERGY_PROBE_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Required. Return REPLAY_ENERGY_PROBE_ABI_VERSION (the value this header had when the plugin
 * was built). Called first, before anything else. */
uint32_t replay_energy_probe_abi_version(void);

/* Required. A short static name for reports ("constant-power", "ina260"); may return NULL.
 * replay copies the string; it must stay valid until the library is unloaded. */
const char *replay_energy_probe_name(void);

/* Required. Open the probe. `config` is the text after the library's path in the --energy
 * value (never NULL; "" when none was given). Return an opaque handle, or NULL on failure
 * (replay reports that open failed; print the reason to stderr). */
void *replay_energy_probe_open(const char *config);

/* Required. Store the cumulative energy in joules since any fixed origin (for instance the
 * call to open) in *joules_out. The value must never decrease. Return 0 on success, any other
 * value on failure (replay reports the code). */
int replay_energy_probe_read_joules(void *handle, double *joules_out);

/* Required. Release the handle. Called exactly once per successful open. */
void replay_energy_probe_close(void *handle);

/* Optional (replay looks it up, and does not mind its absence). The seconds between updates
 * of the value read_joules returns; replay sizes measurement windows to at least 100 of them.
 * Without it replay assumes 0.01 s. */
double replay_energy_probe_update_period_s(void);

#ifdef __cplusplus
}
#endif

#endif /* REPLAY_ENERGY_PROBE_H */
