# Shared by the fake tools: append this call (tool name and argv, NUL-separated) to $FAKE_LOG,
# calls separated by an ASCII record separator, so tests can check every argument literally.
fake_log() {
  [ -n "$FAKE_LOG" ] || return 0
  printf '%s\0' "$@" >> "$FAKE_LOG"
  printf '\036' >> "$FAKE_LOG"
}
