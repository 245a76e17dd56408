/**
 * The new-connection form (public/src/components/connection-form.tsx): a piece's custom auth shows one field per
 * declared property, and every secret one — a `secret_text` property (Property.secretText in the pieces SDK) or a
 * text with the password format (Activepieces' SECRET_TEXT, docs/activepieces.md) — is a password field, so a
 * key typed in is not shown on screen.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { useHappyDom } from "./fake-api";

useHappyDom();

afterEach(() => {
  document.body.innerHTML = "";
});

describe("the new-connection form", () => {
  test("a custom auth's secret properties are password fields, the others text fields", async () => {
    const { render, h } = await import("preact");
    const { ConnectionForm } = await import("../../public/src/components/connection-form");
    const piece = {
      id: "homelab",
      name: "Home lab",
      auth: {
        kind: "custom",
        props: {
          host: { displayName: "Host", propertyType: "short_text", required: true },
          token: { displayName: "Token", propertyType: "secret_text", required: true },
          password: { displayName: "Password", propertyType: "short_text", format: "password" },
        },
      },
    };
    const root = document.createElement("div");
    document.body.append(root);
    render(h(ConnectionForm, { piece: piece as never, onCreated: () => undefined }), root);
    const typeOf = (label: string) =>
      [...root.querySelectorAll("label")]
        .find((l) => l.querySelector("span")?.textContent === label)
        ?.querySelector("input")
        ?.getAttribute("type");
    expect({ host: typeOf("Host"), token: typeOf("Token"), password: typeOf("Password") }).toEqual({ host: "text", token: "password", password: "password" });
  });
});
