/** WEFT_DATABASE_URL (docs/configuration.md): a postgres:// URL or nothing; a wrong one stops start-up naming what to write. */
import { expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";

test("unset keeps SQLite; a postgres:// or postgresql:// URL selects PostgreSQL", () => {
  expect(loadConfig({}).databaseUrl).toBeUndefined();
  expect(loadConfig({ WEFT_DATABASE_URL: "" }).databaseUrl).toBeUndefined();
  expect(loadConfig({ WEFT_DATABASE_URL: "postgres://u:p@db:5432/weft" }).databaseUrl).toBe("postgres://u:p@db:5432/weft");
  expect(loadConfig({ WEFT_DATABASE_URL: "postgresql://u:p@db/weft" }).databaseUrl).toBe("postgresql://u:p@db/weft");
});

test("another scheme is refused naming the form to use, without echoing the password", () => {
  let error: unknown;
  try {
    loadConfig({ WEFT_DATABASE_URL: "mysql://root:s3cret-pass@db/weft" });
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as Error).message).toContain("WEFT_DATABASE_URL is not a postgres:// URL");
  expect((error as Error).message).toContain("postgres://user:password@host:5432/database");
  expect((error as Error).message).not.toContain("s3cret-pass");
  expect(() => loadConfig({ WEFT_DATABASE_URL: "weft.db" })).toThrow(ConfigError);
});
