/* SPDX-License-Identifier: Apache-2.0 */
/* Reset and fault handling of the AN547 image: the vector table, the C
 * runtime setup (data copy, bss zero, constructors, FPU), then main(); its
 * return value becomes QEMU's exit status through semihosting. */
#include <stdint.h>
#include <string.h>

#include "semihost.h"

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);
int main(void);

#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)

__attribute__((noreturn)) void Reset_Handler(void) {
  /* CP10/CP11 full access: without it the first float instruction faults. */
  SCB_CPACR |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  memcpy(__data_start, __data_load, (size_t)((char*)__data_end - (char*)__data_start));
  memset(__bss_start, 0, (size_t)((char*)__bss_end - (char*)__bss_start));
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  semihost_exit(main());
}

__attribute__((noreturn)) static void Fault_Handler(void) {
  semihost_write("mps3-an547: FAIL: CPU fault (HardFault/MemManage/BusFault/UsageFault)\n");
  semihost_exit(1);
}

/* Initial SP, reset, then the fixed exceptions up to SysTick; no interrupts
 * are used. */
/* clang-format off */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))__stack_top, Reset_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler};
/* clang-format on */
