// confine.h: the Landlock ruleset of a `workspace` agent (behaviour.md §15, docs/sandbox.md).
//
// Shared by the confined spawn (native/spawn.cc, for /exec and CLI actions) and the exec wrapper
// of shells (native/sandbox.cc). The constants are spelled out here instead of taken from
// <linux/landlock.h> so the helpers build on systems whose kernel headers predate Landlock; the
// running kernel is asked which ABI it offers and only the rights it knows are handled.
#pragma once

#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <string>
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

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

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

/** The plan: which trees get which rights. */
struct Plan {
  std::vector<std::string> readWrite;
  std::vector<std::string> readOnly;
  std::vector<std::string> devices;
};

/** The usual device nodes every program expects (absent ones are skipped). */
inline std::vector<std::string> DefaultDevices() {
  return {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts", "/dev/ptmx"};
}

/** Add one rule; a path that does not exist is skipped (0), other failures return -errno. */
inline int AddPath(int ruleset, const std::string& path, uint64_t rights, uint64_t handled) {
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
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

/**
 * Build the ruleset of a plan at the highest ABI up to `abiMax` the kernel offers. Returns the
 * ruleset fd (close-on-exec), or -errno; `step` names the call that failed.
 */
inline int BuildRuleset(const Plan& plan, int abiMax, const char** step) {
  int abi = KernelAbi();
  if (abi > kMaxKnownAbi) abi = kMaxKnownAbi;
  if (abiMax >= 0 && abi > abiMax) abi = abiMax;
  if (abi < 1) {
    *step = "landlock_create_ruleset";
    return -ENOSYS;
  }
  RulesetAttr attr = {};
  attr.handled_access_fs = HandledFs(abi);
  // Signals and abstract unix sockets stay inside the sandbox's own domain: a confined command
  // cannot signal the daemon or another agent's processes, nor reach their abstract sockets.
  if (abi >= 6) attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
  int ruleset = static_cast<int>(syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0));
  if (ruleset < 0) {
    *step = "landlock_create_ruleset";
    return -errno;
  }
  const uint64_t all = attr.handled_access_fs;
  struct Group {
    const std::vector<std::string>* paths;
    uint64_t rights;
  } groups[] = {{&plan.readWrite, all}, {&plan.readOnly, kReadExec}, {&plan.devices, kDevice}};
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
  return ruleset;
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
