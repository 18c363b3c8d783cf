// SPDX-License-Identifier: Apache-2.0
// Reference outputs for the real models, from ONNX Runtime (onnxruntime-node,
// CPU execution provider).
//
// usage: node ort_reference.js CACHE_DIR
// Reads CACHE_DIR/models/<name>.onnx (fetch_models.sh puts them there),
// feeds each a seeded random input of a fixed shape and writes
// CACHE_DIR/ref/<name>/{input_0.npy, expected_<i>.npy, manifest.txt} in the
// manifest format of tests/models/generate.py, plus `input_shape` lines (the
// --input-shape arguments epctx-compile needs for symbolic dimensions), and
// CACHE_DIR/ref/cases.txt.
'use strict';
const fs = require('fs');
const path = require('path');
const npy = require('./npy.js');

const cacheDir = process.argv[2];
if (!cacheDir) {
  console.error('usage: node ort_reference.js CACHE_DIR');
  process.exit(2);
}
const ort = require(path.resolve(cacheDir, 'node_modules', 'onnxruntime-node'));

// name, input name, fixed shape, value range of the random input.
// Shapes: melspectrogram takes 1280 samples (80 ms at 16 kHz) of int16-scale
// audio; embedding_model takes 76 mel frames x 32 bins; hello_deepa 25
// embeddings x 96 (already static); the PaddleOCR classifier its 48x192
// text-line crop; the detector a 640x640 image. hello_deepa's sigmoid
// saturates at 0.9987 for inputs beyond +-0.1, so its inputs stay small where
// the output still depends on them. The detector answers ~0 everywhere on
// noise, so it gets a synthetic page of dark glyph-like blocks in text lines
// (normalised like PaddleOCR's preprocessing, about -1.8 ink / 1.9 paper).
const MODELS = [
  { name: 'melspectrogram', input: 'input', shape: [1, 1280], lo: -4000, hi: 4000 },
  { name: 'embedding_model', input: 'input_1', shape: [1, 76, 32, 1], lo: -2, hi: 2 },
  { name: 'hello_deepa', input: 'onnx::Flatten_0', shape: [1, 25, 96], lo: -0.01, hi: 0.01, fixed: true },
  { name: 'ocr_cls', input: 'x', shape: [1, 3, 48, 192], lo: -1, hi: 1 },
  { name: 'ocr_det', input: 'x', shape: [1, 3, 640, 640], lo: -0.1, hi: 0.1, page: true },
];

// Adds the text page to noise already in data (NCHW, N = 1).
function drawPage(data, shape) {
  const [, c, h, w] = shape;
  for (let ch = 0; ch < c; ch++) {
    for (let y = 0; y < h; y++) {
      const line = Math.floor(y / 40);
      const inLine = y % 40 >= 12 && y % 40 < 28;
      for (let x = 0; x < w; x++) {
        const glyph = Math.floor(x / 14) % 3 !== 2 && (x * 7 + y * 3 + line * 11) % 9 < 6;
        const ink = inLine && glyph && x > 40 && x < w - 40;
        data[(ch * h + y) * w + x] += ink ? -1.8 : 1.9;
      }
    }
  }
}

// mulberry32: a small, well-known 32-bit PRNG, so the inputs are identical
// on every machine and Node version.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function seedOf(name) {
  let h = 2166136261;
  for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return h;
}

async function main() {
  const refDir = path.join(cacheDir, 'ref');
  fs.mkdirSync(refDir, { recursive: true });
  for (const m of MODELS) {
    const modelPath = path.join(cacheDir, 'models', `${m.name}.onnx`);
    const session = await ort.InferenceSession.create(modelPath, {
      executionProviders: ['cpu'], graphOptimizationLevel: 'all',
    });
    if (!session.inputNames.includes(m.input)) {
      throw new Error(`${modelPath}: no input '${m.input}' (has ${session.inputNames.join(', ')})`);
    }
    const count = m.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(count);
    const next = rng(seedOf(m.name));
    for (let i = 0; i < count; i++) data[i] = m.lo + (m.hi - m.lo) * next();
    if (m.page) drawPage(data, m.shape);
    const t0 = process.hrtime.bigint();
    const outputs = await session.run({ [m.input]: new ort.Tensor('float32', data, m.shape) });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;

    const dir = path.join(refDir, m.name);
    fs.mkdirSync(dir, { recursive: true });
    npy.save(path.join(dir, 'input_0.npy'), 'float32', m.shape, data);
    session.outputNames.forEach((name, i) => {
      const t = outputs[name];
      npy.save(path.join(dir, `expected_${i}.npy`), t.type, t.dims, t.data);
    });
    fs.writeFileSync(path.join(dir, 'manifest.txt'), [
      `case ${m.name}`,
      `inputs ${m.input}`,
      `outputs ${session.outputNames.join(' ')}`,
      // Only symbolic inputs need a shape; hello_deepa's is already static.
      m.fixed ? '' : `input_shape ${m.input}:${m.shape.join(',')}`,
      '',
    ].join('\n'));
    const dims = session.outputNames.map((n) => `${n}[${outputs[n].dims.join(',')}]`).join(' ');
    console.log(`${m.name}: ORT first run ${ms.toFixed(1)} ms -> ${dims}`);
  }
  fs.writeFileSync(path.join(refDir, 'cases.txt'), MODELS.map((m) => m.name).join('\n') + '\n');
}

main().catch((e) => {
  console.error(`ort_reference.js: error: ${e.message.split('\n')[0]}`);
  process.exit(1);
});
