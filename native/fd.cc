// loom_fd: descriptor and process calls Node does not expose (docs/architecture.md, "Persistent shells").
//
// cloexec(fd): sets FD_CLOEXEC on a descriptor. node-pty opens each PTY master with forkpty(3),
//   which leaves the master inheritable: every later child (other shells, one-shot /exec, CLI
//   actions) would hold every open shell's master, so one agent's command could type into another
//   agent's shell, and a shell would not see its terminal hang up when Loom closes it.
// mkfifo(path, mode): creates a named pipe; a shell reads its commands from one, where no job
//   reading the terminal can take them.
// signalIfStarted(pid, startTicks, signal): signals a process only if it is the one that started at
//   `startTicks` (field 22 of /proc/<pid>/stat). The check and the signal go through one pidfd, so a
//   pid reused between them is never signalled. Returns true when signalled.
#include <napi.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

namespace {

void ThrowErrno(Napi::Env env, const char* what) {
  Napi::Error e = Napi::Error::New(env, std::string(what) + ": " + strerror(errno));
  e.Set("errno", Napi::Number::New(env, errno));
  e.ThrowAsJavaScriptException();
}

Napi::Value Cloexec(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "cloexec(fd)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) ThrowErrno(env, "fcntl failed");
  return env.Undefined();
}

Napi::Value Mkfifo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "mkfifo(path, mode)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  if (mkfifo(path.c_str(), static_cast<mode_t>(info[1].As<Napi::Number>().Uint32Value())) < 0) ThrowErrno(env, "mkfifo failed");
  return env.Undefined();
}

// Field 22 (starttime) of /proc/<pid>/stat, read through the pidfd's process; -1 when unreadable.
long long StartTicks(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = fopen(path, "re");
  if (!f) return -1;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  char* p = strrchr(buf, ')');
  if (!p) return -1;
  p++;
  for (int field = 2; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p) return -1;
    p++;
  }
  return strtoll(p, nullptr, 10);
}

Napi::Value SignalIfStarted(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsNumber()) {
    Napi::TypeError::New(env, "signalIfStarted(pid, startTicks, signal)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int pid = info[0].As<Napi::Number>().Int32Value();
  long long ticks = info[1].As<Napi::Number>().Int64Value();
  int sig = info[2].As<Napi::Number>().Int32Value();
  if (pid <= 0) return Napi::Boolean::New(env, false);
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    if (errno == ESRCH) return Napi::Boolean::New(env, false);
    ThrowErrno(env, "pidfd_open failed");
    return env.Undefined();
  }
  // The pidfd pins the process: if /proc/<pid> now shows the expected start, the pidfd is that process.
  bool same = StartTicks(pid) == ticks;
  bool sent = same && syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0) == 0;
  int err = errno;
  close(fd);
  if (same && !sent && err != ESRCH) {
    errno = err;
    ThrowErrno(env, "pidfd_send_signal failed");
    return env.Undefined();
  }
  return Napi::Boolean::New(env, sent);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("cloexec", Napi::Function::New(env, Cloexec));
  exports.Set("mkfifo", Napi::Function::New(env, Mkfifo));
  exports.Set("signalIfStarted", Napi::Function::New(env, SignalIfStarted));
  return exports;
}

}  // namespace

NODE_API_MODULE(loom_fd, Init)
