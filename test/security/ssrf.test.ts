/**
 * The SSRF guard: every internal-address form is refused before any connection is made (a loopback
 * listener proves nothing arrived), loopback works only when allow-listed, and redirects are checked
 * hop by hop.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { AddressPolicy } from "../../src/net/address-policy";
import { createGuardedFetch, createHostGuard, MAX_REDIRECTS, SsrfBlockedError } from "../../src/net/guarded-fetch";

let server: ReturnType<typeof Bun.serve>;
let received: string[] = [];
let port = 0;

beforeAll(() => {
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      received.push(url.pathname);
      if (url.pathname === "/to-metadata") return Response.redirect("http://169.254.169.254/latest/meta-data/", 302);
      if (url.pathname === "/to-private-name") return new Response(null, { status: 307, headers: { location: "http://internal.test/secret" } });
      if (url.pathname.startsWith("/hop/")) {
        const n = Number(url.pathname.slice(5));
        return new Response(null, { status: 302, headers: { location: n > 0 ? `/hop/${n - 1}` : "/done" } });
      }
      if (url.pathname === "/post-redirect") return new Response(null, { status: 303, headers: { location: "/echo" } });
      if (url.pathname === "/cross-origin") return new Response(null, { status: 302, headers: { location: `http://localhost:${port}/echo` } });
      return Response.json({
        method: request.method,
        host: request.headers.get("host"),
        authorization: request.headers.get("authorization"),
        body: request.body ? "has body" : null,
        path: url.pathname,
      });
    },
  });
  port = server.port!;
});
afterAll(() => server.stop(true));
beforeEach(() => {
  received = [];
});

/** Resolves the test names like a hostile DNS would; everything else fails to resolve. */
const hostileDns = async (hostname: string): Promise<string[]> => {
  const table: Record<string, string[]> = {
    "internal.test": ["10.0.0.5"],
    "loopback.test": ["127.0.0.1"],
    "mixed.test": ["93.184.216.34", "127.0.0.1"],
    "mapped.test": ["::ffff:169.254.169.254"],
    "public.test": ["127.0.0.1"],
  };
  const found = table[hostname];
  if (!found) throw new Error(`ENOTFOUND ${hostname}`);
  return found;
};

const guarded = createGuardedFetch({ resolve: hostileDns });

describe("refused before any connection", () => {
  const forms = () => [
    `http://127.0.0.1:${port}/`,
    `http://localhost:${port}/`,
    `http://2130706433:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://0177.0.0.1:${port}/`,
    `http://127.1:${port}/`,
    `http://0.0.0.0:${port}/`,
    `http://0:${port}/`,
    `http://[::1]:${port}/`,
    `http://[::]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[::ffff:7f00:1]:${port}/`,
    `http://[::ffff:169.254.169.254]/latest/meta-data/`,
    `http://[::127.0.0.1]:${port}/`,
    `http://[64:ff9b::127.0.0.1]:${port}/`,
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata.google.internal./computeMetadata/v1/",
    "http://10.0.0.1/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://[fe80::1]/",
    "http://224.0.0.1/",
    "http://[ff02::1]/",
    "http://255.255.255.255/",
    `http://loopback.test:${port}/`,
    "http://internal.test/",
    `http://mixed.test:${port}/`,
    "http://mapped.test/",
    "https://10.0.0.1/",
  ];

  test("every internal address form", async () => {
    for (const url of forms()) {
      const error = await guarded(url).then(
        () => null,
        (e) => e,
      );
      expect({ url, refused: error instanceof SsrfBlockedError }).toEqual({ url, refused: true });
      expect(error.message).toMatch(/refused/);
    }
    expect(received).toEqual([]);
  });

  test("the refusal names the address, its kind and the allow-list setting", async () => {
    const error = await guarded(`http://2130706433:${port}/`).catch((e) => e);
    expect(error.message).toContain("127.0.0.1");
    expect(error.message).toContain("loopback");
    expect(error.message).toContain("WEFT_ALLOW_CIDRS");
  });

  test("with the system resolver too: localhost is refused", async () => {
    const error = await createGuardedFetch()(`http://localhost:${port}/`).catch((e) => e);
    expect(error).toBeInstanceOf(SsrfBlockedError);
    expect(received).toEqual([]);
  });

  test("schemes other than http and https", async () => {
    for (const url of ["file:///etc/passwd", "data:text/plain,hi", "ftp://example.com/"]) {
      expect(await guarded(url).catch((e) => e)).toBeInstanceOf(SsrfBlockedError);
    }
  });

  test("options that would bypass the pinned connection are ignored", async () => {
    const error = await guarded(`http://internal.test/`, { unix: "/tmp/x.sock", proxy: `http://127.0.0.1:${port}` } as RequestInit).catch((e) => e);
    expect(error).toBeInstanceOf(SsrfBlockedError);
    expect(received).toEqual([]);
  });
});

describe("the allow-list", () => {
  const allowLoopback = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"], resolve: hostileDns });

  test("loopback is reached only when allow-listed", async () => {
    const response = await allowLoopback(`http://127.0.0.1:${port}/hello`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ path: "/hello", host: `127.0.0.1:${port}` });
    expect(received).toEqual(["/hello"]);
  });

  test("a name keeps its Host header while the connection goes to the checked address", async () => {
    const response = await allowLoopback(`http://loopback.test:${port}/named`);
    expect(await response.json()).toMatchObject({ host: `loopback.test:${port}`, path: "/named" });
    expect(response.url).toBe(`http://loopback.test:${port}/named`);
  });

  test("IPv4 hidden in IPv6 is judged as the IPv4 it carries", async () => {
    const response = await allowLoopback(`http://[::ffff:127.0.0.1]:${port}/mapped`).catch((e) => e);
    // Allowed by 127.0.0.0/8; the kernel may still refuse to route it, which is a network error, not a refusal.
    if (response instanceof Response) expect(response.status).toBe(200);
    else expect(response).not.toBeInstanceOf(SsrfBlockedError);
  });

  test("the allow-list opens only its own range", async () => {
    expect(await allowLoopback("http://10.0.0.1/").catch((e) => e)).toBeInstanceOf(SsrfBlockedError);
    expect(await allowLoopback("http://169.254.169.254/").catch((e) => e)).toBeInstanceOf(SsrfBlockedError);
    expect(await allowLoopback("http://metadata.google.internal/").catch((e) => e)).toBeInstanceOf(SsrfBlockedError);
  });

  test("a bad allow-list entry is refused with an example", () => {
    expect(() => createGuardedFetch({ allowCidrs: ["localhost"] })).toThrow(/not a CIDR/);
  });

  test("cloud metadata addresses stay refused inside an allowed range", async () => {
    const guard = createHostGuard({ allowCidrs: ["169.254.0.0/16", "fc00::/7", "100.64.0.0/10"] });
    expect(await guard("169.254.1.1")).toBe("169.254.1.1");
    expect(await guard("fd00::1")).toBe("fd00::1");
    for (const host of ["169.254.169.254", "169.254.170.2", "[fd00:ec2::254]", "100.100.100.200", "[::ffff:169.254.169.254]"]) {
      const error = await guard(host).catch((e) => e);
      expect({ host, message: error.message }).toEqual({ host, message: expect.stringContaining("a cloud metadata address: pieces may never reach it") });
    }
  });

  test("a shared policy's new allow-list applies to the next request of a fetch built before", async () => {
    const policy = new AddressPolicy();
    const live = createGuardedFetch({ policy });
    expect(await live(`http://127.0.0.1:${port}/before`).catch((e) => e)).toBeInstanceOf(SsrfBlockedError);
    policy.setAllowed(["127.0.0.0/8"]);
    expect((await live(`http://127.0.0.1:${port}/allowed`)).status).toBe(200);
    policy.setAllowed([]);
    expect(await live(`http://127.0.0.1:${port}/after`).catch((e) => e)).toBeInstanceOf(SsrfBlockedError);
    expect(received).toEqual(["/allowed"]);
  });
});

describe("redirects", () => {
  const allowLoopback = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"], resolve: hostileDns });

  test("a redirect to a metadata address is refused before it is followed", async () => {
    const error = await allowLoopback(`http://127.0.0.1:${port}/to-metadata`).catch((e) => e);
    expect(error).toBeInstanceOf(SsrfBlockedError);
    expect(error.message).toContain("169.254.169.254");
    expect(received).toEqual(["/to-metadata"]);
  });

  test("a redirect to a name that resolves to a private address is refused", async () => {
    expect(await allowLoopback(`http://127.0.0.1:${port}/to-private-name`).catch((e) => e)).toBeInstanceOf(SsrfBlockedError);
  });

  test(`at most ${MAX_REDIRECTS} redirects are followed`, async () => {
    const ok = await allowLoopback(`http://127.0.0.1:${port}/hop/${MAX_REDIRECTS - 1}`);
    expect(await ok.json()).toMatchObject({ path: "/done" });
    expect(ok.redirected).toBe(true);
    const error = await allowLoopback(`http://127.0.0.1:${port}/hop/${MAX_REDIRECTS}`).catch((e) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toContain("redirected more than 5 times");
  });

  test("303 turns a POST into a GET without its body", async () => {
    const response = await allowLoopback(`http://127.0.0.1:${port}/post-redirect`, { method: "POST", body: "x=1", headers: { "content-type": "text/plain" } });
    expect(await response.json()).toMatchObject({ method: "GET", body: null, path: "/echo" });
  });

  test("credentials do not follow a redirect to another origin", async () => {
    const allowAll = createGuardedFetch({ allowCidrs: ["127.0.0.0/8", "::1/128"] });
    const response = await allowAll(`http://127.0.0.1:${port}/cross-origin`, { headers: { authorization: "Bearer secret" } });
    expect(await response.json()).toMatchObject({ authorization: null, host: `localhost:${port}` });
  });

  test('redirect: "manual" hands the redirect back', async () => {
    const response = await allowLoopback(`http://127.0.0.1:${port}/to-metadata`, { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toContain("169.254.169.254");
  });
});

describe("TLS to a pinned address", () => {
  const openssl = Bun.which("openssl");

  test.skipIf(!openssl)(
    "the certificate is checked against the host name, not the IP connected to",
    async () => {
      const dir = (await import("node:fs")).mkdtempSync(`${(await import("node:os")).tmpdir()}/weft-tls-`);
      const made = Bun.spawnSync(
        [
          openssl!,
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          `${dir}/key.pem`,
          "-out",
          `${dir}/cert.pem`,
          "-days",
          "1",
          "-subj",
          "/CN=loopback.test",
          "-addext",
          "subjectAltName=DNS:loopback.test",
        ],
        { stdout: "ignore", stderr: "ignore" },
      );
      expect(made.exitCode).toBe(0);
      const cert = await Bun.file(`${dir}/cert.pem`).text();
      const tlsServer = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        tls: { cert, key: await Bun.file(`${dir}/key.pem`).text() },
        fetch: (request) => Response.json({ host: request.headers.get("host") }),
      });
      try {
        const allow = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"], resolve: hostileDns });
        const response = await allow(`https://loopback.test:${tlsServer.port}/`, { tls: { ca: cert } } as RequestInit);
        expect(await response.json()).toEqual({ host: `loopback.test:${tlsServer.port}` });
        // The same server under a name its certificate does not carry fails verification.
        const wrongName = createGuardedFetch({ allowCidrs: ["127.0.0.0/8"], resolve: async () => ["127.0.0.1"] });
        const error = await wrongName(`https://other.test:${tlsServer.port}/`, { tls: { ca: cert } } as RequestInit).catch((e) => e);
        expect(error).toBeInstanceOf(Error);
        expect(error).not.toBeInstanceOf(SsrfBlockedError);
      } finally {
        tlsServer.stop(true);
      }
    },
    30_000,
  );
});
