"""The `jitframes` command of a pip install: the C tool shipped in the
package (_tool/jitframes, with its record script and flamegraph.py beside
it, as in a build tree), run in this process's place."""
import os
import sys


def tool_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_tool", "jitframes")


def main():
    tool = tool_path()
    try:
        os.execv(tool, ["jitframes"] + sys.argv[1:])
    except OSError as e:
        print("jitframes: cannot run %s: %s" % (tool, e), file=sys.stderr)
        return 2
