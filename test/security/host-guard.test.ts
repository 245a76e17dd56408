/**
 * Raw connections (MQTT, IMAP, SMTP, SQL) obey the same address policy as HTTP: a piece asks
 * `allowedAddress(ctx.fetch, host)` for the address to connect to.
 */
import { describe, expect, test } from "bun:test";
import { createGuardedFetch, createHostGuard, wrapGuardedFetch } from "../../src/net/guarded-fetch";
import { allowedAddress } from "../../src/pieces-sdk";

describe("host guard for non-HTTP connections", () => {
  test("loopback, private and metadata hosts are refused by default, naming where to allow a range", async () => {
    const guard = createHostGuard();
    for (const host of ["127.0.0.1", "localhost", "10.1.2.3", "192.168.1.10", "0x7f000001"]) {
      await expect(guard(host)).rejects.toThrow(/Settings → Network \(or with WEFT_ALLOW_CIDRS/);
    }
    // Metadata is never allowed, so its refusal offers no way to allow it.
    await expect(guard("metadata.google.internal")).rejects.toThrow(/metadata service/);
    await expect(guard("169.254.169.254")).rejects.toThrow(/a cloud metadata address: pieces may never reach it/);
  });

  test("an allow-listed range is reachable and the address returned is the one checked", async () => {
    const guard = createHostGuard({ allowCidrs: ["127.0.0.0/8", "192.168.0.0/16"], resolve: async () => ["192.168.1.20"] });
    expect(await guard("127.0.0.1")).toBe("127.0.0.1");
    expect(await guard("localhost")).toBe("127.0.0.1");
    expect(await guard("broker.lan")).toBe("192.168.1.20");
  });

  test("a name resolving to any refused address is refused", async () => {
    const guard = createHostGuard({ allowCidrs: [], resolve: async () => ["93.184.216.34", "10.0.0.5"] });
    await expect(guard("mixed.example")).rejects.toThrow(/10\.0\.0\.5 \(mixed\.example resolves to it\)/);
  });

  test("the guarded fetch carries its policy to wrappers and to allowedAddress", async () => {
    const inner = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"] });
    const wrapped = wrapGuardedFetch(
      (url, init) => inner(url, init),
      () => inner,
    );
    expect(await allowedAddress(wrapped, "127.0.0.1")).toBe("127.0.0.1");
    await expect(allowedAddress(wrapped, "10.0.0.1")).rejects.toThrow(/WEFT_ALLOW_CIDRS/);
    // A plain function with no policy gets the strict default.
    await expect(allowedAddress(((url: string) => fetch(url)) as never, "127.0.0.1")).rejects.toThrow(/loopback/);
  });
});
