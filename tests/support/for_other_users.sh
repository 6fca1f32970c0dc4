# For tests that run a program as another user (setpriv --reuid=nobody):
# the build tree may sit where that user cannot go (a clone in a 0700 home
# directory, as Debian's adduser makes them), so such a test runs a copy
# kept where anyone can reach it. Sourced; the programs here are linked
# statically against jitframes, so the copy needs nothing from the build.

# runnable_by_anyone DIR FILE: copy FILE into DIR/bin (made mode 0755;
# DIR and every directory above it must be traversable by anyone, as a
# mktemp -d under /tmp made 0755 is) and print the copy's path.
runnable_by_anyone() {
  local dir=$1 file=$2
  mkdir -p "$dir/bin" && chmod 755 "$dir" "$dir/bin" && cp "$file" "$dir/bin/" &&
    chmod 755 "$dir/bin/$(basename "$file")" && echo "$dir/bin/$(basename "$file")"
}
