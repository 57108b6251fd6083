/* Embedding Reflex from C: diagnose an incident bundle, then stream the same
 * kind of input as envelopes. Build: see examples/CMakeLists.txt, or
 *   cc main.c $(pkg-config --cflags --libs reflex)
 * Usage: embed_c KB BUNDLE [ENVELOPES.jsonl]
 */
#include <reflex/reflex.h>
#include <stdio.h>
#include <string.h>

static void on_diagnosis(const char* json, void* user) {
  int* count = (int*)user;
  ++*count;
  printf("streamed diagnosis: %s\n", json);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s KB BUNDLE [ENVELOPES.jsonl]\n", argv[0]);
    return 2;
  }
  char topo[4096];
  snprintf(topo, sizeof topo, "%s/topology.json", argv[2]);

  reflex_engine* e = NULL;
  reflex_options opts = {60.0, -1.0, 0}; /* settle 60 s, default skew */
  reflex_status st = reflex_engine_open(argv[1], topo, &opts, &e);
  if (st != REFLEX_OK) {
    fprintf(stderr, "reflex_engine_open: %s: %s\n", reflex_status_name(st), reflex_last_error());
    return 1;
  }
  printf("reflex %s\n", reflex_version());

  /* Batch: the whole bundle, then every incident as one JSON document. */
  if (reflex_read_bundle(e, argv[2]) != REFLEX_OK) {
    fprintf(stderr, "reflex_read_bundle: %s\n", reflex_last_error());
    reflex_engine_close(e);
    return 1;
  }
  char* json = NULL;
  if (reflex_diagnose_all(e, &json) != REFLEX_OK) {
    fprintf(stderr, "reflex_diagnose_all: %s\n", reflex_last_error());
    reflex_engine_close(e);
    return 1;
  }
  printf("diagnosis: %s\n", json);
  reflex_free(json);

  /* Streaming: envelopes in, diagnoses out through the callback. */
  int streamed = 0;
  reflex_set_callback(e, on_diagnosis, &streamed);
  if (argc > 3) {
    FILE* f = fopen(argv[3], "r");
    if (!f) {
      fprintf(stderr, "cannot open %s\n", argv[3]);
      reflex_engine_close(e);
      return 1;
    }
    char line[65536];
    while (fgets(line, sizeof line, f)) reflex_feed_envelope(e, line, strlen(line));
    fclose(f);
  }
  reflex_flush(e);

  char* stats = NULL;
  if (reflex_stats_json(e, &stats) == REFLEX_OK) {
    printf("stats: %s\n", stats);
    reflex_free(stats);
  }
  reflex_engine_close(e);
  printf("streamed %d diagnosis revision(s)\n", streamed);
  return 0;
}
