import { describe, expect, test } from "bun:test";
import { MASK, maskSecrets, serializeCapped, serializeMasked } from "../../src/engine/step-data";

describe("serializeMasked (stored step input)", () => {
  test("gives what masking then serialising gives, for inputs with and without secret-named properties", () => {
    const inputs: unknown[] = [
      { url: "https://x.test", body: { name: "Ada", n: 21 } },
      { headers: { Authorization: "Bearer abc", "x-api-key": "k" }, nested: [{ password: "p", keep: "v" }] },
      { my_token: "t", tokenizer: "not a secret", empty_token: "" },
      "a string",
      [1, { client_secret: "s" }],
    ];
    for (const input of inputs) expect(serializeMasked(input, [], 10_000)).toEqual(serializeCapped(maskSecrets(input, []), 10_000));
    expect(JSON.parse(serializeMasked({ my_token: "t", tokenizer: "x" }, [], 10_000).text!)).toEqual({ my_token: MASK, tokenizer: "x" });
  });

  test("known secret values are masked anywhere in the text, and a truncated input is masked before its preview", () => {
    expect(serializeMasked({ note: "key is s3cr3t-value" }, ["s3cr3t-value"], 10_000).text).toBe(JSON.stringify({ note: `key is ${MASK}` }));
    const big = { password: "hunter22", filler: "x".repeat(5000) };
    expect(serializeMasked(big, [], 1000).text).not.toContain("hunter22");
  });
});
