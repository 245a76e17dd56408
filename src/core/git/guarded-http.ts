/**
 * Git remotes reach only what pieces may reach (docs/security.md, "Outbound HTTP: the SSRF guard"): whoever can
 * set a workspace's remote URL could otherwise make the server call a loopback, private or cloud-metadata
 * address. HTTP(S) remotes go through the guarded fetch itself (isomorphic-git's `http` option), so every
 * redirect and the address connected to are checked as a piece's request would be. Remotes the system `git`
 * reaches (SSH, `git://`) have their host checked before `git` runs; `git` and `ssh` then resolve the name
 * themselves, so a name whose answer changes in between (DNS rebinding) is not held off there. A local path
 * names no host and is not network traffic.
 */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from "isomorphic-git";
import { allowedAddress } from "../../pieces-sdk";
import type { GuardedFetch } from "../../pieces-sdk/types";

/** isomorphic-git's HTTP client on the guarded fetch (`fetch` is asked per request: the allow-list may change). */
export function guardedGitHttp(fetch: () => GuardedFetch): HttpClient {
  return {
    async request({ url, method = "GET", headers = {}, body }: GitHttpRequest): Promise<GitHttpResponse> {
      const parts: Uint8Array[] = [];
      if (body) for await (const chunk of body) parts.push(chunk);
      const response = await fetch()(url, { method, headers, body: parts.length > 0 ? new Blob(parts as BlobPart[]) : undefined });
      const answered: Record<string, string> = {};
      response.headers.forEach((value: string, name: string) => {
        answered[name] = value;
      });
      return {
        url: response.url || url,
        method,
        statusCode: response.status,
        statusMessage: response.statusText,
        headers: answered,
        body: response.body ? chunks(response.body) : undefined,
      };
    },
  };
}

async function* chunks(stream: ReadableStream<Uint8Array>): AsyncIterableIterator<Uint8Array> {
  for await (const chunk of stream) yield chunk;
}

/**
 * The host a remote of the system `git` connects to: `ssh://[user@]host[:port]/…`, scp-like `user@host:path`,
 * `git://host[:port]/…`; undefined for a local path (or `file://`), which names none.
 */
export function remoteHost(url: string): string | undefined {
  const scheme = /^(ssh|git|git\+ssh|ssh\+git):\/\//i.exec(url);
  if (scheme) {
    const host = new URL(url.replace(/^[^:]+:/, "ssh:")).hostname;
    return host.startsWith("[") ? host.slice(1, -1) : host;
  }
  const scp = /^[\w.-]+@(\[[^\]]+\]|[^:/]+):/.exec(url);
  if (scp) return scp[1]!.replace(/^\[|\]$/g, "");
  return undefined;
}

/** Refuses (SsrfBlockedError) a system-git remote whose host the guard refuses; a local path passes. */
export async function checkRemoteHost(fetch: () => GuardedFetch, url: string): Promise<void> {
  const host = remoteHost(url);
  if (host === undefined) return;
  // The check a piece makes before a connection of its own (docs/security.md, "Connections that are not HTTP").
  await allowedAddress(fetch(), host);
}
