# SPDX-License-Identifier: Apache-2.0
"""Numpy references for the ops the generated test models use.

Written from the ONNX operator definitions, independently of any runtime
(Debian's onnx 1.12 has no onnx.reference). Everything computes in float64;
callers cast the result to the model's output type.
"""
import numpy as np


def _pads4(pads):
    """ONNX pads [top, left, bottom, right] (2-D) or None."""
    return list(pads) if pads is not None else [0, 0, 0, 0]


def _windows(x, kernel, strides, pads, dilations, fill):
    """Pads NCHW x with `fill` and yields (kh, kw, view) where view[n, c, oh,
    ow] is the input element under kernel tap (kh, kw) for output (oh, ow)."""
    t, l, b, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=fill)
    kh_n, kw_n = kernel
    sh, sw = strides
    dh, dw = dilations
    oh = (xp.shape[2] - (dh * (kh_n - 1) + 1)) // sh + 1
    ow = (xp.shape[3] - (dw * (kw_n - 1) + 1)) // sw + 1
    for kh in range(kh_n):
        for kw in range(kw_n):
            h0, w0 = kh * dh, kw * dw
            view = xp[:, :, h0:h0 + sh * (oh - 1) + 1:sh, w0:w0 + sw * (ow - 1) + 1:sw]
            yield kh, kw, view
    return


def conv(x, w, b=None, strides=(1, 1), pads=None, dilations=(1, 1), group=1):
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    m, cg = w.shape[0], w.shape[1]
    mg = m // group
    out = None
    for kh, kw, view in _windows(x, w.shape[2:], strides, _pads4(pads), dilations, 0.0):
        parts = []
        for g in range(group):
            xs = view[:, g * cg:(g + 1) * cg]
            ws = w[g * mg:(g + 1) * mg, :, kh, kw]
            parts.append(np.einsum("nchw,mc->nmhw", xs, ws))
        tap = np.concatenate(parts, axis=1)
        out = tap if out is None else out + tap
    if b is not None:
        out = out + b.astype(np.float64).reshape(1, -1, 1, 1)
    return out


def max_pool(x, kernel, strides, pads=None):
    out = None
    for _, _, view in _windows(x.astype(np.float64), kernel, strides, _pads4(pads),
                               (1, 1), -np.inf):
        out = view.copy() if out is None else np.maximum(out, view)
    return out


def average_pool(x, kernel, strides, pads=None, count_include_pad=0):
    x = x.astype(np.float64)
    total = None
    count = None
    ones = np.ones_like(x)
    pads = _pads4(pads)
    for (_, _, view), (_, _, mask) in zip(
            _windows(x, kernel, strides, pads, (1, 1), 0.0),
            _windows(ones, kernel, strides, pads, (1, 1), 0.0)):
        total = view.copy() if total is None else total + view
        count = mask.copy() if count is None else count + mask
    if count_include_pad:
        return total / (kernel[0] * kernel[1])
    return total / count


def global_average_pool(x):
    return x.astype(np.float64).mean(axis=(2, 3), keepdims=True)


def gemm(a, b, c=None, alpha=1.0, beta=1.0, trans_a=0, trans_b=0):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    if trans_a:
        a = a.T
    if trans_b:
        b = b.T
    y = alpha * (a @ b)
    if c is not None:
        y = y + beta * c.astype(np.float64)
    return y


def softmax(x, axis=-1):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


def leaky_relu(x, alpha):
    x = x.astype(np.float64)
    return np.where(x >= 0, x, alpha * x)


def relu(x):
    return np.maximum(x.astype(np.float64), 0.0)


def flatten(x, axis):
    outer = int(np.prod(x.shape[:axis])) if axis > 0 else 1
    return x.reshape(outer, -1)


def loop(max_trips, cond, carried, body):
    """ONNX Loop: body(i, cond, *carried) -> (cond, carried..., scan outputs...).
    Returns the final carried values and the stacked scan outputs."""
    carried = list(carried)
    stacked = None
    i = 0
    while (max_trips is None or i < max_trips) and cond:
        out = body(i, cond, *carried)
        cond, carried, scans = out[0], list(out[1:1 + len(carried)]), out[1 + len(carried):]
        if stacked is None:
            stacked = [[] for _ in scans]
        for a, s in zip(stacked, scans):
            a.append(s)
        i += 1
    return carried, [np.stack(a) for a in (stacked or [])]


def scan(states, scan_inputs, body, in_axes=None, in_dirs=None, out_axes=None, out_dirs=None):
    """ONNX Scan (9+): body(*states, *slices) -> (states..., scan outputs...)."""
    m = len(scan_inputs)
    in_axes = in_axes or [0] * m
    in_dirs = in_dirs or [0] * m
    length = scan_inputs[0].shape[in_axes[0]]
    states = list(states)
    per_iter = []
    for t in range(length):
        slices = [np.take(x, length - 1 - t if d else t, axis=a)
                  for x, a, d in zip(scan_inputs, in_axes, in_dirs)]
        out = body(*states, *slices)
        states, ys = list(out[:len(states)]), out[len(states):]
        per_iter.append(ys)
    k = len(per_iter[0])
    out_axes = out_axes or [0] * k
    out_dirs = out_dirs or [0] * k
    stacked = []
    for j in range(k):
        seq = [per_iter[t][j] for t in range(length)]
        if out_dirs[j]:
            seq = seq[::-1]
        stacked.append(np.stack(seq, axis=out_axes[j]))
    return states, stacked
