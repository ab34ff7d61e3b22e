"""Hostile programs in every language passk runs besides Python, each a whole program (a `solution`)
for the demo problem `demo_add` of problems/lang-<language>/: a fork bomb (a process flood where the
language cannot fork), a memory bomb (the runtime started under the limit, then filling memory), an
output flood, a network connection (it passes only if the connection fails), files and a process left
for the next candidate, and that next candidate (it passes only if nothing was left). Used by
tests/test_languages.py and scripts/attacks/language_attacks.py; expected labels are in EXPECTED."""

from __future__ import annotations

X64 = "x" * 64
# (label of the attack, acceptable statuses and reasons)
EXPECTED = {
    # (the CPU limit counts what the program's processes used together: a flood of them can reach it first;
    # a runtime that reports each refused process, as the BEAM does, can reach the output limit first)
    "fork_bomb": {"timed_out wall_time_limit", "timed_out cpu_time_limit", "failed signal:SIGKILL",
                  "failed runtime_error", "failed memory_limit", "failed output_limit"},
    "memory_bomb": {"failed memory_limit"},
    "output_flood": {"failed output_limit"},
    "network": {"passed"},
    "leave_files_and_a_process": {"passed"},
    "find_what_was_left": {"passed"},
}

_CPP = "#include<assert.h>\n#include<bits/stdc++.h>\n#include <unistd.h>\n#include <signal.h>\n" \
       "#include <sys/socket.h>\n#include <netinet/in.h>\n#include <arpa/inet.h>\nlong add(long a, long b) {\n"
_RUST_HEAD = "extern \"C\" { fn fork() -> i32; }\n" \
             "fn add(a: isize, b: isize) -> isize {\n"
_JAVA_HEAD = "import java.util.*;\nclass Problem {\n    public static long add(long a, long b) {\n"
_TS_HEAD = "declare var require: any;\ndeclare var process: any;\ndeclare var Buffer: any;\n"


def _go(imports, body):
    lines = "".join(f"    \"{name}\"\n" for name in ("testing", "fmt", *imports))
    return f"package add_test\n\nimport (\n{lines})\n\nfunc add(a int, b int) int {{\n{body}}}\n"


ATTACKS = {
    "cpp": {
        "fork_bomb": _CPP + "    while (true) fork();\n    return a + b;\n",
        "memory_bomb": _CPP + "    std::vector<char*> v;\n    while (true) { char* p = (char*)malloc(1 << 20); "
                              "memset(p, 1, 1 << 20); v.push_back(p); }\n    return a + b;\n",
        "output_flood": _CPP + f"    while (true) fputs(\"{X64}\\n\", stdout);\n    return a + b;\n",
        "network": _CPP + "    int s = socket(AF_INET, SOCK_STREAM, 0);\n    sockaddr_in addr{};\n"
                          "    addr.sin_family = AF_INET;\n    addr.sin_port = htons(80);\n"
                          "    inet_pton(AF_INET, \"1.1.1.1\", &addr.sin_addr);\n"
                          "    if (connect(s, (sockaddr*)&addr, sizeof addr) == 0) return -1;\n    return a + b;\n",
        "leave_files_and_a_process": _CPP + "    FILE* f = fopen(\"/tmp/passk-left\", \"w\"); if (f) fclose(f);\n"
                                            "    f = fopen(\"/dev/shm/passk-left\", \"w\"); if (f) fclose(f);\n"
                                            "    if (fork() == 0) { setsid(); sleep(100); }\n    return a + b;\n",
        "find_what_was_left": _CPP + "    if (access(\"/tmp/passk-left\", F_OK) == 0 || access(\"/dev/shm/passk-left\", F_OK) == 0)"
                                     " return -1;\n    for (auto& d : std::filesystem::directory_iterator(\"/proc\")) {\n"
                                     "        std::ifstream comm(d.path() / \"comm\"); std::string name;\n"
                                     "        if (comm >> name && name == \"sleep\") return -1;\n    }\n    return a + b;\n",
    },
    "rust": {
        "fork_bomb": _RUST_HEAD + "    loop { unsafe { fork(); } }\n",
        "memory_bomb": _RUST_HEAD + "    let mut v: Vec<Vec<u8>> = Vec::new();\n    loop { v.push(vec![1u8; 1 << 20]); }\n",
        "output_flood": _RUST_HEAD + f"    loop {{ println!(\"{X64}\"); }}\n",
        "network": _RUST_HEAD + "    if std::net::TcpStream::connect(\"1.1.1.1:80\").is_ok() { return -1; }\n    a + b\n",
        "leave_files_and_a_process": _RUST_HEAD + "    let _ = std::fs::write(\"/tmp/passk-left\", b\"x\");\n"
                                                  "    let _ = std::fs::write(\"/dev/shm/passk-left\", b\"x\");\n"
                                                  "    let _ = std::process::Command::new(\"sleep\").arg(\"100\").spawn();\n    a + b\n",
        "find_what_was_left": _RUST_HEAD + "    if std::path::Path::new(\"/tmp/passk-left\").exists()"
                                           " || std::path::Path::new(\"/dev/shm/passk-left\").exists() { return -1; }\n"
                                           "    for d in std::fs::read_dir(\"/proc\").unwrap() {\n"
                                           "        let comm = std::fs::read_to_string(d.unwrap().path().join(\"comm\")).unwrap_or_default();\n"
                                           "        if comm.trim() == \"sleep\" { return -1; }\n    }\n    a + b\n",
    },
    "go": {
        "fork_bomb": _go(["syscall"], "    for {\n        syscall.Syscall(syscall.SYS_FORK, 0, 0, 0)\n    }\n"),
        "memory_bomb": _go([], "    var keep [][]byte\n    for {\n        b := make([]byte, 1<<20)\n"
                               "        for i := range b {\n            b[i] = 1\n        }\n        keep = append(keep, b)\n    }\n"),
        "output_flood": _go([], f"    for {{\n        fmt.Println(\"{X64}\")\n    }}\n"),
        "network": _go(["net"], "    if c, err := net.Dial(\"tcp\", \"1.1.1.1:80\"); err == nil {\n        c.Close()\n"
                                "        return -1\n    }\n    return a + b\n"),
        "leave_files_and_a_process": _go(["os", "os/exec"], "    os.WriteFile(\"/tmp/passk-left\", []byte(\"x\"), 0644)\n"
                                                            "    os.WriteFile(\"/dev/shm/passk-left\", []byte(\"x\"), 0644)\n"
                                                            "    exec.Command(\"sleep\", \"100\").Start()\n    return a + b\n"),
        "find_what_was_left": _go(["os", "strings"], "    if _, err := os.Stat(\"/tmp/passk-left\"); err == nil {\n        return -1\n    }\n"
                                                     "    if _, err := os.Stat(\"/dev/shm/passk-left\"); err == nil {\n        return -1\n    }\n"
                                                     "    entries, _ := os.ReadDir(\"/proc\")\n    for _, e := range entries {\n"
                                                     "        comm, _ := os.ReadFile(\"/proc/\" + e.Name() + \"/comm\")\n"
                                                     "        if strings.TrimSpace(string(comm)) == \"sleep\" {\n            return -1\n        }\n    }\n    return a + b\n"),
    },
    "java": {
        "fork_bomb": _JAVA_HEAD + "        while (true) { try { new ProcessBuilder(\"sleep\", \"100\").start(); } catch (Exception e) {} }\n",
        "memory_bomb": _JAVA_HEAD + "        List<long[]> keep = new ArrayList<>();\n        while (true) keep.add(new long[1 << 17]);\n",
        "output_flood": _JAVA_HEAD + f"        while (true) System.out.println(\"{X64}\");\n",
        "network": _JAVA_HEAD + "        try (java.net.Socket s = new java.net.Socket()) {\n"
                                "            s.connect(new java.net.InetSocketAddress(\"1.1.1.1\", 80), 2000);\n            return -1;\n"
                                "        } catch (Exception e) {}\n        return a + b;\n",
        "leave_files_and_a_process": _JAVA_HEAD + "        try {\n            new java.io.FileOutputStream(\"/tmp/passk-left\").close();\n"
                                                  "            new java.io.FileOutputStream(\"/dev/shm/passk-left\").close();\n"
                                                  "            new ProcessBuilder(\"sleep\", \"100\").start();\n"
                                                  "        } catch (Exception e) {}\n        return a + b;\n",
        "find_what_was_left": _JAVA_HEAD + "        if (new java.io.File(\"/tmp/passk-left\").exists() || new java.io.File(\"/dev/shm/passk-left\").exists()"
                                           " || ProcessHandle.allProcesses().anyMatch(p -> p.info().command().orElse(\"\").endsWith(\"/sleep\")))"
                                           " return -1;\n        return a + b;\n",
    },
}

_JS = {
    "fork_bomb": "  const cp = require('child_process');\n  while (true) { try { cp.spawn('sleep', ['100']); } catch (e) {} }\n}\n",
    "memory_bomb": "  const keep = [];\n  while (true) keep.push(Buffer.alloc(1 << 20, 1));\n}\n",
    "output_flood": f"  const fs = require('fs');\n  while (true) fs.writeSync(1, '{X64}\\n');\n}}\n",
    "network": "  try {\n    require('child_process').execFileSync('passk-python', ['-c', "
               "'import socket; socket.create_connection((\"1.1.1.1\", 80), 2)'], {stdio: 'ignore'});\n"
               "    return -1;\n  } catch (e) {}\n  return a + b;\n}\n",
    "leave_files_and_a_process": "  const fs = require('fs');\n  fs.writeFileSync('/tmp/passk-left', 'x');\n"
                                 "  fs.writeFileSync('/dev/shm/passk-left', 'x');\n"
                                 "  require('child_process').spawn('sleep', ['100'], {detached: true, stdio: 'ignore'}).unref();\n"
                                 "  return a + b;\n}\n",
    "find_what_was_left": "  const fs = require('fs');\n  if (fs.existsSync('/tmp/passk-left') || fs.existsSync('/dev/shm/passk-left')) return -1;\n"
                          "  for (const d of fs.readdirSync('/proc')) {\n"
                          "    try { if (fs.readFileSync('/proc/' + d + '/comm', 'utf8').trim() === 'sleep') return -1; } catch (e) {}\n"
                          "  }\n  return a + b;\n}\n",
}
ATTACKS["javascript"] = {name: "function add(a, b){\n" + body for name, body in _JS.items()}
ATTACKS["typescript"] = {name: _TS_HEAD + "function add(a: number, b: number): number {\n" + body for name, body in _JS.items()}


def rows(language: str) -> list[dict]:
    """Sample rows for problems/lang-<language>/problems.jsonl, in the order they must run."""
    return [{"name": "demo_add", "solution": program, "attack": name} for name, program in ATTACKS[language].items()]


def _control(language: str) -> str:
    """The leaver and the finder in one program: what the finder looks for is there, so it must fail
    (the finder can see what a previous candidate would have left)."""
    attacks = ATTACKS[language]
    leave, find = attacks["leave_files_and_a_process"], attacks["find_what_was_left"]
    if language == "go":
        body = lambda p: p.split("func add(a int, b int) int {\n", 1)[1].rsplit("    return a + b\n}\n", 1)[0]
        return _go(["os", "os/exec", "strings"], body(leave) + body(find) + "    return a + b\n")
    head = {"cpp": _CPP, "rust": _RUST_HEAD, "java": _JAVA_HEAD}.get(language)
    if head is None:
        head = leave[:leave.index("{\n") + 2]
    last = {"rust": "    a + b\n", "javascript": "  return a + b;\n}\n", "typescript": "  return a + b;\n}\n"}.get(
        language, "    return a + b;\n" if language == "cpp" else "        return a + b;\n")
    found = find[len(head):]
    if language in ("javascript", "typescript"):
        found = found.replace("  const fs = require('fs');\n", "", 1)   # the leaver's is in scope
    return leave[:leave.rindex(last)] + found


for _language in ATTACKS:
    ATTACKS[_language]["control_finds_what_it_left_itself"] = _control(_language)
EXPECTED["control_finds_what_it_left_itself"] = {"failed assertion"}

# The run limit for these programs, where 2 s is too close to a language's start on a slow day: Clojure's
# JVM and core take ~1.5 s of CPU before the program's first line (its memory bomb otherwise times out);
# runghc interprets, and its memory bomb's lazy list fills 512 MB in ~1 s on an idle machine; the BEAM and
# Racket start in ~0.5-0.7 s of CPU, past 2 s when the machine is loaded (seen in CI beside other runs); Lua
# builds its memory bomb's strings by copying, 512 MB in ~1.5-1.9 s on an idle machine. Under gVisor, Ruby's
# start with test-unit and R's take ~1 s, and R's output flood (a write per `cat`, each a trapped syscall)
# needs ~2 s more to reach 1 MiB; the BEAM's start takes ~2 s there, and a program that runs passk-python
# from it (the network row) ~2 s more; Scala's runner (a JVM that loads the compiler's runner, then the
# program) ~3 s there, before its memory bomb or output flood starts
TIMEOUT_S = {"clojure": 6.0, "scala": 6.0, "haskell": 4.0, "elixir": 6.0, "racket": 4.0, "lua": 4.0, "ruby": 4.0,
             "r": 4.0}
# Under gVisor a runtime's start and its trapped writes are slower still: in a fresh container Node.js's
# output flood and Perl's (a write per print) had not reached the output limit at 2 s (both gVisor
# releases), so the table's run limit there is this many times the one above
GVISOR_TIMEOUT_FACTOR = 2.0

# MultiPL-E's other languages (issue 35): tests/language_attacks_more.py, control included
from tests.language_attacks_more import ATTACKS as _MORE, DOCUMENTED as _MORE_DOCUMENTED, TAMPERING as _MORE_TAMPERING  # noqa: E402

ATTACKS.update({name: dict(programs) for name, programs in _MORE.items()})
# how each language reports a failed check varies (an exception, an exit code), and a wrong program that
# redefines something the tests use may not compile or run at all: any of these is the attack's failure
EXPECTED["control_finds_what_it_left_itself"] |= {"failed runtime_error"}
EXPECTED["reads_the_nonce"] = {"passed", "failed runtime_error", "failed exited_early"}


# Tampering with the tests (issue 24): a WRONG `add` (a - b) that tries to make the tests pass anyway, by
# renaming passk's entry, switching assertions off, shadowing or patching them, or running no test. Each
# must fail. DOCUMENTED: what passk cannot keep out of the tests in that language (the tests share the
# candidate's text), each with the reason; listed in docs/security.md and counted as "documented".
_COUNTER_MACROS = ("#define PASSK_CAT2(a, b) a##b\n#define PASSK_CAT(a, b) PASSK_CAT2(a, b)\n"
                   "#define passk_tests_main() PASSK_CAT(passk_sel_, __COUNTER__)()\n"
                   "    return a - b;\n}\nint passk_sel_1() { return 0; }\nint passk_sel_0();\n"
                   "long passk_unused(long a, long b) {\n    return a - b;\n")
_UNSAFE = ("    static {\n        try {\n"
           "            java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField(\"theUnsafe\");\n"
           "            f.setAccessible(true);\n            sun.misc.Unsafe u = (sun.misc.Unsafe) f.get(null);\n"
           "            java.lang.reflect.Field d = Problem.class.getDeclaredField(\"$assertionsDisabled\");\n"
           "            u.putBoolean(u.staticFieldBase(d), u.staticFieldOffset(d), true);\n"
           "        } catch (Exception e) { }\n    }\n")
_JS_WRONG = "  return a - b;\n}\n"
TAMPERING = {
    "cpp": {
        "macro_renames_passks_entry": _CPP + _COUNTER_MACROS,
        "macro_switches_assert_off": _CPP + "#define NDEBUG\n#undef assert\n#define assert(x) ((void)0)\n    return a - b;\n",
        "macro_rewrites_the_tests": _CPP + "#define candidate(...) true ? 1 : 0\n    return a - b;\n",
    },
    "rust": {
        "macro_shadows_assert_eq": "macro_rules! assert_eq { ($($t:tt)*) => { () }; }\n"
                                   "fn add(a: isize, b: isize) -> isize {\n    a - b\n",
    },
    "go": {
        "runs_no_test": _go(["os"], "    return a - b\n") + "\nfunc init() {\n    os.Args = append(os.Args, \"-test.run=^$\")\n}\n",
    },
    "java": {
        "unsafe_switches_assertions_off": _JAVA_HEAD.replace("class Problem {\n", "class Problem {\n" + _UNSAFE)
                                          + "        return a - b;\n",
    },
}
_JS_TAMPERING = {
    "patches_node_assert": _JS_WRONG + "const passkA = require('node:assert');\n"
                           "for (const k of Object.keys(passkA)) { try { passkA[k] = function () {}; } catch (e) {} }\n",
    "replaces_require": _JS_WRONG + "const passkFake = function () {};\npasskFake.deepEqual = function () {};\n"
                        "require = function () { return passkFake; };\n",
}
TAMPERING["javascript"] = {name: "function add(a, b){\n" + body for name, body in _JS_TAMPERING.items()}
TAMPERING["typescript"] = {name: _TS_HEAD + "function add(a: number, b: number): number {\n" + body
                           for name, body in _JS_TAMPERING.items()}
DOCUMENTED = {
    "macro_rewrites_the_tests": "C++: the tests are compiled in the candidate's translation unit (they call its "
                                "functions and use its types), so its macros apply to them",
}
DOCUMENTED.update(_MORE_DOCUMENTED)
for _language, _programs in TAMPERING.items():
    ATTACKS[_language].update(_programs)
    for _name in _programs:
        EXPECTED[_name] = {"passed"} if _name in DOCUMENTED else {"failed assertion", "failed no_tests"}
for _language, _programs in _MORE_TAMPERING.items():
    ATTACKS[_language].update(_programs)
    for _name in _programs:
        EXPECTED[_name] = {"passed"} if _name in DOCUMENTED else {"failed assertion", "failed no_tests",
                                                                   "failed runtime_error", "failed compile_error",
                                                                   "failed output_rule", "failed exited_early"}
