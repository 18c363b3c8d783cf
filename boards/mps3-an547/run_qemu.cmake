# SPDX-License-Identifier: Apache-2.0
# Runs one AN547 image under QEMU (cmake -DQEMU=... -DIMAGE=... -P): the
# test passes when the image exits 0 and printed its PASS line. Output goes
# through semihosting to QEMU's stdout/stderr; no serial port, no monitor.
# The timeout only stops a hung image (an emulated fault loop); the run
# itself takes about a second.
execute_process(
  COMMAND ${QEMU} -M mps3-an547 -nographic -monitor none -serial null
          -semihosting-config enable=on,target=native -kernel ${IMAGE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 300)
message("${out}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${IMAGE}: qemu-system-arm exited with '${rc}'")
endif()
if(NOT out MATCHES "(^|\n)mps3-an547: PASS: ")
  message(FATAL_ERROR "${IMAGE}: no PASS line")
endif()
