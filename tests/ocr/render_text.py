#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Renders the OCR demo's test picture: a few lines of text in Latin (DejaVu
Sans) and Chinese (WenQuanYi Micro Hei), one of them upside down, on a
light background. Writes IMAGE.png and TRUTH.json ({"width", "height",
"lines": [{"text", "box": [x0, y0, x1, y1], "angle"}]}, boxes in pixels, in
reading order).

usage: render_text.py IMAGE.png TRUTH.json
Needs Debian's python3-pil, fonts-dejavu-core and fonts-wqy-microhei."""
import json
import sys

from PIL import Image, ImageDraw, ImageFont

LATIN = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
LATIN_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
CJK = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"

# text, font, size, colour, angle (180: drawn upside down)
LINES = [
    ("epctx reads this picture on the NPU", LATIN_BOLD, 34, (20, 30, 60), 0),
    ("Compiled once on the host, run on the device.", LATIN, 28, (30, 30, 30), 0),
    ("Order 2026-11-28 for 42.50 euros", LATIN, 28, (120, 20, 20), 0),
    ("神经网络处理器运行预编译模型", CJK, 34, (10, 70, 40), 0),
    ("This line is upside down", LATIN, 28, (40, 40, 110), 180),
]
WIDTH, MARGIN, GAP = 900, 40, 28


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: render_text.py IMAGE.png TRUTH.json")
    try:
        fonts = [ImageFont.truetype(f, s) for _, f, s, _, _ in LINES]
    except OSError as e:
        sys.exit(f"render_text.py: error: {e} (apt-get install fonts-dejavu-core fonts-wqy-microhei)")
    sizes = []
    for (text, _, _, _, _), font in zip(LINES, fonts):
        x0, y0, x1, y1 = font.getbbox(text)
        sizes.append((x0, y0, x1, y1))
    height = MARGIN * 2 + sum(s[3] - s[1] for s in sizes) + GAP * (len(LINES) - 1)
    img = Image.new("RGB", (WIDTH, height), (250, 248, 240))
    truth = []
    y = MARGIN
    for (text, _, _, colour, angle), font, (x0, y0, x1, y1) in zip(LINES, fonts, sizes):
        w, h = x1 - x0, y1 - y0
        line = Image.new("RGB", (w + 8, h + 8), (250, 248, 240))
        ImageDraw.Draw(line).text((4 - x0, 4 - y0), text, font=font, fill=colour)
        if angle == 180:
            line = line.rotate(180)
        img.paste(line, (MARGIN - 4, y - 4))
        truth.append({"text": text, "box": [MARGIN, y, MARGIN + w, y + h], "angle": angle})
        y += h + GAP
    img.save(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"width": WIDTH, "height": height, "lines": truth}, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
