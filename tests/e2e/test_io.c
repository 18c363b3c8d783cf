/* SPDX-License-Identifier: Apache-2.0 */
/* Whole-file reads and writes (see test_io.h). */
#include "test_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

unsigned char* tu_read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  unsigned char* buf = malloc(cap + 1);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    unsigned char* grown = realloc(buf, cap * 2 + 1);
    if (!grown) free(buf);
    buf = grown;
    cap *= 2;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (size) *size = n;
  return buf;
}

int tu_write_file(const char* path, const void* data, size_t size) {
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fwrite(data, 1, size, f) == size;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

int tu_file_exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}
