"""The jitframes command's exit statuses, for the record scripts: the same
numbers as tools/cli/exit_status.h (the test
exit_statuses_agree_between_c_and_python fails when they differ), so
`jitframes record` means by each what every other verb does."""

OK = 0           # done
FAILED = 1       # perf or the process failed, files left, answers the kernel contradicts
USAGE = 2        # a usage error, or an unusable -o DIR
WARNINGS = 3     # check/dump only: valid for perf, with warnings
UNREACHABLE = 4  # no such process, a zombie, neither a readable table nor a channel
