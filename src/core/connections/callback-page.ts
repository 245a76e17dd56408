/**
 * The page the OAuth2 callback answers with. It tells the person whether the connection worked and that
 * they may close the window, and posts `{type: "weft:oauth2", connectionId, status, message}` to the window
 * that opened it (the builder UI), restricted to Weft's own origin.
 */
import { escapeHtml } from "../../lib/html";

export interface CallbackOutcome {
  ok: boolean;
  title: string;
  message: string;
  connectionId?: string;
}

/** JSON inside a <script>: `<` is escaped so no value can close the script element. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");

export function renderCallbackPage(outcome: CallbackOutcome, publicUrl: string): string {
  const origin = new URL(publicUrl).origin;
  const message = { type: "weft:oauth2", connectionId: outcome.connectionId ?? null, status: outcome.ok ? "active" : "error", message: outcome.message };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(outcome.title)} — Weft</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#1d232a}
h1{font-size:1.4rem;color:${outcome.ok ? "#0a7a45" : "#b42318"}}p{margin:.6rem 0}.hint{color:#667}</style></head>
<body><h1>${escapeHtml(outcome.title)}</h1><p>${escapeHtml(outcome.message)}</p>
<p class="hint">${outcome.ok ? "You may close this window." : "You may close this window and start the connection again from Weft."}</p>
<script>(function(){try{if(window.opener){window.opener.postMessage(${scriptJson(message)},${scriptJson(origin)});}}catch(e){}})();</script>
</body></html>`;
}

/** Headers for the page: no caching, no referrer (the URL held the code), no framing, only our inline script. */
export function callbackPageHeaders(): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-ancestors 'none'",
  };
}
