/* Reflex C API (libreflex.so): embed the diagnosis engine in any program.
 *
 *   reflex_engine* e = NULL;
 *   if (reflex_engine_open("kb/", "topology.json", NULL, &e) != REFLEX_OK) {
 *     fprintf(stderr, "%s\n", reflex_last_error());
 *   }
 *   reflex_feed_envelope(e, line, strlen(line));   // interfaces.md §4 envelopes
 *   reflex_flush(e);                               // end of input
 *   char* json;
 *   while (reflex_poll(e, &json) == REFLEX_OK && json) { puts(json); reflex_free(json); }
 *   reflex_engine_close(e);
 *
 * Conventions
 * - Every function returns a reflex_status; no C++ exception ever crosses
 *   this boundary. On failure, reflex_last_error() gives a message for the
 *   calling thread (valid until that thread's next Reflex call).
 * - Strings returned through `char**` are NUL-terminated JSON (interfaces.md §5 for
 *   diagnoses) allocated by Reflex: release them with reflex_free().
 * - Thread safety: one reflex_engine may be used from any number of threads
 *   at once (feeding, ticking, polling, reloading, reading stats); calls are
 *   serialised inside the engine. A callback runs on the thread whose call
 *   produced the diagnosis, outside the engine's lock, so it may call back
 *   into the engine. reflex_engine_close() must not race with other calls
 *   on the same engine. Different engines are independent.
 */
#ifndef REFLEX_REFLEX_H
#define REFLEX_REFLEX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define REFLEX_API __attribute__((visibility("default")))
#else
#define REFLEX_API
#endif

typedef enum reflex_status {
  REFLEX_OK = 0,
  REFLEX_ERR_INVALID_ARGUMENT = 1, /* NULL handle/pointer, bad option value */
  REFLEX_ERR_KB = 2,               /* knowledge base missing, invalid or incompatible */
  REFLEX_ERR_TOPOLOGY = 3,         /* topology file missing or invalid */
  REFLEX_ERR_IO = 4,               /* unreadable bundle or file */
  REFLEX_ERR_NO_MEMORY = 5,
  REFLEX_ERR_INTERNAL = 6
} reflex_status;

typedef struct reflex_engine reflex_engine;

typedef struct reflex_options {
  double settle_s;      /* late-evidence window after a symptom; <= 0: default (60) */
  double clock_skew_s;  /* tolerance between different clocks; < 0: default (2) */
  int strict_transport; /* nonzero: syslog text tagged "kernel:" is not a kernel line */
} reflex_options;

/* Called with one diagnosis (JSON, one line) per incident revision. The string
 * is only valid during the call. */
typedef void (*reflex_diagnosis_fn)(const char* json, void* user);

REFLEX_API const char* reflex_version(void);
REFLEX_API const char* reflex_status_name(reflex_status s);
/* The message of the calling thread's last failed call ("" when none). */
REFLEX_API const char* reflex_last_error(void);
REFLEX_API void reflex_free(void* p);

/* kb_path: .rfx sources (file or directory) or a built artifact.
 * topology_path: topology.json, or NULL for an empty topology.
 * options: NULL for defaults. */
REFLEX_API reflex_status reflex_engine_open(const char* kb_path, const char* topology_path,
                                            const reflex_options* options, reflex_engine** out);
REFLEX_API void reflex_engine_close(reflex_engine* e);

/* Diagnoses go to the callback when one is set (NULL unsets), else queue for
 * reflex_poll(). */
REFLEX_API reflex_status reflex_set_callback(reflex_engine* e, reflex_diagnosis_fn fn, void* user);
/* *json_out = next queued diagnosis (free with reflex_free), or NULL when none. */
REFLEX_API reflex_status reflex_poll(reflex_engine* e, char** json_out);

/* One envelope (interfaces.md §4). Bad lines are counted and skipped (REFLEX_OK). */
REFLEX_API reflex_status reflex_feed_envelope(reflex_engine* e, const char* line, size_t len);
/* One raw log line of a known host; source: "kernel", "syslog", "journal", "app". */
REFLEX_API reflex_status reflex_feed_line(reflex_engine* e, const char* host, const char* source,
                                          const char* line, size_t len);
/* One line of `reflex events` JSONL. */
REFLEX_API reflex_status reflex_feed_event_json(reflex_engine* e, const char* json, size_t len);
/* A whole incident bundle (interfaces.md §3). */
REFLEX_API reflex_status reflex_read_bundle(reflex_engine* e, const char* dir);

/* Real-time progress for quiet streams (diagnoses incidents whose settle
 * window has passed in wall-clock time). */
REFLEX_API reflex_status reflex_tick(reflex_engine* e);
/* End of input: diagnose every open incident. */
REFLEX_API reflex_status reflex_flush(reflex_engine* e);
/* Batch: every incident in everything fed so far, as one interfaces.md §5 document
 * (with "incidents" when there are several). Free with reflex_free. */
REFLEX_API reflex_status reflex_diagnose_all(reflex_engine* e, char** json_out);

/* Hot reload; NULL keeps that part. A failed reload keeps the old ones and
 * reflex_last_error() says why. */
REFLEX_API reflex_status reflex_reload(reflex_engine* e, const char* kb_path,
                                       const char* topology_path);

/* Counters as a JSON object (events, symptoms, incidents_opened,
 * diagnoses_emitted, revisions, reloads, failed_reloads, lines,
 * skipped_lines, ...). Free with reflex_free. */
REFLEX_API reflex_status reflex_stats_json(reflex_engine* e, char** json_out);

#ifdef __cplusplus
}
#endif

#endif /* REFLEX_REFLEX_H */
