// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime's outputs for the quantised test models (onnxruntime-node
// 1.30 from the tests/real cache, CPU execution provider), with ORT's graph
// optimisations off: every node runs as the ONNX spec defines it, QDQ groups
// as float ops between exact quantise/dequantise steps. With them on, ORT
// fuses QDQ groups into its u8s8 int8 kernels, which on x86-64 CPUs without
// VNNI (AVX2 only) add pairs of u8 x s8 products in 16 bits (vpmaddubsw)
// and saturate: on such a machine its fused result differs from the ONNX
// result by up to 3 quantisation steps.
//
// usage: node ort_int8.js CACHE_DIR WORK_DIR
// For each case in WORK_DIR/cases.txt (gen_int8_models.py) reads
// <case>/model.onnx, <case>/manifest.txt and <case>/input_<i>.npy and writes
// <case>/expected_<i>.npy.
'use strict';
const fs = require('fs');
const path = require('path');
const { writeExpected } = require('../real/ort_case.js');

const [cacheDir, workDir] = process.argv.slice(2);
if (!cacheDir || !workDir) {
  console.error('usage: node ort_int8.js CACHE_DIR WORK_DIR');
  process.exit(2);
}
const ort = require(path.resolve(cacheDir, 'node_modules', 'onnxruntime-node'));

async function main() {
  const cases = fs.readFileSync(path.join(workDir, 'cases.txt'), 'utf8').split('\n').filter(Boolean);
  for (const name of cases) {
    const dir = path.join(workDir, name);
    const manifest = fs.readFileSync(path.join(dir, 'manifest.txt'), 'utf8');
    const inputs = manifest.match(/^inputs (.*)$/m)[1].split(' ');
    const outputs = manifest.match(/^outputs (.*)$/m)[1].split(' ');
    // Integer-GEMM ops (QLinearConv, MatMulInteger, ...) run ORT's u8s8
    // kernels even unoptimised: their cases have reference.onnx, the same
    // computation written as the float ops the spec defines them by.
    const ref = path.join(dir, 'reference.onnx');
    const model = fs.existsSync(ref) ? ref : path.join(dir, 'model.onnx');
    const shapes = await writeExpected(ort, model, dir, inputs, outputs, 'disabled');
    console.log(`${name}: ${shapes}`);
  }
}

main().catch((e) => {
  console.error(`ort_int8.js: error: ${e.message.split('\n')[0]}`);
  process.exit(1);
});
