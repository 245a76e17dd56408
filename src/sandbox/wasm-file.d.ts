// `import path from "...wasm" with { type: "file" }` gives the path of the embedded file (Bun).
declare module "@jitl/quickjs-wasmfile-release-sync/wasm" {
  const path: string;
  export default path;
}
