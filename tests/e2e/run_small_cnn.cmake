# SPDX-License-Identifier: Apache-2.0
# Compiles the small CNN for vnpu, runs it with epctx-run (through the
# emulator on cross builds) and compares the output with the reference.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/out)
execute_process(COMMAND ${COMPILE} ${CASE}/model.onnx -o ${WORK}/cnn_ctx.onnx --quiet
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "epctx-compile failed (${rc})")
endif()
execute_process(COMMAND ${EMULATOR} ${RUN} ${WORK}/cnn_ctx.onnx --input x=${CASE}/input_0.npy
  --output-dir ${WORK}/out --repeat 3 RESULT_VARIABLE rc OUTPUT_VARIABLE out)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "epctx-run failed (${rc})")
endif()
if(NOT out MATCHES "session create: .* ms, first run: .* ms, median run")
  message(FATAL_ERROR "epctx-run did not print its timings")
endif()
execute_process(COMMAND ${EMULATOR} ${CHECK} ${WORK}/out/probs.npy ${CASE}/expected_0.npy
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "epctx-run output differs from the reference")
endif()
