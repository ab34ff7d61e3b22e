// passk's preload for JavaScript and TypeScript programs (NODE_OPTIONS=--require=<this file>): it runs
// before the program's first line, so before the candidate's code can patch anything. It takes node's
// `assert` as it is then, copies it into an object of its own that it freezes, and binds that, read-only
// and not configurable, on the global object under the name the program's tests use for it:
// `passk$assert$<nonce>` (harness/languages.py writes the tests that way). The candidate's code cannot
// name it without the job's nonce, cannot change it, and patching `require('node:assert')` or `require`
// changes only what the candidate itself gets.
//
// The name is found in the program's own text: the tests come after the candidate's code, so the last
// occurrence is theirs. One more thing it can say that the program cannot: whether the program parses.
// Node reports a program that does not parse with a SyntaxError, as it reports one the program throws;
// the guard compiles the program first (without running it) and, when that fails, writes the nonce and
// ":syntax_error" on the completion marker's descriptor (fd 3), so that the label comes from that and
// not from text the program could print. It reads nothing else and never exits.
"use strict";
(function () {
  const fs = require("fs");
  const main = process.argv[1];
  let text;
  try {
    text = fs.readFileSync(main, "utf8");
  } catch (e) {
    return;
  }
  const stem = "passk$assert$";
  const at = text.lastIndexOf(stem);
  if (at < 0) return;
  const nonce = text.slice(at + stem.length, at + stem.length + 32);
  if (!/^[0-9a-f]{32}$/.test(nonce)) return;

  try {
    const source = text.startsWith("#!") ? "//" + text.slice(2) : text;
    new (require("vm").Script)(require("module").wrap(source), { filename: main });
  } catch (e) {
    if (e instanceof SyntaxError) {
      try { fs.writeSync(3, nonce + ":syntax_error"); } catch (_) { /* no marker descriptor */ }
      return;
    }
  }

  const apply = Reflect.apply;
  const copies = new Map();
  function copy(original) {   // a function that calls node's, with node's functions as its properties
    if (copies.has(original)) return copies.get(original);
    const own = function assert() { return apply(original, undefined, arguments); };
    copies.set(original, own);
    for (const key of Reflect.ownKeys(original)) {
      if (key === "prototype" || key === "length" || key === "name") continue;
      const value = original[key];
      own[key] = typeof value === "function" && Reflect.ownKeys(value).includes("strict") ? copy(value) : value;
    }
    return Object.freeze(own);
  }
  Object.defineProperty(globalThis, stem + nonce, {
    value: copy(require("assert")), writable: false, configurable: false, enumerable: false,
  });
})();
