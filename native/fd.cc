// loom_fd: descriptor flags Node does not expose (docs/architecture.md, "Persistent shells").
//
// cloexec(fd): sets FD_CLOEXEC on a descriptor. node-pty opens each PTY master with forkpty(3),
//   which leaves the master inheritable: every later child (other shells, one-shot /exec, CLI
//   actions) would hold every open shell's master, so one agent's command could type into another
//   agent's shell, and a shell would not see its terminal hang up when Loom closes it.
#include <napi.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>

namespace {

Napi::Value Cloexec(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "cloexec(fd)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
    Napi::Error::New(env, std::string("fcntl failed: ") + strerror(errno)).ThrowAsJavaScriptException();
  }
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("cloexec", Napi::Function::New(env, Cloexec));
  return exports;
}

}  // namespace

NODE_API_MODULE(loom_fd, Init)
