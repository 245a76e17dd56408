/** The API client: CSRF header on writes only, the error envelope's message surfaced, session expiry noticed. */
import { GlobalRegistrator } from "@happy-dom/global-registrator";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { fakeApi } from "./fake-api";

beforeAll(() => GlobalRegistrator.register({ url: "http://weft.test/" }));
afterAll(() => GlobalRegistrator.unregister());

let fake: ReturnType<typeof fakeApi> | undefined;
afterEach(() => fake?.restore());

describe("api client", () => {
  test("writes carry X-CSRF-Token from the session; reads do not", async () => {
    const { api, setCsrfToken } = await import("../../public/src/api");
    fake = fakeApi({
      "GET /api/workflows": () => ({ body: { data: [], total: 0 } }),
      "POST /api/workflows": (r) => ({ status: 201, body: { data: { id: "w1", name: r.body.name } } }),
    });
    setCsrfToken("csrf-123");
    const list = await api.get("/api/workflows", { q: "greet", status: "", page: 2 });
    expect(list.total).toBe(0);
    const created = await api.post<{ id: string; name: string }>("/api/workflows", { name: "Greet" });
    expect(created.data.name).toBe("Greet");
    expect(fake.calls[0]!.headers.get("x-csrf-token")).toBeNull();
    expect(fake.calls[0]!.query.get("q")).toBe("greet");
    expect(fake.calls[0]!.query.has("status")).toBe(false); // empty filters are not sent
    expect(fake.calls[1]!.headers.get("x-csrf-token")).toBe("csrf-123");
    expect(fake.calls[1]!.headers.get("content-type")).toBe("application/json");
  });

  test("a refusal becomes ApiError with the server's code and message", async () => {
    const { api, ApiError, describeError } = await import("../../public/src/api");
    fake = fakeApi({
      "PUT /api/workflows/w1": () => ({
        status: 409,
        body: { error: { code: "REVISION_CONFLICT", message: "expectedRev 3 is stale; the current definitionRev is 5" } },
      }),
    });
    const error = await api.put("/api/workflows/w1", { expectedRev: 3 }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(409);
    expect(error.code).toBe("REVISION_CONFLICT");
    expect(describeError(error)).toBe("expectedRev 3 is stale; the current definitionRev is 5 (REVISION_CONFLICT)");
  });

  test("a 401 outside /api/auth marks the session expired", async () => {
    const { api, sessionExpired } = await import("../../public/src/api");
    fake = fakeApi({ "GET /api/runs": () => ({ status: 401, body: { error: { code: "UNAUTHORIZED", message: "missing credentials" } } }) });
    sessionExpired.value = false;
    await api.get("/api/runs").catch(() => undefined);
    expect(sessionExpired.value).toBe(true);
  });

  test("a 401 from /api/auth/* (a session ended elsewhere) marks it expired too, but not a wrong password or code", async () => {
    const { api, sessionExpired } = await import("../../public/src/api");
    const refused = () => ({ status: 401, body: { error: { code: "UNAUTHORIZED", message: "the credential is invalid, expired or revoked" } } });
    fake = fakeApi({
      "GET /api/auth/sessions": refused,
      "POST /api/auth/password": refused,
      "POST /api/auth/login": refused,
      "POST /api/auth/login/second-factor": refused,
      "POST /api/invitations/accept": refused,
    });
    for (const [method, path] of [
      ["POST", "/api/auth/login"],
      ["POST", "/api/auth/login/second-factor"],
      ["POST", "/api/invitations/accept"],
    ] as const) {
      sessionExpired.value = false;
      await api.post(path, {}).catch(() => undefined);
      expect(`${method} ${path}: ${sessionExpired.value}`).toBe(`${method} ${path}: false`);
    }
    sessionExpired.value = false;
    await api.get("/api/auth/sessions").catch(() => undefined);
    expect(sessionExpired.value).toBe(true);
    sessionExpired.value = false;
    await api.post("/api/auth/password", { currentPassword: "a", newPassword: "b" }).catch(() => undefined);
    expect(sessionExpired.value).toBe(true);
  });
});
