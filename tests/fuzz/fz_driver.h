/* tests/fuzz/fz_driver.h — main() of the standalone (non-libFuzzer) builds of the byte fuzzers
 * fuzz_pattern and fuzz_symbolic: each FILE argument is run once (a libFuzzer crash input, say);
 * without files, --count inputs made by gen from --seed. --verbose sets *verbose. */
#ifndef FZ_DRIVER_H
#define FZ_DRIVER_H
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FZ_MAX_INPUT (1 << 16)

/* input k (k = 0 first; the generator may keep state from one to the next) into buf; its length */
typedef size_t (*fz_gen_fn)(uint64_t seed, long k, uint8_t *buf, size_t cap);
typedef int (*fz_test_fn)(const uint8_t *data, size_t n);

static inline int fz_run_file(const char *path, fz_test_fn test_one) {
  FILE *f = fopen(path, "rb");
  if (!f) return perror(path), 1;
  static uint8_t buf[FZ_MAX_INPUT];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  return test_one(buf, n);
}

static inline int fz_driver(int argc, char **argv, const char *name, fz_test_fn test_one, fz_gen_fn gen, bool *verbose) {
  uint64_t seed = 1;
  long count = 10000, failures = 0, files = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--verbose")) *verbose = true;
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--count") && i + 1 < argc) count = strtol(argv[++i], NULL, 0);
    else files++, failures += fz_run_file(argv[i], test_one);
  }
  if (files) return failures ? 1 : 0;
  static uint8_t buf[FZ_MAX_INPUT];
  for (long k = 0; k < count; k++)
    if (test_one(buf, gen(seed, k, buf, sizeof buf))) {
      failures++;
      printf("  (input %ld of seed %" PRIu64 ")\n", k, seed);
    }
  printf("%s: %ld inputs, %ld failures\n", name, count, failures);
  return failures ? 1 : 0;
}
#endif
