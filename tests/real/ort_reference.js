// SPDX-License-Identifier: Apache-2.0
// Reference outputs for the real models, from ONNX Runtime (onnxruntime-node,
// CPU execution provider).
//
// usage: node ort_reference.js CACHE_DIR [ZOO_DIR ZOO.json [NAME,NAME...]]
// Reads CACHE_DIR/models/<name>.onnx (fetch_models.sh puts them there),
// feeds each a seeded random input of a fixed shape and writes
// CACHE_DIR/ref/<name>/{input_0.npy, expected_<i>.npy, manifest.txt} in the
// manifest format of tests/models/generate.py, plus `input_shape` lines (the
// --input-shape arguments epctx-compile needs for symbolic dimensions), and
// CACHE_DIR/ref/cases.txt.
// With ZOO_DIR and ZOO.json (the model zoo, tests/bench/zoo, made by its
// make_zoo.sh): the models of ZOO.json (all, or the NAMEs given), read from
// ZOO_DIR/models, get their references in ZOO_DIR/ref the same way. An entry's input defaults to "input", float32
// in [-1, 1] (dtype int64 draws integers in [lo, hi)); its input_shape line
// is written only when the model's input is symbolic, and min_vnpu_share.txt
// (test_real_models' floor of MACs on vnpu) when the entry has min_vnpu_share.
'use strict';
const fs = require('fs');
const path = require('path');
const npy = require('./npy.js');

const cacheDir = process.argv[2];
const zooDir = process.argv[3];
const zooJson = process.argv[4];
const zooNames = process.argv[5] ? process.argv[5].split(',').filter((n) => n) : null;
if (!cacheDir || (zooDir && !zooJson)) {
  console.error('usage: node ort_reference.js CACHE_DIR [ZOO_DIR ZOO.json [NAME,NAME...]]');
  process.exit(2);
}

// The zoo's entries in the form of REAL_MODELS, each with its model path.
function zooModels() {
  const all = JSON.parse(fs.readFileSync(zooJson, 'utf8')).models;
  for (const n of zooNames || []) {
    if (!all.some((m) => m.name === n)) throw new Error(`${zooJson}: no model '${n}'`);
  }
  return all.filter((m) => !zooNames || zooNames.includes(m.name)).map((m) => ({
    name: m.name,
    input: m.input || 'input',
    dtype: m.dtype || 'float32',
    shape: m.shape,
    lo: m.lo === undefined ? -1 : m.lo,
    hi: m.hi === undefined ? 1 : m.hi,
    fixed: !m.symbolic,
    family: m.family,
    scheme: m.scheme,
    minVnpuShare: m.min_vnpu_share,
    atolSteps: m.atol_steps,
    atol: m.atol,
    path: path.join(zooDir, 'models', `${m.name}.onnx`),
  }));
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
// Silero VAD (v5, v6 and legacy) takes a 32 ms chunk of 16 kHz audio (512
// samples), its recurrent state and the sample rate: `more` lists inputs
// after the first, each drawn the same way (value: a constant). sr stays a
// graph input, so the If on it stays and its bodies are compiled.
const SILERO_AUDIO = { input: 'input', shape: [1, 512], lo: -0.5, hi: 0.5 };
const SR_16K = { input: 'sr', dtype: 'int64', shape: [], value: 16000, fixed: true };
const REAL_MODELS = [
  { name: 'melspectrogram', input: 'input', shape: [1, 1280], lo: -4000, hi: 4000 },
  { name: 'embedding_model', input: 'input_1', shape: [1, 76, 32, 1], lo: -2, hi: 2 },
  { name: 'hello_deepa', input: 'onnx::Flatten_0', shape: [1, 25, 96], lo: -0.01, hi: 0.01, fixed: true },
  { name: 'ocr_cls', input: 'x', shape: [1, 3, 48, 192], lo: -1, hi: 1 },
  { name: 'ocr_det', input: 'x', shape: [1, 3, 640, 640], lo: -0.1, hi: 0.1, page: true },
  { name: 'silero_vad_v5', ...SILERO_AUDIO,
    more: [{ input: 'state', shape: [2, 1, 128], lo: -0.5, hi: 0.5 }, SR_16K] },
  { name: 'silero_vad_v6', ...SILERO_AUDIO,
    more: [{ input: 'state', shape: [2, 1, 128], lo: -0.5, hi: 0.5 }, SR_16K] },
  { name: 'silero_vad_legacy', ...SILERO_AUDIO,
    more: [SR_16K, { input: 'h', shape: [2, 1, 64], lo: -0.5, hi: 0.5 },
      { input: 'c', shape: [2, 1, 64], lo: -0.5, hi: 0.5 }] },
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
  const MODELS = zooDir ? zooModels() : REAL_MODELS;
  const refDir = path.join(zooDir || cacheDir, 'ref');
  fs.mkdirSync(refDir, { recursive: true });
  for (const m of MODELS) {
    const modelPath = m.path || path.join(cacheDir, 'models', `${m.name}.onnx`);
    // Statically quantised zoo models: ORT unoptimised runs every QDQ node as
    // the ONNX spec defines it; optimised, it fuses them into u8s8 kernels
    // that saturate on x86-64 CPUs without VNNI (tests/int8/ort_int8.js).
    // The dynamic one comes with <name>.reference.onnx (gen_quant_models.py):
    // its MatMulIntegers as float ops, which ORT runs unoptimised; fused or
    // not, ORT's own MatMulInteger saturates there (0.09 off).
    const refPath = zooDir && path.join(zooDir, 'models', `${m.name}.reference.onnx`);
    const hasRef = refPath && fs.existsSync(refPath);
    const exact = hasRef || (m.family === 'int8' && m.scheme === 'static');
    const session = await ort.InferenceSession.create(hasRef ? refPath : modelPath, {
      executionProviders: ['cpu'], graphOptimizationLevel: exact ? 'disabled' : 'all',
    });
    // The first input, then `more`, each drawn from the model's seed in turn.
    const specs = [{ input: m.input, dtype: m.dtype, shape: m.shape, lo: m.lo, hi: m.hi,
      fixed: m.fixed, page: m.page }].concat(m.more || []);
    const next = rng(seedOf(m.name));
    const feeds = {};
    const inputs = specs.map((sp) => {
      if (!session.inputNames.includes(sp.input)) {
        throw new Error(`${modelPath}: no input '${sp.input}' (has ${session.inputNames.join(', ')})`);
      }
      const count = sp.shape.reduce((a, b) => a * b, 1);
      const dtype = sp.dtype || 'float32';
      if (dtype !== 'float32' && dtype !== 'int64') throw new Error(`${m.name}: dtype ${dtype}`);
      const data = dtype === 'int64' ? new BigInt64Array(count) : new Float32Array(count);
      const lo = sp.lo === undefined ? -1 : sp.lo, hi = sp.hi === undefined ? 1 : sp.hi;
      for (let i = 0; i < count; i++) {
        const v = sp.value !== undefined ? sp.value : lo + (hi - lo) * next();
        data[i] = dtype === 'int64' ? BigInt(Math.floor(v)) : v;
      }
      if (sp.page) drawPage(data, sp.shape);
      feeds[sp.input] = new ort.Tensor(dtype, data, sp.shape);
      return { ...sp, dtype, data };
    });
    const t0 = process.hrtime.bigint();
    const outputs = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;

    const dir = path.join(refDir, m.name);
    fs.mkdirSync(dir, { recursive: true });
    inputs.forEach((sp, i) => npy.save(path.join(dir, `input_${i}.npy`), sp.dtype, sp.shape, sp.data));
    session.outputNames.forEach((name, i) => {
      const t = outputs[name];
      npy.save(path.join(dir, `expected_${i}.npy`), t.type, t.dims, t.data);
    });
    fs.writeFileSync(path.join(dir, 'manifest.txt'), [
      `case ${m.name}`,
      `inputs ${inputs.map((sp) => sp.input).join(' ')}`,
      `outputs ${session.outputNames.join(' ')}`,
      // Only symbolic inputs need a shape; hello_deepa's is already static.
      ...inputs.filter((sp) => !sp.fixed).map((sp) => `input_shape ${sp.input}:${sp.shape.join(',')}`),
      '',
    ].join('\n'));
    // An int8 model's tolerance (README of tests/bench/zoo): atol_steps
    // steps of its output's quantisation, the smallest gap between two of
    // ORT's output values, or an absolute atol; test_real_models reads it.
    const atolFile = path.join(dir, 'atol.txt');
    let atol = m.atol;
    if (m.atolSteps !== undefined) {
      const v = Array.from(outputs[session.outputNames[0]].data).sort((a, b) => a - b);
      let gap = Infinity;
      for (let i = 1; i < v.length; i++) if (v[i] > v[i - 1]) gap = Math.min(gap, v[i] - v[i - 1]);
      if (!Number.isFinite(gap)) throw new Error(`${m.name}: constant output, no quantisation step`);
      atol = m.atolSteps * gap;
    }
    if (atol !== undefined) fs.writeFileSync(atolFile, `${atol}\n`);
    else if (fs.existsSync(atolFile)) fs.unlinkSync(atolFile);
    // test_real_models' floor for a model that cannot reach 90% on vnpu yet.
    const floorFile = path.join(dir, 'min_vnpu_share.txt');
    if (m.minVnpuShare !== undefined) fs.writeFileSync(floorFile, `${m.minVnpuShare}\n`);
    else if (fs.existsSync(floorFile)) fs.unlinkSync(floorFile);
    const dims = session.outputNames.map((n) => `${n}[${outputs[n].dims.join(',')}]`).join(' ');
    console.log(`${m.name}: ORT first run ${ms.toFixed(1)} ms -> ${dims}`);
  }
  // The zoo's references are made in parts (CI's quick subset, the rest):
  // cases.txt lists every model that has one.
  const cases = zooDir
    ? fs.readdirSync(refDir).filter((n) => fs.existsSync(path.join(refDir, n, 'manifest.txt'))).sort()
    : MODELS.map((m) => m.name);
  fs.writeFileSync(path.join(refDir, 'cases.txt'), cases.join('\n') + '\n');
}

main().catch((e) => {
  console.error(`ort_reference.js: error: ${e.message.split('\n')[0]}`);
  process.exit(1);
});
