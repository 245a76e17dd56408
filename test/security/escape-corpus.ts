/**
 * Attempts to reach the host from user code: the shapes of the n8n sandbox escapes
 * (CVE-2025-68613, CVE-2026-1470, CVE-2026-25049) and the obvious globals. Each entry, if it
 * escaped, would return a host object or kill the test process (`exit(7)`).
 */
export const JS_ESCAPES: Record<string, string> = {
  "constructor chain": "return this.constructor.constructor('return process')().exit(7)",
  "constructor chain, typeof": "return typeof this.constructor.constructor('return process')()",
  "template literal": "return this.constructor.constructor`return process`().exit(7)",
  "computed property": "const c = 'constr' + 'uctor'; return this[c][c]('return process')().exit(7)",
  "computed property via input": "return input[['constructor'][0]][['constructor'][0]]('return Bun')().spawn(['true'])",
  "Reflect.construct": "return Reflect.construct(Function, ['return process'])().exit(7)",
  "Reflect.get on async function":
    "const AsyncFunction = Reflect.get(Reflect.getPrototypeOf(async function () {}), 'constructor'); return (await AsyncFunction('return process')()).exit(7)",
  "Reflect.apply": "return Reflect.apply(Function, null, ['return require'])()('fs')",
  "generator constructor": "return (function* () {}).constructor('return process')().next().value.exit(7)",
  "arrow __proto__": "return (() => {}).__proto__.constructor('return globalThis.process')().exit(7)",
  "console host function": "return console.log.constructor('return process')().exit(7)",
  "globalThis.process": "return globalThis.process.exit(7)",
  process: "return process.exit(7)",
  Bun: "return Bun.spawnSync(['true'])",
  require: "return require('child_process')",
  "module.require": "return module.require('fs')",
  "import()": "return (await import('fs')).readFileSync('/etc/passwd', 'utf8')",
  "import() node:": "return (await import('node:child_process')).execSync('true')",
  fetch: "return await fetch('http://127.0.0.1/')",
  eval: "return eval('process').exit(7)",
  "indirect eval": "return (0, eval)('this.process').exit(7)",
  "Function in with": "with (this) { return constructor.constructor('return process')().exit(7) }",
  "Error.prepareStackTrace": "Error.prepareStackTrace = (e, frames) => frames[0].getThis(); return new Error().stack.process.exit(7)",
  "arguments.callee.caller": "function f() { return arguments.callee.caller } return f().constructor('return process')().exit(7)",
  "Symbol.unscopables": "return Object.getOwnPropertyNames(globalThis).filter(n => /process|Bun|require|Deno|fetch|setTimeout|__/.test(n))",
  setTimeout: "return await new Promise(r => setTimeout(r, 1))",
  WebAssembly: "return typeof WebAssembly.Memory",
};

/** Globals a host leaks; none may exist inside the sandbox. */
export const HOST_GLOBALS = [
  "process",
  "Bun",
  "require",
  "module",
  "exports",
  "Deno",
  "fetch",
  "setTimeout",
  "setInterval",
  "queueMicrotask",
  "WebAssembly",
  "SharedArrayBuffer",
  "Atomics",
  "std",
  "os",
  "print",
  "scriptArgs",
  "__dirname",
  "Buffer",
];
