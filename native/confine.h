// confine.h: the Landlock ruleset of a `workspace` agent (behaviour.md §15, docs/sandbox.md).
//
// Shared by the confined spawn (native/spawn.cc, for /exec and CLI actions) and the exec wrapper
// of shells (native/sandbox.cc). The constants are spelled out here instead of taken from
// <linux/landlock.h> so the helpers build on systems whose kernel headers predate Landlock; the
// running kernel is asked which ABI it offers and only the rights it knows are handled.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace confine {

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;  // ABI 4

constexpr uint64_t kNetConnectTcp = 1ULL << 1;  // ABI 4 (bind, bit 0, is left unhandled: an agent may run a server)

/** openat2's RESOLVE_NO_SYMLINKS: no component of the path may be a symbolic link. */
constexpr uint64_t kResolveNoSymlinks = 0x04;

constexpr uint64_t kExecute = 1ULL << 0;
constexpr uint64_t kWriteFile = 1ULL << 1;
constexpr uint64_t kReadFile = 1ULL << 2;
constexpr uint64_t kReadDir = 1ULL << 3;
constexpr uint64_t kRemoveDir = 1ULL << 4;
constexpr uint64_t kRemoveFile = 1ULL << 5;
constexpr uint64_t kMakeChar = 1ULL << 6;
constexpr uint64_t kMakeDir = 1ULL << 7;
constexpr uint64_t kMakeReg = 1ULL << 8;
constexpr uint64_t kMakeSock = 1ULL << 9;
constexpr uint64_t kMakeFifo = 1ULL << 10;
constexpr uint64_t kMakeBlock = 1ULL << 11;
constexpr uint64_t kMakeSym = 1ULL << 12;
constexpr uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kIoctlDev = 1ULL << 15;  // ABI 5

constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

/** The highest ABI this code knows; a newer kernel is used at this level. */
constexpr int kMaxKnownAbi = 7;

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

struct OpenHow {
  uint64_t flags;
  uint64_t mode;
  uint64_t resolve;
};

/** Rights that make sense on a non-directory (the kernel refuses directory rights on a file). */
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

/** The Landlock ABI of the running kernel (0: none or disabled). */
inline int KernelAbi() {
  long v = syscall(__NR_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return v < 0 ? 0 : static_cast<int>(v);
}

/** Every filesystem right the given ABI knows. */
inline uint64_t HandledFs(int abi) {
  uint64_t r = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir |
               kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  if (abi >= 5) r |= kIoctlDev;
  return r;
}

/** Read and execute only (the system, SVC_SANDBOX_READ). */
constexpr uint64_t kReadExec = kExecute | kReadFile | kReadDir;
/** Device nodes: read, write, truncate (`> /dev/null`) and device ioctls (terminals). */
constexpr uint64_t kDevice = kReadFile | kWriteFile | kReadDir | kTruncate | kIoctlDev;

/**
 * The plan: which trees get which rights, and how far TCP reaches. `readWrite` roots are the
 * agent's own (home, allowed paths, private temp folder): each is opened without following a
 * symbolic link in any component, so an agent cannot swap one for a link between two spawns
 * (behaviour.md §15.4). `confineTcp`: connects only to `connectPorts` (Loom's egress proxy);
 * otherwise TCP is not handled (the `open` policy).
 */
struct Plan {
  std::vector<std::string> readWrite;
  std::vector<std::string> readOnly;
  std::vector<std::string> devices;
  bool confineTcp = false;
  std::vector<uint64_t> connectPorts;
};

/**
 * The device nodes every program expects (absent ones are skipped). No terminal: a one-shot
 * command or CLI action gets none, and a shell adds its own PTY only (behaviour.md §15.1).
 */
inline std::vector<std::string> DefaultDevices() {
  return {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
}

/** Open a rule root with no symbolic link in any component (openat2), or -errno (ELOOP: a link). */
inline int OpenNoFollow(const char* path) {
  OpenHow how = {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = kResolveNoSymlinks;
  long fd = syscall(__NR_openat2, AT_FDCWD, path, &how, sizeof how);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

/**
 * Add one rule. A system path that does not exist is skipped (0); with `strict` (the agent's own
 * roots) a root reached through a symbolic link fails with -ELOOP, a missing one is skipped only
 * when `skipMissing`; other failures return -errno.
 */
inline int AddPath(int ruleset, const std::string& path, uint64_t rights, uint64_t handled, bool strict = false) {
  int fd = strict ? OpenNoFollow(path.c_str()) : open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0 && strict) return fd == -ENOENT ? 0 : fd;
  if (fd < 0) return (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ELOOP) ? 0 : -errno;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  PathBeneathAttr attr;
  attr.allowed_access = rights & handled & (S_ISDIR(st.st_mode) ? ~0ULL : kFileRights);
  attr.parent_fd = fd;
  long rc = attr.allowed_access == 0 ? 0 : syscall(__NR_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0);
  int e = errno;
  close(fd);
  return rc == 0 ? 0 : -e;
}

/** Allow TCP connects to one port (ABI 4). */
inline int AddPort(int ruleset, uint64_t port) {
  NetPortAttr attr = {kNetConnectTcp, port};
  return syscall(__NR_landlock_add_rule, ruleset, kRuleNetPort, &attr, 0) == 0 ? 0 : -errno;
}

/**
 * Build the ruleset of a plan at the highest ABI up to `abiMax` the kernel offers. Returns the
 * ruleset fd (close-on-exec), or -errno; `step` names the call that failed (for an agent root:
 * `rule root <path>`, so the caller can say what the root is now).
 */
inline int BuildRuleset(const Plan& plan, int abiMax, std::string* step) {
  int abi = KernelAbi();
  if (abi > kMaxKnownAbi) abi = kMaxKnownAbi;
  if (abiMax >= 0 && abi > abiMax) abi = abiMax;
  if (abi < 1) {
    *step = "landlock_create_ruleset";
    return -ENOSYS;
  }
  if (plan.confineTcp && abi < 4) {
    *step = "landlock TCP rules (ABI 4)";
    return -EOPNOTSUPP;
  }
  RulesetAttr attr = {};
  attr.handled_access_fs = HandledFs(abi);
  if (plan.confineTcp) attr.handled_access_net = kNetConnectTcp;
  // Signals and abstract unix sockets stay inside the sandbox's own domain: a confined command
  // cannot signal the daemon or another agent's processes, nor reach their abstract sockets.
  if (abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  // The size the ABI knows: an ABI 1-3 kernel refuses a struct with the network field set, an
  // ABI < 6 one the scope field.
  size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? offsetof(RulesetAttr, scoped) : offsetof(RulesetAttr, handled_access_net);
  int ruleset = static_cast<int>(syscall(__NR_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) {
    *step = "landlock_create_ruleset";
    return -errno;
  }
  const uint64_t all = attr.handled_access_fs;
  for (const std::string& p : plan.readWrite) {
    int rc = AddPath(ruleset, p, all, all, true);
    if (rc < 0) {
      close(ruleset);
      *step = "rule root " + p;
      return rc;
    }
  }
  struct Group {
    const std::vector<std::string>* paths;
    uint64_t rights;
  } groups[] = {{&plan.readOnly, kReadExec}, {&plan.devices, kDevice}};
  for (const Group& g : groups) {
    for (const std::string& p : *g.paths) {
      int rc = AddPath(ruleset, p, g.rights, all);
      if (rc < 0) {
        close(ruleset);
        *step = "landlock_add_rule";
        return rc;
      }
    }
  }
  if (plan.confineTcp) {
    for (uint64_t port : plan.connectPorts) {
      int rc = AddPort(ruleset, port);
      if (rc < 0) {
        close(ruleset);
        *step = "landlock_add_rule (TCP port)";
        return rc;
      }
    }
  }
  return ruleset;
}

/**
 * The namespaces a confined program starts in (behaviour.md §15.1): a user namespace that maps
 * only the daemon's own ids, a mount namespace with a fresh `/proc` and a PID namespace, so no
 * other process's `/proc/<pid>/environ` or `cmdline` is even visible; with `net`, an empty network
 * namespace (the `none` policy: no TCP, no UDP). The id maps are formatted before clone or fork:
 * the child runs raw system calls only.
 */
struct Namespaces {
  bool enabled = false;
  bool net = false;
  char uidMap[48] = {0};
  char gidMap[48] = {0};
};

/** Fill the id maps for the calling process's effective ids (`<id> <id> 1`). */
inline void PrepareMaps(Namespaces* ns) {
  snprintf(ns->uidMap, sizeof ns->uidMap, "%u %u 1\n", static_cast<unsigned>(geteuid()), static_cast<unsigned>(geteuid()));
  snprintf(ns->gidMap, sizeof ns->gidMap, "%u %u 1\n", static_cast<unsigned>(getegid()), static_cast<unsigned>(getegid()));
}

/** The clone/unshare flags of a plan's namespaces. */
inline int NamespaceFlags(const Namespaces& ns) {
  return ns.enabled ? (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (ns.net ? CLONE_NEWNET : 0)) : 0;
}

inline size_t Length(const char* s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

/** Write a short text to a /proc file with raw system calls; -errno on failure. */
inline int WriteProcFile(const char* path, const char* text) {
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CLOEXEC, 0));
  if (fd < 0) return -errno;
  long n = syscall(SYS_write, fd, text, Length(text));
  int e = errno;
  syscall(SYS_close, fd);
  return n < 0 ? -e : 0;
}

/** In a process that has just entered a new user namespace: map its own ids. */
inline int MapIds(const Namespaces& ns, const char** step) {
  int rc;
  if ((rc = WriteProcFile("/proc/self/setgroups", "deny")) < 0) { *step = "write /proc/self/setgroups"; return rc; }
  if ((rc = WriteProcFile("/proc/self/uid_map", ns.uidMap)) < 0) { *step = "write /proc/self/uid_map"; return rc; }
  if ((rc = WriteProcFile("/proc/self/gid_map", ns.gidMap)) < 0) { *step = "write /proc/self/gid_map"; return rc; }
  return 0;
}

/**
 * In PID 1 of the new PID namespace: mounts made private (nothing propagates back), a fresh
 * `/proc` that shows this namespace only, and read access to it added to the ruleset (the rule on
 * the daemon's `/proc` names other inodes).
 */
inline int MountProc(int ruleset, const char** step) {
  if (syscall(SYS_mount, nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) { *step = "mount --make-rprivate /"; return -errno; }
  if (syscall(SYS_mount, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) { *step = "mount /proc"; return -errno; }
  if (ruleset < 0) return 0;  // a probe: nothing to add the rule to
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc", O_PATH | O_CLOEXEC, 0));
  if (fd < 0) { *step = "open /proc"; return -errno; }
  PathBeneathAttr attr;
  attr.allowed_access = kReadExec;
  attr.parent_fd = fd;
  long rc = syscall(__NR_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0);
  int e = errno;
  syscall(SYS_close, fd);
  if (rc != 0) { *step = "landlock_add_rule /proc"; return -e; }
  return 0;
}

/**
 * Confine the calling thread (and what it executes) with a built ruleset: no_new_privs first, as
 * Landlock requires of an unprivileged caller, so a setuid program cannot shed the rules either.
 * Async-signal-safe (raw system calls only): it runs in a child between clone and execve.
 * Returns 0, or -errno with `step` set.
 */
inline int Restrict(int ruleset, const char** step) {
  if (syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    *step = "prctl(PR_SET_NO_NEW_PRIVS)";
    return -errno;
  }
  if (syscall(__NR_landlock_restrict_self, ruleset, 0) != 0) {
    *step = "landlock_restrict_self";
    return -errno;
  }
  return 0;
}

}  // namespace confine
