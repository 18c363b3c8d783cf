// SPDX-License-Identifier: Apache-2.0
// Minimal .npy (version 1) reading and writing for float32/int64 tensors,
// used by ort_reference.js. Little-endian, C order.
'use strict';
const fs = require('fs');

const DESCR = { float32: '<f4', int64: '<i8', int32: '<i4', uint8: '|u1', bool: '|b1' };
const ARRAYS = { '<f4': Float32Array, '<i8': BigInt64Array, '<i4': Int32Array, '|u1': Uint8Array, '|b1': Uint8Array };

function save(path, type, dims, data) {
  const descr = DESCR[type];
  if (!descr) throw new Error(`npy.save ${path}: unsupported type ${type}`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
  dict = dict.padEnd(total - 10 - 1, ' ') + '\n';
  const head = Buffer.alloc(10);
  Buffer.from([0x93]).copy(head, 0);
  head.write('NUMPY', 1, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(dict.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(dict, 'latin1'), body]));
}

function load(path) {
  const buf = fs.readFileSync(path);
  if (buf[0] !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not .npy`);
  const major = buf[6];
  const len = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const off = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', off, off + len);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim())
    .filter((s) => s.length).map(Number);
  const Ctor = ARRAYS[descr];
  if (!Ctor) throw new Error(`${path}: unsupported dtype ${descr}`);
  const bytes = buf.subarray(off + len);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const type = Object.keys(DESCR).find((k) => DESCR[k] === descr);
  return { type, dims: shape, data: new Ctor(copy.buffer) };
}

module.exports = { save, load };
