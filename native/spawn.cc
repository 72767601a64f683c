// loom_spawn: posix_spawn for CLI actions and /exec (docs/architecture.md, "Resident memory").
//
// Node 20's libuv starts children with fork(): the kernel copies the page tables of the whole
// daemon and the daemon then takes copy-on-write faults, so every spawn costs in proportion to the
// daemon's resident memory. glibc's posix_spawn uses clone(CLONE_VM | CLONE_VFORK): nothing is
// copied. (libuv itself moves to posix_spawn on Linux after 1.52.1; Node 20 ships 1.46.)
//
// spawn(file, argv, envp, cwd) -> [pid, stdoutFd, stderrFd]: stdin is /dev/null, stdout and stderr
//   are fresh pipes, the child is a session leader (own process group), signal mask cleared and
//   every signal at its default disposition, as libuv does for child_process.spawn.
// watch(pid, callback(code | null, signal)): calls back once when the child ends (a pidfd polled
//   on the event loop), reaping it. libuv reaps only the children it started itself.
// reap(pid) -> boolean: reap an ended child without waiting (true when it was reaped or is gone);
//   for a child whose watch could not be set up (the caller kills it first).
// spawn(file, argv, envp, cwd, {rw, ro, abi, devices, tcpPorts, namespaces, netns}): the same child
//   confined by Landlock, optionally in its own user, mount and PID (and network) namespaces (confine.h,
//   docs/sandbox.md). posix_spawn runs no code of ours in the child, so this path does what it does
//   by hand: clone(CLONE_VM | CLONE_VFORK) onto a small stack, the child sets itself up with raw
//   system calls only and restricts itself before execve. The ruleset is built in the parent (it
//   only describes; nothing is confined until the child calls restrict_self).
// landlockAbi() -> number: the kernel's Landlock ABI (0 when it has none).
// probeNamespaces() -> string: "" when confined children can have their own namespaces, else why not.
// scrubEnviron() -> number: moves the process's environment strings to the heap and zeroes the
//   block the kernel shows as /proc/<pid>/environ, which Landlock does not guard on every kernel
//   (docs/sandbox.md); returns how many strings were moved. getenv and Node's process.env are unchanged.
#include "confine.h"

#include <napi.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

Napi::Value Fail(Napi::Env env, const char* syscall, int err) {
  Napi::Error e = Napi::Error::New(env, std::string(syscall) + " failed: " + strerror(err));
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", Napi::String::New(env, syscall));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

std::vector<std::string> Strings(Napi::Array a) {
  std::vector<std::string> out;
  out.reserve(a.Length());
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(a.Get(i).As<Napi::String>().Utf8Value());
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& s) {
  std::vector<char*> out;
  out.reserve(s.size() + 1);
  for (auto& x : s) out.push_back(const_cast<char*>(x.c_str()));
  out.push_back(nullptr);
  return out;
}

// What the confined child needs, prepared by the parent: the child only reads it and, on failure,
// writes `err` and `step` (it shares the parent's memory until execve).
struct ChildArgs {
  const char* file;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int out;
  int err;
  int ruleset;
  const confine::Namespaces* ns;
  int failErrno;
  const char* failStep;
};

// Kernel sigaction layout for rt_sigaction (the libc wrapper is not async-signal-safe to rely on here).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

int ConfinedChild(void* p) {
  ChildArgs* a = static_cast<ChildArgs*>(p);
  // Every handler back to its default while all signals are still blocked (the parent blocked them
  // before clone): a daemon handler must never run in this child, which shares its memory.
  KernelSigaction dfl = {};
  dfl.handler = SIG_DFL;
  for (int sig = 1; sig < 65; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(uint64_t));
  }
  const char* step = nullptr;
  int nul = -1;
  if (syscall(SYS_setsid) < 0) step = "setsid";
  if (!step && a->ns->enabled) {
    int rc = confine::MapIds(*a->ns, &step);
    if (rc == 0) rc = confine::MountProc(a->ruleset, &step);
    if (rc < 0) errno = -rc;
  }
  if (!step && (nul = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY, 0))) < 0) step = "open /dev/null";
  if (!step && syscall(SYS_dup3, nul, 0, 0) < 0 && nul != 0) step = "dup3";
  if (!step && nul != 0) syscall(SYS_close, nul);
  if (!step && syscall(SYS_dup3, a->out, 1, 0) < 0) step = "dup3";
  if (!step && syscall(SYS_dup3, a->err, 2, 0) < 0) step = "dup3";
  if (!step && syscall(SYS_chdir, a->cwd) < 0) step = "chdir";
  if (!step) {
    int rc = confine::Restrict(a->ruleset, &step);
    if (rc < 0) errno = -rc;
  }
  if (!step) {
    uint64_t none = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof none);
    syscall(SYS_execve, a->file, a->argv, a->envp);
    step = "execve";
  }
  a->failErrno = errno;
  a->failStep = step;
  syscall(SYS_exit_group, 127);
  return 127;
}

// Numbers of a JS array (ports).
std::vector<uint64_t> Ports(Napi::Value v) {
  std::vector<uint64_t> out;
  if (!v.IsArray()) return out;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) out.push_back(static_cast<uint64_t>(a.Get(i).As<Napi::Number>().Int64Value()));
  return out;
}

// The confined child: [pid, stdoutFd, stderrFd] as Spawn, or throws what failed (nothing runs).
// opts: {rw, ro, abi, devices?, tcpPorts?: number[] (connects only there), namespaces?: bool, netns?: bool}.
Napi::Value SpawnConfined(Napi::Env env, const std::string& file, std::vector<char*>& argv, std::vector<char*>& envp,
                          const std::string& cwd, Napi::Object opts) {
  if (!opts.Get("rw").IsArray() || !opts.Get("ro").IsArray()) {
    Napi::TypeError::New(env, "spawn(file, argv, envp, cwd, {rw, ro, abi})").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  confine::Plan plan;
  plan.readWrite = Strings(opts.Get("rw").As<Napi::Array>());
  plan.readOnly = Strings(opts.Get("ro").As<Napi::Array>());
  plan.devices = opts.Get("devices").IsArray() ? Strings(opts.Get("devices").As<Napi::Array>()) : confine::DefaultDevices();
  plan.confineTcp = opts.Get("tcpPorts").IsArray();
  plan.connectPorts = Ports(opts.Get("tcpPorts"));
  confine::Namespaces ns;
  ns.enabled = opts.Get("namespaces").ToBoolean();
  ns.net = opts.Get("netns").ToBoolean();
  confine::PrepareMaps(&ns);
  int abiMax = opts.Get("abi").IsNumber() ? opts.Get("abi").As<Napi::Number>().Int32Value() : -1;
  std::string step;
  int ruleset = confine::BuildRuleset(plan, abiMax, &step);
  if (ruleset < 0) return Fail(env, step.c_str(), -ruleset);

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    int e = errno;
    close(ruleset);
    return Fail(env, "pipe2", e);
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    close(out[0]);
    close(out[1]);
    close(ruleset);
    return Fail(env, "pipe2", e);
  }
  const size_t stackSize = 64 * 1024;
  void* stack = mmap(nullptr, stackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    int e = errno;
    close(out[0]); close(out[1]); close(err[0]); close(err[1]); close(ruleset);
    return Fail(env, "mmap", e);
  }
  ChildArgs a = {file.c_str(), argv.data(), envp.data(), cwd.c_str(), out[1], err[1], ruleset, &ns, 0, nullptr};
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int savedErrno = errno;
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | confine::NamespaceFlags(ns);
  pid_t pid = clone(ConfinedChild, static_cast<char*>(stack) + stackSize, flags, &a);
  int cloneErrno = errno;
  errno = savedErrno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  munmap(stack, stackSize);
  close(out[1]);
  close(err[1]);
  close(ruleset);
  if (pid < 0 || a.failStep) {
    close(out[0]);
    close(err[0]);
    if (pid < 0) return Fail(env, "clone", cloneErrno);
    int status = 0;
    waitpid(pid, &status, 0);
    return Fail(env, a.failStep, a.failErrno);
  }
  Napi::Array r = Napi::Array::New(env, 3);
  r.Set(0u, Napi::Number::New(env, pid));
  r.Set(1u, Napi::Number::New(env, out[0]));
  r.Set(2u, Napi::Number::New(env, err[0]));
  return r;
}

Napi::Value Spawn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsString() || !info[1].IsArray() || !info[2].IsArray() || !info[3].IsString()) {
    Napi::TypeError::New(env, "spawn(file, argv, envp, cwd)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string file = info[0].As<Napi::String>().Utf8Value();
  std::vector<std::string> argvS = Strings(info[1].As<Napi::Array>());
  std::vector<std::string> envS = Strings(info[2].As<Napi::Array>());
  std::string cwd = info[3].As<Napi::String>().Utf8Value();
  std::vector<char*> argv = Pointers(argvS);
  std::vector<char*> envp = Pointers(envS);
  if (info.Length() >= 5 && info[4].IsObject()) return SpawnConfined(env, file, argv, envp, cwd, info[4].As<Napi::Object>());

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return Fail(env, "pipe2", errno);
  if (pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    close(out[0]);
    close(out[1]);
    return Fail(env, "pipe2", e);
  }

  // Every set-up call is checked: a failed one (ENOMEM, EBADF) spawns nothing and says which.
  const char* step = nullptr;
  int rc = 0;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  bool faInit = false, attrInit = false;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  pid_t pid = 0;
  if ((rc = posix_spawn_file_actions_init(&fa)) != 0) step = "posix_spawn_file_actions_init";
  else faInit = true;
  if (!step && (rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) != 0) step = "posix_spawn_file_actions_addopen";
  if (!step && (rc = posix_spawn_file_actions_adddup2(&fa, out[1], 1)) != 0) step = "posix_spawn_file_actions_adddup2";
  if (!step && (rc = posix_spawn_file_actions_adddup2(&fa, err[1], 2)) != 0) step = "posix_spawn_file_actions_adddup2";
  if (!step && (rc = posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str())) != 0) step = "posix_spawn_file_actions_addchdir_np";
  if (!step && (rc = posix_spawnattr_init(&attr)) != 0) step = "posix_spawnattr_init";
  else if (!step) attrInit = true;
  if (!step && (rc = posix_spawnattr_setsigmask(&attr, &none)) != 0) step = "posix_spawnattr_setsigmask";
  if (!step && (rc = posix_spawnattr_setsigdefault(&attr, &all)) != 0) step = "posix_spawnattr_setsigdefault";
  if (!step && (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0) step = "posix_spawnattr_setflags";
  if (!step && (rc = posix_spawn(&pid, file.c_str(), &fa, &attr, argv.data(), envp.data())) != 0) step = "posix_spawn";
  if (faInit) posix_spawn_file_actions_destroy(&fa);
  if (attrInit) posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);
  if (step) {
    close(out[0]);
    close(err[0]);
    return Fail(env, step, rc);
  }
  Napi::Array r = Napi::Array::New(env, 3);
  r.Set(0u, Napi::Number::New(env, pid));
  r.Set(1u, Napi::Number::New(env, out[0]));
  r.Set(2u, Napi::Number::New(env, err[0]));
  return r;
}

struct Watch {
  uv_poll_t poll;
  int pidfd;
  pid_t pid;
  Napi::FunctionReference cb;
  Napi::AsyncContext* ctx;
};

void Closed(uv_handle_t* h) {
  Watch* w = static_cast<Watch*>(h->data);
  close(w->pidfd);
  delete w->ctx;
  delete w;
}

void OnReadable(uv_poll_t* h, int /*status*/, int /*events*/) {
  Watch* w = static_cast<Watch*>(h->data);
  siginfo_t si;
  memset(&si, 0, sizeof si);
  int rc = waitid(P_PID, w->pid, &si, WEXITED | WNOHANG);
  if (rc == 0 && si.si_pid == 0) return;    // not ended yet: wait for the next readiness
  if (rc != 0 && errno == EINTR) return;    // the pidfd stays readable: polled again
  // rc != 0 otherwise means ECHILD (reaped by someone else): the status is unknown, reported as
  // neither a code nor a signal (si is still zeroed).
  if (rc != 0) memset(&si, 0, sizeof si);
  uv_poll_stop(h);
  Napi::Env env = w->cb.Env();
  Napi::HandleScope scope(env);
  Napi::Value code = env.Null();
  int sig = 0;
  if (si.si_code == CLD_EXITED) code = Napi::Number::New(env, si.si_status);
  else sig = si.si_status;
  // MakeCallback: runs the microtasks the callback queues, as libuv callbacks into Node do.
  w->cb.MakeCallback(env.Global(), {code, Napi::Number::New(env, sig)}, *w->ctx);
  w->cb.Reset();
  uv_close(reinterpret_cast<uv_handle_t*>(h), Closed);
}

Napi::Value WatchExit(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsFunction()) {
    Napi::TypeError::New(env, "watch(pid, callback)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  pid_t pid = info[0].As<Napi::Number>().Int32Value();
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return Fail(env, "pidfd_open", errno);
  uv_loop_t* loop = nullptr;
  napi_get_uv_event_loop(env, &loop);
  Watch* w = new Watch();
  w->pidfd = pidfd;
  w->pid = pid;
  w->cb = Napi::Persistent(info[1].As<Napi::Function>());
  w->ctx = new Napi::AsyncContext(env, "loom_spawn.exit");
  w->poll.data = w;
  int rc = uv_poll_init(loop, &w->poll, pidfd);
  if (rc != 0) {
    close(pidfd);
    delete w->ctx;
    delete w;
    return Fail(env, "uv_poll_init", -rc);
  }
  rc = uv_poll_start(&w->poll, UV_READABLE, OnReadable);
  if (rc != 0) {
    // The handle belongs to the loop once initialised: it is closed through the loop (Closed frees it).
    w->cb.Reset();
    uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), Closed);
    return Fail(env, "uv_poll_start", -rc);
  }
  return env.Undefined();
}

Napi::Value Reap(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "reap(pid)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  pid_t pid = info[0].As<Napi::Number>().Int32Value();
  int status = 0;
  pid_t r = waitpid(pid, &status, WNOHANG);
  // 0: still running; pid: reaped; -1 (ECHILD): not our child any more.
  return Napi::Boolean::New(env, r != 0);
}

extern "C" char** environ;

Napi::Value ScrubEnviron(const Napi::CallbackInfo& info) {
  uint32_t moved = 0;
  for (char** e = environ; e && *e; e++) {
    size_t n = strlen(*e);
    char* copy = strdup(*e);
    if (!copy) break;
    char* old = *e;
    *e = copy;
    memset(old, 0, n);
    moved++;
  }
  return Napi::Number::New(info.Env(), moved);
}

struct ProbeArgs {
  const confine::Namespaces* ns;
  int failErrno;
  const char* failStep;
};

int ProbeChild(void* p) {
  ProbeArgs* a = static_cast<ProbeArgs*>(p);
  const char* step = nullptr;
  int rc = confine::MapIds(*a->ns, &step);
  if (rc == 0) rc = confine::MountProc(-1, &step);
  if (rc < 0) {
    a->failErrno = -rc;
    a->failStep = step;
  }
  syscall(SYS_exit_group, rc < 0 ? 1 : 0);
  return 0;
}

// probeNamespaces() -> "" when a confined child can get its own user, mount and PID namespaces
// with a fresh /proc here, else "<step>: <reason>" (behaviour.md §15.1 `processes`).
Napi::Value ProbeNamespaces(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  confine::Namespaces ns;
  ns.enabled = true;
  confine::PrepareMaps(&ns);
  ProbeArgs a = {&ns, 0, nullptr};
  const size_t stackSize = 64 * 1024;
  void* stack = mmap(nullptr, stackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return Napi::String::New(env, std::string("mmap: ") + strerror(errno));
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pid_t pid = clone(ProbeChild, static_cast<char*>(stack) + stackSize, CLONE_VM | CLONE_VFORK | SIGCHLD | confine::NamespaceFlags(ns), &a);
  int cloneErrno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  munmap(stack, stackSize);
  if (pid < 0) return Napi::String::New(env, std::string("clone(CLONE_NEWUSER | CLONE_NEWPID): ") + strerror(cloneErrno));
  int status = 0;
  waitpid(pid, &status, 0);
  if (a.failStep) return Napi::String::New(env, std::string(a.failStep) + ": " + strerror(a.failErrno));
  return Napi::String::New(env, "");
}

Napi::Value LandlockAbi(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), confine::KernelAbi());
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("landlockAbi", Napi::Function::New(env, LandlockAbi));
  exports.Set("probeNamespaces", Napi::Function::New(env, ProbeNamespaces));
  exports.Set("scrubEnviron", Napi::Function::New(env, ScrubEnviron));
  exports.Set("spawn", Napi::Function::New(env, Spawn));
  exports.Set("watch", Napi::Function::New(env, WatchExit));
  exports.Set("reap", Napi::Function::New(env, Reap));
  return exports;
}

}  // namespace

NODE_API_MODULE(loom_spawn, Init)
