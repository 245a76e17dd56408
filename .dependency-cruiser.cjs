/**
 * The layers of src/ (docs/architecture.md): every import points down.
 *
 *   app.ts, cli.ts, main.ts               composition root, command line and program entry
 *   api/, mcp/                            HTTP routes and the MCP server
 *   core/                                 what the product does (workflows, runs, triggers, connections)
 *   engine/                               runs: dispatch, execution, recovery, claims, what runs write
 *   pieces-runtime/                       the piece registry, loader, Activepieces packages
 *   store/                                SQL, migrations, the data dir, the run writer, the pieces' KV store
 *   sandbox/                              QuickJS for user code, in-thread or in sandbox processes
 *   http/ lib/ net/ schema/ pieces-sdk/ config.ts   the ground floor, importing nothing above it
 *
 * `npm run lint:deps` checks it; type-only imports count (they tie the layers as much as values do).
 */
const upper = (layers) => `^src/(${layers.join("|")})(/|\\.ts$)`;

module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      severity: "error",
      comment: "An import cycle ties two modules into one: break it by moving what both need one layer down.",
      from: {},
      to: { circular: true },
    },
    {
      name: "ground-floor-imports-nothing-above",
      severity: "error",
      comment: "schema, pieces-sdk, config, lib, net and http are the ground floor: they import only each other.",
      from: { path: "^src/(schema|pieces-sdk|lib|net|http)/|^src/config\\.ts$|^src/runtime-tuning\\.ts$" },
      to: { path: [upper(["sandbox", "store", "pieces-runtime", "engine", "core", "api", "mcp", "app", "cli", "main"]), "^pieces/"] },
    },
    {
      name: "sandbox-stands-alone",
      severity: "error",
      comment: "The sandbox runs user code with nothing but its input: it imports only the ground floor.",
      from: { path: "^src/sandbox/" },
      to: { path: [upper(["store", "pieces-runtime", "engine", "core", "api", "mcp", "app", "cli", "main"]), "^pieces/"] },
    },
    {
      name: "store-stays-below-the-engine",
      severity: "error",
      comment: "store says how things are stored; it knows nothing of pieces, runs or routes.",
      from: { path: "^src/store/" },
      to: { path: [upper(["sandbox", "pieces-runtime", "engine", "core", "api", "mcp", "app", "cli", "main"]), "^pieces/"] },
    },
    {
      name: "each-database-stands-alone",
      severity: "error",
      comment:
        "src/store/sqlite/ and src/store/postgres/ are two implementations of one port, each in its own dialect: neither imports the other (what both run alike lives beside the port, e.g. src/store/migration-sql.ts).",
      from: { path: "^src/store/(sqlite|postgres)/" },
      to: { path: "^src/store/(sqlite|postgres)/", pathNot: "^src/store/$1/" },
    },
    {
      name: "pieces-runtime-stays-below-the-engine",
      severity: "error",
      from: { path: "^src/pieces-runtime/" },
      to: { path: upper(["engine", "core", "api", "mcp", "app", "cli", "main"]) },
    },
    {
      name: "engine-imports-no-core",
      severity: "error",
      comment: "The engine runs what it is given; what it needs from above comes in through its constructor.",
      from: { path: "^src/engine/" },
      to: { path: upper(["core", "api", "mcp", "app", "cli", "main"]) },
    },
    {
      name: "core-imports-no-routes",
      severity: "error",
      from: { path: "^src/core/" },
      to: { path: upper(["api", "mcp", "app", "cli", "main"]) },
    },
    {
      name: "routes-import-no-app",
      severity: "error",
      comment: "api/ and mcp/ take their dependencies from api/deps.ts, not from the composition root.",
      from: { path: "^src/(api|mcp)/" },
      to: { path: upper(["app", "cli", "main"]) },
    },
    {
      name: "activepieces-enter-through-one-door",
      severity: "error",
      comment: "Activepieces packages are known only to src/pieces-runtime/activepieces/: the rest of the code imports its index.ts (and main.ts starts its host process).",
      from: { path: "^src/", pathNot: "^src/pieces-runtime/activepieces/|^src/main\\.ts$" },
      to: { path: "^src/pieces-runtime/activepieces/", pathNot: "^src/pieces-runtime/activepieces/index\\.ts$" },
    },
    {
      name: "pieces-use-the-sdk-only",
      severity: "error",
      comment: "A built-in piece is written like an outside one: against src/pieces-sdk and the ground floor (the code piece also uses src/sandbox).",
      from: { path: "^pieces/" },
      to: { path: upper(["store", "pieces-runtime", "engine", "core", "api", "mcp", "app", "cli", "main"]) },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist|public)/" },
    // TypeScript 7 (the Go port) has no JS compiler API that dependency-cruiser can load; swc parses the
    // TypeScript instead, type-only imports included.
    parser: "swc",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"], extensions: [".ts", ".tsx", ".js", ".json"] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
