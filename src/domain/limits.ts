/**
 * Limits, each citing where it is fixed (spec §8, behaviour.md §1.8).
 */

/** spec §4 / §8: request body cap for all endpoints, inclusive. */
export const REQUEST_BODY_BYTES = 10 * 1024 * 1024;
/** behaviour.md §9.1: after an over-cap chunked body, drain this much before closing the socket. */
export const OVERSIZE_DRAIN_BYTES = 20 * 1024 * 1024;
/** spec §4.4, §8: webhook body, inclusive. */
export const WEBHOOK_BODY_BYTES = 65536;
/** behaviour.md §1.8: fs.max_bytes advertised by /describe. */
export const FS_MAX_BYTES = 10 * 1024 * 1024;
/** spec §3 queue table, §8 MAX_QUEUE_SIZE. */
export const QUEUE_MAX = 5;
/** spec §3 queue table, §8 QUEUE_WAIT_TIMEOUT_MS. */
export const QUEUE_WAIT_MS = 120000;
/** behaviour.md §11: the legacy user wire queue. */
export const USER_WIRE_QUEUE_MAX = 16;
/** behaviour.md §11: the legacy user wire queue wait. */
export const USER_WIRE_QUEUE_WAIT_MS = 60000;
/** spec §4.10.4, §8: `--<field>-file` size, inclusive. */
export const FIELD_FILE_BYTES = 1048576;
/** spec §4.9, §8: grace between the /shutdown answer and exit. */
export const SHUTDOWN_GRACE_MS = 50;
/** behaviour.md §1.8: largest capability ttl_ms (30 days). */
export const CAPABILITY_MAX_TTL_MS = 2592000000;
/** behaviour.md §1.8: dead capability records stay listed this long. */
export const DEAD_CAPABILITY_LISTED_MS = 7 * 24 * 3600 * 1000;
/** behaviour.md §1.8 / §9.8: event stream ping interval. */
export const EVENT_PING_MS = 15000;
/** behaviour.md §9.4: SSE comment while a command runs. */
export const RUNNING_COMMENT_MS = 15000;
/**
 * behaviour.md §9.4: how long a started command's 200 headers may wait for its answer, so that a
 * command finishing within it is answered in one write (beyond spec; a client cannot tell 5 ms).
 */
export const HEADERS_WINDOW_MS = 5;
/** behaviour.md §9.8: concurrent event streams per agent. */
export const EVENT_STREAMS_PER_AGENT = 16;
/** behaviour.md §1.5: head.cmd display cap. */
export const CMD_DISPLAY_CHARS = 200;
/** behaviour.md §1.8: /exec default and maximum timeouts (seconds). */
export const EXEC_TIMEOUT_DEFAULT_S = 120;
export const EXEC_TIMEOUT_MAX_S = 600;
/** behaviour.md §1.8: /exec output shown: first and last half of this many bytes. */
export const EXEC_OUTPUT_BYTES = 131072;
/** behaviour.md §1.8: history entries per topic. */
export const HISTORY_MAX = 50;
/** behaviour.md §1.8: value shortcuts per topic. */
export const VALUE_SHORTCUTS_MAX = 500;
/** behaviour.md §1.8 / §6.1: session variable value size. */
export const SESSION_VAR_BYTES = 1048576;
/** behaviour.md §6.2: persistent variable value size. */
export const PERSISTENT_VAR_BYTES = 65536;
/** behaviour.md §1.2: request_id length. */
export const REQUEST_ID_MAX = 256;
/** behaviour.md §13.1: an inspector WebSocket client whose send buffer exceeds this is closed (code 1013). */
export const INSPECTOR_WS_BUFFER_BYTES = 1048576;
/**
 * behaviour.md §13.8 (chosen here): the largest file `loom inspect <file>` opens. A bundle of a busy
 * daemon is a few MiB; the page holds the whole file in memory, so a larger one is refused up front.
 */
export const INSPECTOR_FILE_MAX_BYTES = 64 * 1024 * 1024;
/** behaviour.md §14.2 (chosen here): shorter values are not replaced in answers (they would hit ordinary words). */
export const TRACE_SECRET_MIN_CHARS = 4;
/** behaviour.md §14.1 (chosen here): traces recording at once; one more is refused with 429. */
export const TRACES_ACTIVE_MAX = 32;
/** behaviour.md §14.1: buffered steps reach the file at most this long after they finish. */
export const TRACE_FLUSH_MS = 100;
/** behaviour.md §14.2 (chosen here): a `file` step keeps documents up to this size (the --x-file cap). */
export const TRACE_FILE_STEP_BYTES = 1048576;
/** behaviour.md §14.1 (chosen here): a trace file stops recording when it passes this size. */
export const TRACE_FILE_MAX_BYTES = 256 * 1024 * 1024;
/**
 * Chosen here, so that a command naming many hard links of one large file cannot run the daemon
 * out of memory: the file steps read but not yet written, across every recording of the daemon.
 * A file over it is left out of its trace with a warning.
 */
export const TRACE_PENDING_FILE_BYTES = 32 * 1024 * 1024;
/** behaviour.md §14.1 (chosen here): POST /traces `note` length. */
export const TRACE_NOTE_CHARS = 1000;
/** behaviour.md §1.8 / §7.4: most files of a package (manifest entries, folder and GitHub files). */
export const INSTALL_MAX_FILES = 500;
/** behaviour.md §1.8 / §7.4: largest file of a package (manifest documents too), inclusive. */
export const INSTALL_FILE_BYTES = 5 * 1024 * 1024;
/** behaviour.md §1.8 / §7.4: largest package, all files together, inclusive. */
export const INSTALL_TOTAL_BYTES = 50 * 1024 * 1024;
/** behaviour.md §1.8: every install fetch (manifest, files, GitHub API) times out after this. */
export const INSTALL_FETCH_TIMEOUT_MS = 30000;
/** behaviour.md §1.8: redirects followed per fetch. */
export const INSTALL_MAX_REDIRECTS = 5;
/**
 * Most GitHub API requests one install makes (the default branch and one listing per folder): a
 * repository of hundreds of folders holding nothing installable must not cost hundreds of requests.
 */
export const GITHUB_MAX_API_REQUESTS = 100;
/** behaviour.md §7.3: deepest GitHub folder listed below the package root. */
export const GITHUB_MAX_DEPTH = 8;
