import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT_TOKEN } from "../support/app";
import { stdioClient } from "./client";

let mcp: Awaited<ReturnType<typeof stdioClient>>;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "weft-mcp-stdio-"));
  mcp = await stdioClient({ WEFT_DATA_DIR: dataDir, WEFT_BOOTSTRAP_TOKEN: ROOT_TOKEN, WEFT_TOKEN: ROOT_TOKEN, WEFT_LOG_LEVEL: "info", WEFT_WORKERS: "1" });
});
afterAll(() => mcp?.close());

describe("weft mcp (stdio)", () => {
  test("lists the tools and answers a call", async () => {
    const names = (await mcp.tools()).map((x) => x.name);
    expect(names).toContain("get_action_schema");
    const answer = await mcp.call("get_piece_summary", { pieceId: "webhook" });
    expect(answer.isError).toBe(false);
    expect(answer.body.data.triggers[0]).toMatchObject({ id: "catch_webhook", type: "webhook" });
  });
});
