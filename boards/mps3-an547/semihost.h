/* SPDX-License-Identifier: Apache-2.0 */
// Arm semihosting (the debugger's or QEMU's console and exit), the board's
// only I/O. Direct calls: newlib's rdimon layer is not used (under QEMU its
// heap setup breaks printf).
#ifndef EPCTX_BOARD_SEMIHOST_H
#define EPCTX_BOARD_SEMIHOST_H

#ifdef __cplusplus
extern "C" {
#endif

/* Writes a NUL-terminated string to the host console (SYS_WRITE0). */
void semihost_write(const char* text);
/* Ends the program: status 0 exits QEMU with 0, anything else with 1. */
__attribute__((noreturn)) void semihost_exit(int status);

#ifdef __cplusplus
}
#endif
#endif
