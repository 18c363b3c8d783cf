// SPDX-License-Identifier: Apache-2.0
// One model case through ONNX Runtime (onnxruntime-node, CPU execution
// provider, all graph optimisations): reads <dir>/input_<i>.npy for the
// named inputs, runs the model and writes <dir>/expected_<i>.npy for the
// named outputs. Shared by the scripts that make reference outputs
// (tests/exporters, tests/int8). Returns "name[dims] ..." for the log.
'use strict';
const path = require('path');
const npy = require('./npy.js');

async function writeExpected(ort, modelPath, dir, inputs, outputs, level = 'all') {
  const session = await ort.InferenceSession.create(modelPath,
    { executionProviders: ['cpu'], graphOptimizationLevel: level });
  const feeds = {};
  inputs.forEach((n, i) => {
    const t = npy.load(path.join(dir, `input_${i}.npy`));
    feeds[n] = new ort.Tensor(t.type, t.data, t.dims);
  });
  const result = await session.run(feeds);
  outputs.forEach((n, i) => {
    const t = result[n];
    npy.save(path.join(dir, `expected_${i}.npy`), t.type, t.dims, t.data);
  });
  return outputs.map((n) => `${n}[${result[n].dims.join(',')}]`).join(' ');
}

module.exports = { writeExpected };
