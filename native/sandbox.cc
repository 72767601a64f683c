// loom_sandbox: the exec wrapper of a `workspace` agent's shells (behaviour.md §15, docs/sandbox.md).
//
// node-pty forks and executes its program itself, with no hook to run code in the child, so a
// confined shell starts as this wrapper, which confines itself and then executes the shell:
//
//   loom_sandbox [--abi N] [--rw PATH]... [--ro PATH]... -- PROGRAM [ARG]...
//
// --rw: read and write beneath PATH; --ro: read and execute; the usual device nodes are always
// added. --abi caps the Landlock ABI used. On any failure it prints why and exits 126 without
// executing anything (fail closed).
#include "confine.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

static int Fail(const char* what, int err) {
  fprintf(stderr, "loom_sandbox: %s: %s\n", what, strerror(err));
  return 126;
}

int main(int argc, char** argv) {
  confine::Plan plan;
  plan.devices = confine::DefaultDevices();
  int abiMax = -1;
  int i = 1;
  for (; i < argc; i++) {
    const char* a = argv[i];
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (i + 1 >= argc) return Fail("usage", EINVAL);
    if (strcmp(a, "--rw") == 0) plan.readWrite.emplace_back(argv[++i]);
    else if (strcmp(a, "--ro") == 0) plan.readOnly.emplace_back(argv[++i]);
    else if (strcmp(a, "--abi") == 0) abiMax = atoi(argv[++i]);
    else return Fail("usage", EINVAL);
  }
  if (i >= argc) return Fail("usage: no program", EINVAL);
  const char* step = "";
  int ruleset = confine::BuildRuleset(plan, abiMax, &step);
  if (ruleset < 0) return Fail(step, -ruleset);
  int rc = confine::Restrict(ruleset, &step);
  if (rc < 0) return Fail(step, -rc);
  close(ruleset);
  execve(argv[i], argv + i, environ);
  return Fail(argv[i], errno);
}
