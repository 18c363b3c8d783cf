// SPDX-License-Identifier: Apache-2.0
// The POSIX PAL's threads: pthreads, and the core count from the affinity
// mask (what a taskset or cgroup cpuset leaves this process), not the
// machine's, so a pool never starts more threads than may run at once.
#include <epctx/pal.h>

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

extern "C" {

uint32_t epctx_pal_cpu_count(void) {
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<uint32_t>(n);
  }
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<uint32_t>(n) : 1u;
}

struct epctx_pal_thread {
  pthread_t t;
  void (*fn)(void*);
  void* arg;
};

static void* thread_main(void* p) {
  epctx_pal_thread* t = static_cast<epctx_pal_thread*>(p);
  t->fn(t->arg);
  return nullptr;
}

epctx_pal_thread* epctx_pal_thread_start(void (*fn)(void*), void* arg) {
  epctx_pal_thread* t = static_cast<epctx_pal_thread*>(malloc(sizeof(epctx_pal_thread)));
  if (!t) return nullptr;
  t->fn = fn;
  t->arg = arg;
  if (pthread_create(&t->t, nullptr, thread_main, t) != 0) {
    free(t);
    return nullptr;
  }
  return t;
}

void epctx_pal_thread_join(epctx_pal_thread* t) {
  if (!t) return;
  pthread_join(t->t, nullptr);
  free(t);
}

struct epctx_pal_mutex {
  pthread_mutex_t m;
};

epctx_pal_mutex* epctx_pal_mutex_create(void) {
  epctx_pal_mutex* m = static_cast<epctx_pal_mutex*>(malloc(sizeof(epctx_pal_mutex)));
  if (m && pthread_mutex_init(&m->m, nullptr) != 0) {
    free(m);
    return nullptr;
  }
  return m;
}
void epctx_pal_mutex_destroy(epctx_pal_mutex* m) {
  if (!m) return;
  pthread_mutex_destroy(&m->m);
  free(m);
}
void epctx_pal_mutex_lock(epctx_pal_mutex* m) { pthread_mutex_lock(&m->m); }
void epctx_pal_mutex_unlock(epctx_pal_mutex* m) { pthread_mutex_unlock(&m->m); }

struct epctx_pal_cond {
  pthread_cond_t c;
};

epctx_pal_cond* epctx_pal_cond_create(void) {
  epctx_pal_cond* c = static_cast<epctx_pal_cond*>(malloc(sizeof(epctx_pal_cond)));
  if (c && pthread_cond_init(&c->c, nullptr) != 0) {
    free(c);
    return nullptr;
  }
  return c;
}

void epctx_pal_cond_destroy(epctx_pal_cond* c) {
  if (!c) return;
  pthread_cond_destroy(&c->c);
  free(c);
}

void epctx_pal_cond_wait(epctx_pal_cond* c, epctx_pal_mutex* m) { pthread_cond_wait(&c->c, &m->m); }
void epctx_pal_cond_broadcast(epctx_pal_cond* c) { pthread_cond_broadcast(&c->c); }

}  // extern "C"
