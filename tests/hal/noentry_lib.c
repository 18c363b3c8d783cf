/* SPDX-License-Identifier: Apache-2.0 */
/* A shared library that is not an epctx driver: it exports no entry point. */
__attribute__((visibility("default"))) int not_a_driver(void) { return 42; }
