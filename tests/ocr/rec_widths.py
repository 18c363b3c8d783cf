#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes copies of a recognition model whose image input has a fixed
[1, 3, 48, W] shape, one per width bucket: OUTDIR/rec.onnx for the first
width and OUTDIR/rec_<W>.onnx for the others. epctx-compile then compiles
them as one weight-sharing group (identical weights stored once).

usage: rec_widths.py MODEL.onnx OUTDIR W1,W2,..."""
import os
import sys

import onnx


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: rec_widths.py MODEL.onnx OUTDIR W1,W2,...")
    model = onnx.load(sys.argv[1])
    widths = [int(w) for w in sys.argv[3].split(",")]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    if len(dims) != 4:
        sys.exit(f"rec_widths.py: error: {sys.argv[1]}: expected a [N, 3, H, W] input")
    for i, w in enumerate(widths):
        for d, v in zip(dims, (1, 3, 48, w)):
            d.ClearField("dim_param")
            d.dim_value = v
        name = "rec.onnx" if i == 0 else f"rec_{w}.onnx"
        onnx.save(model, os.path.join(sys.argv[2], name))


if __name__ == "__main__":
    main()
