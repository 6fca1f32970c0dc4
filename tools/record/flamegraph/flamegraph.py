#!/usr/bin/env python3
"""Turn `perf script` output into one self-contained interactive flame graph.

    perf script -F ip,sym --no-inline -i perf.data |
      flamegraph.py --title T --libs DIR [--only REGEX] > out.html

Reads samples (frames innermost first, one sample per blank-line-separated
block, as `perf script -F ip,sym` prints them), merges them into a tree and
writes an HTML page with d3 and d3-flame-graph inlined from DIR (their npm
packages, installed from package.json beside this file): the page needs no
network when it is viewed. Frames perf could not name stay as [unknown].
With --only, the page also offers (and opens on) a view that keeps only the
frames whose name matches REGEX, e.g. 'py::' for the Python functions.
"""
import argparse
import html
import json
import os
import re
import sys

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)\s*$")


def read_samples(lines):
    """Yield each sample's frame names, outermost first."""
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield list(reversed(frames))
            frames = []
            continue
        m = FRAME.match(line)
        if m:
            name = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)) or "[unknown]"
            frames.append(name)
    if frames:
        yield list(reversed(frames))


def build_tree(samples, keep=None):
    root = {"name": "all", "value": 0, "children": {}}
    for stack in samples:
        if keep:
            stack = [name for name in stack if keep.search(name)]
        root["value"] += 1
        node = root
        for name in stack:
            child = node["children"].get(name)
            if child is None:
                child = node["children"][name] = {"name": name, "value": 0, "children": {}}
            child["value"] += 1
            node = child

    def freeze(node):
        return {"name": node["name"], "value": node["value"],
                "children": [freeze(c) for c in sorted(node["children"].values(),
                                                        key=lambda c: c["name"])]}
    return freeze(root)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1.5em; }}
h1 {{ font-size: 1.3em; }}
p.note {{ color: #555; }}
{css}
</style>
<script>{d3}</script>
<script>{flamegraph}</script>
</head><body>
<h1>{title}</h1>
<p class="note">{samples} samples. Click a frame to zoom in, click below the graph to zoom out.
Made by jitframes from perf's own output; works offline.</p>
<p>{views}</p>
<div id="chart"></div>
<script>
var views = {data};
function show(name) {{
  d3.select("#chart").selectAll("*").remove();
  var chart = flamegraph.default().width(Math.max(960, window.innerWidth - 60)).cellHeight(18)
    .transitionDuration(0).minFrameSize(2).sort(true).title("");
  d3.select("#chart").datum(views[name]).call(chart);
}}
show({first});
</script>
</body></html>
"""


def library(libs, *parts):
    path = os.path.join(libs, *parts)
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().replace("</script", "<\\/script")
    except OSError as e:
        sys.exit("flamegraph.py: cannot read %s: %s" % (path, e.strerror))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--title", default="Flame graph")
    ap.add_argument("--libs", required=True, help="node_modules with d3 and d3-flame-graph")
    ap.add_argument("--only", help="also a view of the frames matching this regular expression")
    ap.add_argument("input", nargs="?", help="perf script output (default: stdin)")
    args = ap.parse_args()
    lines = open(args.input, encoding="utf-8", errors="replace") if args.input else sys.stdin
    samples = list(read_samples(lines))
    tree = build_tree(samples)
    if tree["value"] == 0:
        sys.exit("flamegraph.py: no samples in the input")
    views = {"all frames": tree}
    if args.only:
        views["only " + args.only] = build_tree(samples, re.compile(args.only))
    first = list(views)[-1]
    buttons = " ".join(
        '<label><input type="radio" name="view"%s onclick=\'show(%s)\'> %s</label>'
        % (" checked" if v == first else "", html.escape(json.dumps(v)), html.escape(v))
        for v in views)
    sys.stdout.write(PAGE.format(
        title=html.escape(args.title), samples=tree["value"],
        css=library(args.libs, "d3-flame-graph", "dist", "d3-flamegraph.css"),
        d3=library(args.libs, "d3", "dist", "d3.min.js"),
        flamegraph=library(args.libs, "d3-flame-graph", "dist", "d3-flamegraph.umd.min.js"),
        views=buttons if len(views) > 1 else "", first=json.dumps(first),
        data=json.dumps(views).replace("</", "<\\/")))


if __name__ == "__main__":
    main()
