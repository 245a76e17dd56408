/** Encryption at rest (src/core/crypto.ts): AES-256-GCM, key from config or a 0600 key file. */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { secretBox } from "../../src/core/crypto";

const dir = () => mkdtempSync(join(tmpdir(), "weft-crypto-"));

describe("secretBox", () => {
  test("round-trips, uses a fresh nonce per value, and never stores the plain text", () => {
    const box = secretBox({ dataDir: dir(), encryptionKey: "k".repeat(32) });
    const a = box.encrypt("s3cret value");
    const b = box.encrypt("s3cret value");
    expect(a).not.toBe(b);
    expect(a).not.toContain("s3cret");
    expect(box.decrypt(a)).toBe("s3cret value");
  });

  test("without a configured key it creates a 0600 key file once and reuses it", () => {
    const d = dir();
    const first = secretBox({ dataDir: d });
    const mode = statSync(join(d, "encryption.key")).mode & 0o777;
    expect(mode).toBe(0o600);
    const blob = first.encrypt("x");
    expect(secretBox({ dataDir: d }).decrypt(blob)).toBe("x");
  });

  test("tampering and a foreign key are refused; previous keys still decrypt", () => {
    const d = dir();
    const old = secretBox({ dataDir: d, encryptionKey: "old-key-".repeat(5) });
    const blob = old.encrypt("payload");
    const tampered = blob.slice(0, -2) + (blob.endsWith("A") ? "BB" : "AA");
    expect(() => old.decrypt(tampered)).toThrow();
    const fresh = secretBox({ dataDir: d, encryptionKey: "new-key-".repeat(5) });
    expect(() => fresh.decrypt(blob)).toThrow(/does not hold/);
    const rotating = secretBox({ dataDir: d, encryptionKey: "new-key-".repeat(5), previousKeys: ["old-key-".repeat(5)] });
    expect(rotating.decrypt(blob)).toBe("payload");
    expect(rotating.isCurrent(blob)).toBe(false);
    expect(rotating.isCurrent(rotating.encrypt("y"))).toBe(true);
  });
});
