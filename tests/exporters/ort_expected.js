// SPDX-License-Identifier: Apache-2.0
// Expected outputs of the exporter-pattern models from ONNX Runtime
// (onnxruntime-node 1.30, CPU execution provider).
//
// usage: node ort_expected.js ORT_CACHE_DIR CASE_DIR
// ORT_CACHE_DIR holds node_modules/onnxruntime-node (tests/real/fetch_models.sh
// puts it there); CASE_DIR is what generate.py wrote. For each case in
// CASE_DIR/ref/cases.txt: reads its inputs, runs the model, writes
// expected_<i>.npy beside them.
'use strict';
const fs = require('fs');
const path = require('path');
const { writeExpected } = require('../real/ort_case.js');

const [cacheDir, caseDir] = process.argv.slice(2);
if (!cacheDir || !caseDir) {
  console.error('usage: node ort_expected.js ORT_CACHE_DIR CASE_DIR');
  process.exit(2);
}
const ort = require(path.resolve(cacheDir, 'node_modules', 'onnxruntime-node'));

async function main() {
  const cases = fs.readFileSync(path.join(caseDir, 'ref', 'cases.txt'), 'utf8').split('\n')
    .filter((l) => l.length);
  for (const name of cases) {
    const dir = path.join(caseDir, 'ref', name);
    const manifest = fs.readFileSync(path.join(dir, 'manifest.txt'), 'utf8').split('\n');
    const field = (k) => manifest.find((l) => l.startsWith(k + ' ')).slice(k.length + 1).split(' ');
    const inputs = field('inputs');
    const outputs = field('outputs');
    const shapes = await writeExpected(ort, path.join(caseDir, 'models', `${name}.onnx`), dir, inputs, outputs);
    console.log(`${name}: ${shapes}`);
  }
}

main().catch((e) => {
  console.error(`ort_expected.js: error: ${e.message.split('\n')[0]}`);
  process.exit(1);
});
