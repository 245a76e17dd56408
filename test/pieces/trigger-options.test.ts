/** Dynamic options of a trigger's property (the builder fills a trigger's dropdowns the same way as an action's). */
import { beforeAll, describe, expect, test } from "bun:test";
import { definePiece, Property, trigger } from "../../src/pieces-sdk";
import { testApp, type TestApp } from "../support/app";

const piece = definePiece({
  id: "inbox_watch",
  name: "Inbox watch",
  version: "1.0.0",
  description: "a polling trigger whose folder list depends on the account",
  triggers: [
    trigger({
      id: "new_mail",
      name: "New mail",
      description: "a new message in a folder",
      type: "poll",
      props: {
        account: Property.staticDropdown({ displayName: "Account", required: true, options: ["work", "home"] }),
        folder: Property.dropdown({
          displayName: "Folder",
          required: true,
          refreshers: ["account"],
          options: ({ config }) => ({
            options: [`${config.account ?? "any"}/inbox`, `${config.account ?? "any"}/archive`].map((f) => ({ label: f, value: f })),
          }),
        }),
      },
      poll: async () => [],
      sampleData: { subject: "hello" },
    }),
  ],
});

describe("POST /api/pieces/{id}/triggers/{triggerId}/options/{propertyName}", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
    t.deps.pieces.register(piece);
  });

  test("lists the trigger property's options for the trigger's current config", async () => {
    const projection = (await t.req("GET", "/api/pieces/inbox_watch/triggers/new_mail")).body.data;
    expect(projection.dynamicFields).toEqual(["folder"]);
    const res = await t.req("POST", "/api/pieces/inbox_watch/triggers/new_mail/options/folder", { body: { config: { account: "work" } } });
    expect(res.status).toBe(200);
    expect(res.body.data.options).toEqual([
      { label: "work/inbox", value: "work/inbox" },
      { label: "work/archive", value: "work/archive" },
    ]);
  });

  test("a property without dynamic options, or an unknown trigger, is refused with what exists", async () => {
    const stat = await t.req("POST", "/api/pieces/inbox_watch/triggers/new_mail/options/account", { body: {} });
    expect(stat.status).toBe(400);
    expect(stat.body.error.message).toContain('properties with dynamic options: "folder"');
    const missing = await t.req("POST", "/api/pieces/inbox_watch/triggers/nope/options/folder", { body: {} });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain("new_mail");
    const unknown = await t.req("POST", "/api/pieces/inbox_watch/triggers/new_mail/options/nope", { body: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('trigger "inbox_watch.new_mail"');
  });
});
