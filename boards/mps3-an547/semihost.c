/* SPDX-License-Identifier: Apache-2.0 */
#include "semihost.h"

enum {
  kSysWrite0 = 0x04,
  kSysExit = 0x18,
  kAdpStoppedApplicationExit = 0x20026,     /* exit status 0 */
  kAdpStoppedRunTimeErrorUnknown = 0x20023, /* any other: QEMU exits with 1 */
};

static int semihost_call(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void semihost_write(const char* text) { semihost_call(kSysWrite0, text); }

void semihost_exit(int status) {
  /* On AArch32 SYS_EXIT takes the reason itself in r1, not a block. */
  semihost_call(kSysExit, (const void*)(status == 0 ? kAdpStoppedApplicationExit
                                                    : kAdpStoppedRunTimeErrorUnknown));
  for (;;) {
  }
}
