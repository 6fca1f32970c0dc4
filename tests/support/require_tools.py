"""Skipping a test (exit 77) when a consumer it drives is not installed."""
import shutil
import sys


def require_tools(*tools):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        print("SKIP: %s not installed (scripts/deps installs them)" % ", ".join(missing))
        sys.exit(77)
