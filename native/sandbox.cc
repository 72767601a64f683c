// loom_sandbox: the exec wrapper of a `workspace` agent's shells (behaviour.md §15, docs/sandbox.md).
//
// node-pty forks and executes its program itself, with no hook to run code in the child, so a
// confined shell starts as this wrapper, which confines itself and then executes the shell:
//
//   loom_sandbox [--abi N] [--rw PATH]... [--ro PATH]... [--tcp] [--tcp-port P]... [--namespaces]
//                [--netns] [--own-tty] -- PROGRAM [ARG]...
//
// --rw: read and write beneath PATH (opened without following links: a swapped root fails);
// --ro: read and execute; the usual device nodes are always added. --tcp: TCP connects only to the
// --tcp-port ports. --own-tty: the terminal on stdin (the shell's own PTY) and /dev/tty, no other
// terminal. --namespaces: the program runs as PID 1 of its own user, mount and PID namespaces with
// a fresh /proc (--netns: and an empty network namespace); this process stays outside, waits for
// it, passes signals on and exits with its status. --abi caps the Landlock ABI used. On any
// failure it prints why and exits 126 without executing anything (fail closed).
#include "confine.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>

extern char** environ;

static int Fail(const char* what, int err) {
  fprintf(stderr, "loom_sandbox: %s: %s\n", what, strerror(err));
  return 126;
}

struct Options {
  confine::Plan plan;
  confine::Namespaces ns;
  int abiMax = -1;
  bool ownTty = false;
  int program = 0;
};

static bool Parse(int argc, char** argv, Options* o) {
  int i = 1;
  for (; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "--") == 0) {
      o->program = i + 1;
      return o->program < argc;
    }
    if (strcmp(a, "--tcp") == 0) o->plan.confineTcp = true;
    else if (strcmp(a, "--namespaces") == 0) o->ns.enabled = true;
    else if (strcmp(a, "--netns") == 0) o->ns.net = true;
    else if (strcmp(a, "--own-tty") == 0) o->ownTty = true;
    else if (i + 1 >= argc) return false;
    else if (strcmp(a, "--rw") == 0) o->plan.readWrite.emplace_back(argv[++i]);
    else if (strcmp(a, "--ro") == 0) o->plan.readOnly.emplace_back(argv[++i]);
    else if (strcmp(a, "--tcp-port") == 0) o->plan.connectPorts.push_back(strtoull(argv[++i], nullptr, 10));
    else if (strcmp(a, "--abi") == 0) o->abiMax = atoi(argv[++i]);
    else return false;
  }
  return false;
}

// Confine this process and execute the program; returns only on failure.
static int ConfineAndExec(Options& o, char** argv) {
  std::string step;
  int ruleset = confine::BuildRuleset(o.plan, o.abiMax, &step);
  if (ruleset < 0) return Fail(step.c_str(), -ruleset);
  const char* cstep = nullptr;
  if (o.ns.enabled) {
    int rc = confine::MountProc(ruleset, &cstep);
    if (rc < 0) return Fail(cstep, -rc);
  }
  int rc = confine::Restrict(ruleset, &cstep);
  if (rc < 0) return Fail(cstep, -rc);
  close(ruleset);
  execve(argv[o.program], argv + o.program, environ);
  return Fail(argv[o.program], errno);
}

static pid_t child = -1;

static void PassOn(int sig) {
  if (child > 0) kill(child, sig);
}

int main(int argc, char** argv) {
  Options o;
  o.plan.devices = confine::DefaultDevices();
  if (!Parse(argc, argv, &o)) return Fail("usage", EINVAL);
  if (o.ownTty && isatty(0)) {
    const char* tty = ttyname(0);
    if (!tty) return Fail("ttyname", errno);
    o.plan.devices.emplace_back(tty);
    o.plan.devices.emplace_back("/dev/tty");
  }
  if (!o.ns.enabled) return ConfineAndExec(o, argv);
  confine::PrepareMaps(&o.ns);
  if (unshare(confine::NamespaceFlags(o.ns)) != 0) return Fail("unshare(CLONE_NEWUSER | CLONE_NEWPID)", errno);
  const char* cstep = nullptr;
  int rc = confine::MapIds(o.ns, &cstep);
  if (rc < 0) return Fail(cstep, -rc);
  child = fork();
  if (child < 0) return Fail("fork", errno);
  if (child == 0) {
    // PID 1 of the new namespace: it ends with this wrapper, and everything in it ends with it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    return ConfineAndExec(o, argv);
  }
  for (int sig : {SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGUSR1, SIGUSR2}) signal(sig, PassOn);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return Fail("waitpid", errno);
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
