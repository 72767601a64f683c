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
#include <napi.h>
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string>
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

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("spawn", Napi::Function::New(env, Spawn));
  exports.Set("watch", Napi::Function::New(env, WatchExit));
  exports.Set("reap", Napi::Function::New(env, Reap));
  return exports;
}

}  // namespace

NODE_API_MODULE(loom_spawn, Init)
