/**
 * The gate's connection checks against the workspace's real connections (docs/architecture.md, the layers: read
 * through the storage port, on SQLite and PostgreSQL alike): a step naming a connection of another piece is
 * refused at publish with the same message, which lists the connections of the step's own piece; save marks the
 * step invalid; with each step on a connection of its own piece the workflow publishes.
 */
import { beforeAll, expect, test } from "bun:test";
import { testApp, type TestApp } from "../support/app";
import { createWorkflow } from "./fixtures";

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

async function connection(body: Record<string, unknown>): Promise<string> {
  const res = await t.req("POST", "/api/connections", { body: { clientId: "c", clientSecret: "s", ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

function definition(oauth2Connection: string, githubConnection: string): any {
  return {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      nextAction: {
        name: "call_api",
        type: "PIECE",
        pieceId: "oauth2",
        actionId: "request",
        connectionId: oauth2Connection,
        config: { method: "GET", url: "https://api.example.com/me" },
        nextAction: {
          name: "issue",
          type: "PIECE",
          pieceId: "github",
          actionId: "create_issue",
          connectionId: githubConnection,
          config: { repository: "a/b", title: "x" },
        },
      },
    },
  };
}

test("a step naming a connection of another piece is refused at publish, naming its own piece's connections; the right ones publish", async () => {
  const generic = await connection({
    pieceId: "oauth2",
    name: "generic",
    config: { authUrl: "https://idp.example.com/a", tokenUrl: "https://idp.example.com/t" },
  });
  const github = await connection({ pieceId: "github", name: "gh" });

  // Swapped: each step names the other piece's connection.
  const wf = await createWorkflow(t, { definition: definition(github, generic) });
  expect(wf.definition.trigger.nextAction.valid).toBe(false);
  expect(wf.definition.trigger.nextAction.nextAction.valid).toBe(false);
  const refused = await t.req("POST", `/api/workflows/${wf.id}/publish`);
  expect(refused.status).toBe(422);
  expect(refused.body.error.code).toBe("NOT_PUBLISHABLE");
  const errors = refused.body.error.details.errors as Array<{ path: string; code: string; message: string; allowed: string[] }>;
  expect(errors.map((e) => [e.path, e.code])).toEqual([
    ["trigger.nextAction.connectionId", "UNKNOWN_CONNECTION"],
    ["trigger.nextAction.nextAction.connectionId", "UNKNOWN_CONNECTION"],
  ]);
  expect(errors[0]!.message).toBe(`connection ${github} is not a connection of piece "oauth2" in this workspace; connections of oauth2: ${generic} (generic)`);
  expect(errors[0]!.allowed).toEqual([generic]);
  expect(errors[1]!.message).toBe(`connection ${generic} is not a connection of piece "github" in this workspace; connections of github: ${github} (gh)`);
  expect(errors[1]!.allowed).toEqual([github]);
  expect(refused.body.error.message).toContain(`trigger.nextAction.connectionId: ${errors[0]!.message}`);
  expect((await t.req("POST", "/api/workflows/validate", { body: definition(github, generic) })).body.data.errors).toEqual(errors);
  expect((await t.req("GET", `/api/workflows/${wf.id}`)).body.data.status).toBe("draft");

  const fixed = await t.req("PUT", `/api/workflows/${wf.id}`, { body: { definition: definition(generic, github) } });
  expect(fixed.status, fixed.text).toBe(200);
  expect(fixed.body.data.definition.trigger.nextAction.valid).toBe(true);
  expect(fixed.body.data.definition.trigger.nextAction.nextAction.valid).toBe(true);
  const published = await t.req("POST", `/api/workflows/${wf.id}/publish`);
  expect(published.status, published.text).toBe(200);
  expect(published.body.data.status).toBe("active");
});

test("steps in router branches, loop bodies and error branches have their connections checked too", async () => {
  const generic = await connection({
    pieceId: "oauth2",
    name: "nested",
    config: { authUrl: "https://idp.example.com/a", tokenUrl: "https://idp.example.com/t" },
  });
  const issue = (name: string, connectionId?: string) => ({
    name,
    type: "PIECE",
    pieceId: "github",
    actionId: "create_issue",
    ...(connectionId ? { connectionId } : {}),
    config: { repository: "a/b", title: "x" },
  });
  const d = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      nextAction: {
        name: "route",
        type: "ROUTER",
        branches: [
          { name: "one", conditions: [], firstAction: issue("in_branch", generic) },
          {
            name: "two",
            conditions: [],
            firstAction: {
              name: "each",
              type: "LOOP_ON_ITEMS",
              config: { items: "{{trigger.body.items}}" },
              firstLoopAction: { ...issue("in_loop"), onErrorAction: issue("on_error", generic) },
            },
          },
        ],
      },
    },
  };
  const result = (await t.req("POST", "/api/workflows/validate", { body: d })).body.data;
  const connectionErrors = (result.errors as Array<{ path: string; code: string; allowed: string[] }>).filter((e) => e.code.endsWith("_CONNECTION"));
  expect(connectionErrors.map((e) => [e.path, e.code])).toEqual([
    ["trigger.nextAction.branches.0.firstAction.connectionId", "UNKNOWN_CONNECTION"],
    ["trigger.nextAction.branches.1.firstAction.firstLoopAction.connectionId", "MISSING_CONNECTION"],
    ["trigger.nextAction.branches.1.firstAction.firstLoopAction.onErrorAction.connectionId", "UNKNOWN_CONNECTION"],
  ]);
  const github = (await t.req("GET", "/api/connections?pieceId=github")).body.data.map((c: { id: string }) => c.id);
  for (const e of connectionErrors) expect(e.allowed).toEqual(github);
});

test("each piece's connections are read once per check; a piece installed meanwhile is read and checked too", async () => {
  const generic = await connection({
    pieceId: "oauth2",
    name: "counted",
    config: { authUrl: "https://idp.example.com/a", tokenUrl: "https://idp.example.com/t" },
  });
  const workflows = t.deps.workflows;
  const real = workflows.pieces;
  let githubInstalled = false;
  const reads: string[] = [];
  // github is "installed" while the gate reads the first connections: after it named the pieces to read.
  const pieces = { ...real, get: (id: string, pin?: string) => (id === "github" && !githubInstalled ? undefined : real.get(id, pin)) };
  for (const key of ["list", "servedVersion", "isRunnable", "trigger", "whyNot"] as const) if (real[key]) (pieces as any)[key] = real[key]!.bind(real);
  Object.defineProperty(workflows, "pieces", { configurable: true, get: () => pieces });
  workflows.setConnectionDirectory(async (workspaceId, pieceId) => {
    reads.push(pieceId);
    githubInstalled = true;
    return t.deps.connections.choices(workspaceId, pieceId);
  });
  try {
    const d = definition(generic, generic);
    d.trigger.nextAction.nextAction.nextAction = { ...d.trigger.nextAction, name: "call_again", nextAction: undefined };
    const result = (await t.req("POST", "/api/workflows/validate", { body: d })).body.data;
    expect(reads).toEqual(["oauth2", "github"]);
    const errors = result.errors as Array<{ path: string; code: string; message: string }>;
    expect(errors.map((e) => [e.path, e.code])).toEqual([["trigger.nextAction.nextAction.connectionId", "UNKNOWN_CONNECTION"]]);
    expect(errors[0]!.message).toContain('is not a connection of piece "github" in this workspace; connections of github:');
  } finally {
    delete (workflows as any).pieces;
    workflows.setConnectionDirectory(t.deps.connections.choices);
  }
});
