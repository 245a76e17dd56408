/**
 * Two creates of one connection name at once: both pass the name check while the piece checks the
 * credentials, and the unique index refuses the second insert. The service reads that refusal by its kind
 * ("unique", src/lib/storage-error.ts), not by a database's code or message, and answers 409 naming the
 * connection that has the name — on SQLite and on PostgreSQL alike (WEFT_TEST_STORAGE=postgres).
 */
import { expect, test } from "bun:test";
import { action, Auth, definePiece } from "../../src/pieces-sdk";
import { testApp } from "../support/app";

test("the second of two creates racing for one name answers 409 CONFLICT, not 500", async () => {
  const t = await testApp();
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let checking = 0;
  let bothChecking!: () => void;
  const both = new Promise<void>((resolve) => (bothChecking = resolve));
  t.deps.pieces.register(
    definePiece({
      id: "slow-check",
      name: "Slow credential check",
      description: "test",
      version: "1.0.0",
      auth: Auth.apiKey({ header: "x-api-key" }),
      // Holds both creates after their name check, until both are there.
      validateCredentials: async () => {
        if (++checking === 2) bothChecking();
        await released;
        return { ok: true };
      },
      actions: [action({ id: "noop", name: "noop", description: "noop", run: () => ({}) })],
    }),
  );
  const creates = [1, 2].map(() => t.req("POST", "/api/connections", { body: { pieceId: "slow-check", name: "Shared", apiKey: "k" } }));
  await both;
  release();
  const answers = await Promise.all(creates);
  expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
  const created = answers.find((res) => res.status === 201)!.body.data;
  const refused = answers.find((res) => res.status === 409)!.body.error;
  expect(refused.code).toBe("CONFLICT");
  expect(refused.message).toBe(`a connection named "Shared" already exists in this workspace (${created.id}); choose another name`);
  const listed = (await t.req("GET", "/api/connections")).body.data.filter((c: { name: string }) => c.name === "Shared");
  expect(listed).toHaveLength(1);
});
