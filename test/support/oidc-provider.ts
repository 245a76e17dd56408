/**
 * A real OpenID provider for the single sign-on tests: the certified `oidc-provider` package (a devDependency) on a
 * free loopback port, with one client registered for Weft and a few accounts. Its development interactions show a
 * login page that takes any account id (the password is not checked); consent is granted by the provider's
 * `loadExistingGrant` hook, as a first-party client would be.
 *   const idp = await startOidcProvider({ redirectUri, postLogoutRedirectUri });
 *   const url = await idp.signIn(authorizationUrl, "alice"); // the callback URL with code and state
 */
import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";
import { freePort } from "./server";

export const OIDC_CLIENT = { id: "weft", secret: "weft-client-secret-for-tests-0123456789" };

export const OIDC_ACCOUNTS: Record<string, { email: string; name: string; groups: string[] }> = {
  alice: { email: "alice@example.com", name: "Alice Admin", groups: ["weft-admins", "staff"] },
  bob: { email: "bob@example.com", name: "Bob Builder", groups: ["weft-editors"] },
  carol: { email: "carol@example.com", name: "Carol Nogroup", groups: [] },
};

export interface OidcProviderHandle {
  issuer: string;
  /** Drives the provider's own login page with fetch (no browser) and answers the redirect back to Weft. */
  signIn(authorizationUrl: string, account: string): Promise<URL>;
  stop(): Promise<void>;
}

export async function startOidcProvider(options: { redirectUris: string[]; postLogoutRedirectUris: string[] }): Promise<OidcProviderHandle> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: OIDC_CLIENT.id,
        client_secret: OIDC_CLIENT.secret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris,
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    scopes: ["openid", "email", "profile", "groups"],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    cookies: { keys: ["oidc-provider-test-cookie-key"] },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    async findAccount(_ctx: unknown, sub: string) {
      const account = OIDC_ACCOUNTS[sub];
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: account.email, email_verified: true, name: account.name, groups: account.groups }) };
    },
    // Consent is implied for Weft (a first-party client): every requested scope and claim is granted.
    async loadExistingGrant(ctx: any) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(ctx.oidc.params.scope);
      await grant.save();
      return grant;
    },
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));

  async function signIn(authorizationUrl: string, account: string): Promise<URL> {
    const jar = new Map<string, string>();
    const send = async (url: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      if (jar.size > 0) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
      const response = await fetch(url, { ...init, headers, redirect: "manual" });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair] = cookie.split(";");
        const at = pair!.indexOf("=");
        jar.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      await response.arrayBuffer();
      return response;
    };
    let url = authorizationUrl;
    for (let hop = 0; hop < 10; hop++) {
      if (url.startsWith(issuer)) {
        const interaction = /\/interaction\/([^/?]+)$/.exec(new URL(url).pathname);
        const response = interaction
          ? await send(url, { method: "POST", body: new URLSearchParams({ prompt: "login", login: account, password: "any" }) })
          : await send(url);
        const next = response.headers.get("location");
        if (!next) throw new Error(`the provider answered ${response.status} at ${url} without a redirect`);
        // The GET of an interaction page would render the form: post it instead (what the browser does).
        url = new URL(next, url).toString();
        continue;
      }
      return new URL(url);
    }
    throw new Error("too many redirects at the provider");
  }

  return {
    issuer,
    signIn,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
