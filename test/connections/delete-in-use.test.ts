/** Deleting a connection a live workflow uses is refused, naming the workflows (issue 8 item 1). */
import { expect, test } from "bun:test";
import { testApp } from "../support/app";

test("delete is refused while a live workflow uses the connection; allowed once it is unpublished", async () => {
  const t = await testApp();
  const made = await t.req("POST", "/api/connections", {
    body: {
      pieceId: "oauth2",
      name: "used",
      clientId: "c",
      clientSecret: "s",
      config: { authUrl: "https://idp.example.com/a", tokenUrl: "https://idp.example.com/t" },
    },
  });
  const id = made.body.data.id;
  const definition = {
    schemaVersion: 2,
    trigger: {
      name: "trigger",
      type: "manual",
      nextAction: {
        name: "call_api",
        type: "PIECE",
        pieceId: "oauth2",
        actionId: "request",
        connectionId: id,
        config: { method: "GET", url: "https://api.example.com/me" },
      },
    },
  };
  const wf = await t.req("POST", "/api/workflows", { body: { name: "Uses the connection", definition } });
  expect(wf.status).toBe(201);
  const unused = await t.req("POST", "/api/workflows", { body: { name: "Draft only", definition } });
  expect(unused.status).toBe(201);
  const published = await t.req("POST", `/api/workflows/${wf.body.data.id}/publish`);
  expect(published.status, published.text).toBe(200);

  const refused = await t.req("DELETE", `/api/connections/${id}`);
  expect(refused.status).toBe(409);
  expect(refused.body.error.message).toContain('"Uses the connection"');
  expect(refused.body.error.message).toContain(wf.body.data.id);
  expect(refused.body.error.message).not.toContain("Draft only"); // not live: it does not block
  expect(refused.body.error.message).toContain("unpublish");
  expect((await t.req("GET", `/api/connections/${id}`)).status).toBe(200);

  expect((await t.req("POST", `/api/workflows/${wf.body.data.id}/unpublish`)).status).toBe(200);
  expect((await t.req("DELETE", `/api/connections/${id}`)).status).toBe(200);
});
