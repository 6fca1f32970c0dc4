#!/bin/sh
# perf_ignoring_sigpipe.sh PERF_ARGS...
# Run perf with SIGPIPE ignored. perf 6.1 resolves source lines through one
# addr2line child per object; when a child cannot read its object (a frame
# that a DWARF unwind placed in a data mapping, "//anon") it exits, and
# perf's next request to it raises SIGPIPE, which kills perf part-way through
# its output (exit 141). Ignored, the write fails with EPIPE instead: perf
# prints "could not send request", leaves that one frame's line unknown and
# goes on. An ignored signal stays ignored across exec.
trap '' PIPE
exec perf "$@"
