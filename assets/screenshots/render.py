#!/usr/bin/env python3
"""Renders a terminal screen captured with `tmux capture-pane -e -p` (text with SGR colour
escapes) to a PNG, cell by cell, in DejaVu Sans Mono.

Usage: render.py CAPTURE.ansi OUT.png [COLUMNS ROWS]
Needs Pillow (pip install pillow) and the DejaVu fonts (Debian: fonts-dejavu-core).
"""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
SIZE = 15
BG = (24, 26, 33)
FG = (204, 208, 216)
# xterm's 16 colours, a little softened for a dark background.
PALETTE16 = [
    (40, 42, 54), (224, 92, 92), (120, 200, 110), (230, 200, 90), (100, 150, 240), (200, 120, 220), (80, 200, 220), (204, 208, 216),
    (110, 115, 130), (255, 120, 120), (150, 230, 140), (250, 225, 120), (130, 175, 255), (225, 150, 245), (120, 225, 240), (255, 255, 255),
]


def color256(n):
    if n < 16:
        return PALETTE16[n]
    if n < 232:
        n -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return (levels[n // 36], levels[(n // 6) % 6], levels[n % 6])
    v = 8 + (n - 232) * 10
    return (v, v, v)


def parse(text):
    """Yields rows of (char, fg, bg, bold, underline) cells."""
    rows = []
    fg, bg, bold, underline, reverse = None, None, False, False, False
    for line in text.split("\n"):
        row = []
        i = 0
        while i < len(line):
            m = re.match(r"\x1b\[([0-9;:]*)m", line[i:])
            if m:
                params = [int(p) if p else 0 for p in re.split("[;:]", m.group(1))] if m.group(1) else [0]
                j = 0
                while j < len(params):
                    p = params[j]
                    if p == 0:
                        fg, bg, bold, underline, reverse = None, None, False, False, False
                    elif p == 1:
                        bold = True
                    elif p == 22:
                        bold = False
                    elif p == 4:
                        underline = True
                    elif p == 24:
                        underline = False
                    elif p == 7:
                        reverse = True
                    elif p == 27:
                        reverse = False
                    elif 30 <= p <= 37:
                        fg = PALETTE16[p - 30]
                    elif 90 <= p <= 97:
                        fg = PALETTE16[p - 90 + 8]
                    elif p == 39:
                        fg = None
                    elif 40 <= p <= 47:
                        bg = PALETTE16[p - 40]
                    elif 100 <= p <= 107:
                        bg = PALETTE16[p - 100 + 8]
                    elif p == 49:
                        bg = None
                    elif p in (38, 48) and j + 1 < len(params):
                        if params[j + 1] == 5 and j + 2 < len(params):
                            c = color256(params[j + 2])
                            j += 2
                        elif params[j + 1] == 2 and j + 4 < len(params):
                            c = tuple(params[j + 2:j + 5])
                            j += 4
                        else:
                            c = None
                        if p == 38:
                            fg = c
                        else:
                            bg = c
                    j += 1
                i += m.end()
                continue
            if line[i] == "\x1b":  # another escape: skip it
                m = re.match(r"\x1b[\[\]][^a-zA-Z]*[a-zA-Z]", line[i:])
                i += m.end() if m else 1
                continue
            cfg, cbg = fg or FG, bg or BG
            if reverse:
                cfg, cbg = cbg, cfg
            row.append((line[i], cfg, cbg, bold, underline))
            i += 1
        rows.append(row)
    return rows


def render(capture, out, columns=None, rows_wanted=None):
    with open(capture, encoding="utf-8") as f:
        rows = parse(f.read().rstrip("\n"))
    columns = columns or max(len(r) for r in rows)
    rows_wanted = rows_wanted or len(rows)
    font = ImageFont.truetype(FONT, SIZE)
    bold_font = ImageFont.truetype(FONT_BOLD, SIZE)
    left, top, right, bottom = font.getbbox("M")
    cw = int(round(font.getlength("M")))
    ch = int(SIZE * 1.3)
    pad = 12
    img = Image.new("RGB", (columns * cw + 2 * pad, rows_wanted * ch + 2 * pad), BG)
    draw = ImageDraw.Draw(img)
    for y, row in enumerate(rows[:rows_wanted]):
        for x, (c, fg, bg, bold, underline) in enumerate(row[:columns]):
            px, py = pad + x * cw, pad + y * ch
            if bg != BG:
                draw.rectangle([px, py, px + cw - 1, py + ch - 1], fill=bg)
            if c == " ":
                continue
            if c in "─│┌┐└┘├┤┬┴┼":
                draw_box(draw, c, px, py, cw, ch, fg)
            else:
                draw.text((px, py + (ch - SIZE) // 2 - 1), c, font=bold_font if bold else font, fill=fg)
            if underline:
                draw.line([px, py + ch - 2, px + cw, py + ch - 2], fill=fg)
    img.save(out)


def draw_box(draw, c, x, y, w, h, fg):
    """Box-drawing characters drawn as lines, so borders join across cells."""
    mx, my = x + w // 2, y + h // 2
    up, down, left, right = {
        "─": (0, 0, 1, 1), "│": (1, 1, 0, 0), "┌": (0, 1, 0, 1), "┐": (0, 1, 1, 0), "└": (1, 0, 0, 1),
        "┘": (1, 0, 1, 0), "├": (1, 1, 0, 1), "┤": (1, 1, 1, 0), "┬": (0, 1, 1, 1), "┴": (1, 0, 1, 1), "┼": (1, 1, 1, 1),
    }[c]
    if up:
        draw.line([mx, y, mx, my], fill=fg)
    if down:
        draw.line([mx, my, mx, y + h], fill=fg)
    if left:
        draw.line([x, my, mx, my], fill=fg)
    if right:
        draw.line([mx, my, x + w, my], fill=fg)


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (2, 4):
        sys.exit(__doc__)
    cols, rows = (int(args[2]), int(args[3])) if len(args) == 4 else (None, None)
    render(args[0], args[1], cols, rows)
