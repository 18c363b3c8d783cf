/* SPDX-License-Identifier: Apache-2.0 */
/* A PAL that does nothing, so the size report counts the runtime and not an
 * OS layer (boards bring their own PAL; the POSIX one is not measured). */
#include <epctx/pal.h>

#include <stddef.h>

static int none(char* msg, size_t cap) {
  if (cap) msg[0] = '\0';
  return EPCTX_NOT_IMPLEMENTED;
}
int epctx_pal_map_file(const char* p, int m, epctx_pal_region* o, char* msg, size_t cap) {
  (void)p, (void)m, (void)o;
  return none(msg, cap);
}
int epctx_pal_read_file(const char* p, uint64_t m, epctx_pal_region* o, char* msg, size_t cap) {
  (void)p, (void)m, (void)o;
  return none(msg, cap);
}
int epctx_pal_map_file_beneath(const char* b, const char* p, int m, epctx_pal_region* o, char* msg,
                               size_t cap) {
  (void)b, (void)p, (void)m, (void)o;
  return none(msg, cap);
}
int epctx_pal_map_fd(int fd, uint64_t off, uint64_t len, int m, epctx_pal_region* o, char* msg,
                     size_t cap) {
  (void)fd, (void)off, (void)len, (void)m, (void)o, (void)msg, (void)cap;
  return EPCTX_NOT_IMPLEMENTED;
}
void epctx_pal_unmap(epctx_pal_region* r) { (void)r; }
int epctx_pal_file_id_beneath(const char* b, const char* p, epctx_pal_file_id* o, char* msg,
                              size_t cap) {
  (void)b, (void)p, (void)o;
  return none(msg, cap);
}
void epctx_pal_advise(const epctx_pal_region* r, uint64_t o, uint64_t s, int a) {
  (void)r, (void)o, (void)s, (void)a;
}
void* epctx_pal_alloc(size_t size, size_t alignment) {
  (void)size, (void)alignment;
  return NULL;
}
void epctx_pal_free(void* p) { (void)p; }
uint64_t epctx_pal_now_ns(void) { return 0; }
void epctx_pal_log(int level, const char* message) { (void)level, (void)message; }
epctx_pal_mutex* epctx_pal_mutex_create(void) { return NULL; }
void epctx_pal_mutex_destroy(epctx_pal_mutex* m) { (void)m; }
void epctx_pal_mutex_lock(epctx_pal_mutex* m) { (void)m; }
void epctx_pal_mutex_unlock(epctx_pal_mutex* m) { (void)m; }
uint32_t epctx_pal_cpu_count(void) { return 1; }
epctx_pal_thread* epctx_pal_thread_start(void (*fn)(void*), void* arg) {
  (void)fn, (void)arg;
  return NULL;
}
void epctx_pal_thread_join(epctx_pal_thread* t) { (void)t; }
epctx_pal_cond* epctx_pal_cond_create(void) { return NULL; }
void epctx_pal_cond_destroy(epctx_pal_cond* c) { (void)c; }
void epctx_pal_cond_wait(epctx_pal_cond* c, epctx_pal_mutex* m) { (void)c, (void)m; }
void epctx_pal_cond_broadcast(epctx_pal_cond* c) { (void)c; }
int epctx_pal_counter_read(const char* s, const char* n, uint64_t* v, int* f, char* msg,
                           size_t cap) {
  (void)s, (void)n, (void)v, (void)f;
  return none(msg, cap);
}
int epctx_pal_counter_write(const char* s, const char* n, uint64_t v, char* msg, size_t cap) {
  (void)s, (void)n, (void)v;
  return none(msg, cap);
}
int epctx_pal_library_open(const char* p, void** h, char* msg, size_t cap) {
  (void)p;
  *h = NULL;
  return none(msg, cap);
}
void* epctx_pal_library_symbol(void* h, const char* n) {
  (void)h, (void)n;
  return NULL;
}
void epctx_pal_library_close(void* h) { (void)h; }
