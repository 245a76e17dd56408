/**
 * The API reference page: the contract's operations grouped by tag, a search over them, each one's
 * parameters, body and responses with examples and its required scope, and "Try it", which sends the
 * request to this same server with the token the reader entered once (kept for the tab only).
 */
import { signal } from "@preact/signals";
import { useEffect, useMemo, useState } from "preact/hooks";
import {
  buildTryRequest,
  curlCommand,
  describeScope,
  groupByTag,
  jsonContent,
  requestExample,
  responseExample,
  type OpenApiDocument,
  type OperationEntry,
  search,
  type TagGroup,
} from "./contract";

const TOKEN_KEY = "weft.api-docs.token";

function readStoredToken(): string {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? "";
  } catch {
    return ""; // storage refused (privacy mode): the token lives in memory only
  }
}

/** The API token "Try it" sends; kept in this tab's sessionStorage, never in the page's address. */
export const token = signal(readStoredToken());

function setToken(value: string) {
  token.value = value;
  try {
    if (value) sessionStorage.setItem(TOKEN_KEY, value);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch {}
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);

export function ApiDocs() {
  const [doc, setDoc] = useState<OpenApiDocument | undefined>();
  const [failure, setFailure] = useState("");
  const [query, setQuery] = useState("");
  const [open, setOpen] = useState<string | undefined>(() => (location.hash.startsWith("#op-") ? location.hash.slice(1) : undefined));

  useEffect(() => {
    fetch("/api/openapi.json", { credentials: "omit" })
      .then((res) => (res.ok ? res.json() : Promise.reject(new Error(`the server answered ${res.status}`))))
      .then(setDoc)
      .catch((error: Error) => setFailure(error.message));
  }, []);

  const groups = useMemo(() => (doc ? groupByTag(doc) : []), [doc]);
  const shown = useMemo(() => search(groups, query), [groups, query]);
  const count = shown.reduce((sum, group) => sum + group.operations.length, 0);

  useEffect(() => {
    if (doc && open) document.getElementById(open)?.scrollIntoView({ block: "start" });
    // Only after the document arrives: later toggles keep the reader's scroll position.
  }, [doc]);

  const toggle = (id: string) => {
    const next = open === id ? undefined : id;
    setOpen(next);
    history.replaceState(null, "", next ? `#${next}` : location.pathname);
  };

  if (failure)
    return (
      <main class="page">
        <h1>Weft API</h1>
        <p class="error-text" role="alert">
          Could not load the contract from /api/openapi.json: {failure}.
        </p>
      </main>
    );
  if (!doc)
    return (
      <main class="page">
        <p class="muted">Loading the API contract…</p>
      </main>
    );

  return (
    <div class="page">
      <header class="top">
        <div>
          <h1>
            {doc.info.title} <span class="version">{doc.info.version}</span>
          </h1>
          <p class="muted">
            {doc.info.description} The machine-readable contract is <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).
          </p>
        </div>
        <TokenBox />
      </header>
      <div class="layout">
        <nav class="toc" aria-label="Operations by tag">
          <label class="search">
            <span>Search operations</span>
            <input type="search" value={query} placeholder="e.g. runs, POST, run:read" onInput={(e) => setQuery(e.currentTarget.value)} />
          </label>
          <p class="muted small-text" aria-live="polite">
            {count} {count === 1 ? "operation" : "operations"}
          </p>
          <ul>
            {shown.map((group) => (
              <li key={group.name}>
                <a href={`#tag-${slug(group.name)}`}>{group.name}</a> <span class="muted small-text">{group.operations.length}</span>
              </li>
            ))}
          </ul>
        </nav>
        <main>
          {shown.length === 0 && <p class="empty">No operation matches “{query}”.</p>}
          {shown.map((group) => (
            <TagSection key={group.name} doc={doc} group={group} open={open} onToggle={toggle} />
          ))}
        </main>
      </div>
    </div>
  );
}

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, "-");

function TokenBox() {
  const [draft, setDraft] = useState("");
  if (token.value)
    return (
      <div class="token" role="group" aria-label="Token for Try it">
        <span>
          Token set: <code>{token.value.slice(0, 8)}…</code>
        </span>
        <button type="button" onClick={() => setToken("")}>
          Forget token
        </button>
      </div>
    );
  return (
    <form
      class="token"
      aria-label="Token for Try it"
      onSubmit={(e) => {
        e.preventDefault();
        setToken(draft.trim());
        setDraft("");
      }}
    >
      <label>
        <span>API token</span>
        <input type="password" autocomplete="off" value={draft} placeholder="weft_…" onInput={(e) => setDraft(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={!draft.trim()}>
        Use token
      </button>
      <span class="muted small-text">Sent as Authorization: Bearer by Try it; kept for this tab only.</span>
    </form>
  );
}

function TagSection(props: { doc: OpenApiDocument; group: TagGroup; open: string | undefined; onToggle(id: string): void }) {
  const { group } = props;
  const headingId = `tag-${slug(group.name)}`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{group.name}</h2>
      {group.description && <p class="muted">{group.description}</p>}
      <div role="list">
        {group.operations.map((entry) => (
          <OperationRow key={entry.id} doc={props.doc} entry={entry} open={props.open === entry.id} onToggle={() => props.onToggle(entry.id)} />
        ))}
      </div>
    </section>
  );
}

function OperationRow(props: { doc: OpenApiDocument; entry: OperationEntry; open: boolean; onToggle(): void }) {
  const { entry } = props;
  return (
    <div role="listitem" id={entry.id} class={`op ${props.open ? "open" : ""}`}>
      <button type="button" class="op-head" aria-expanded={props.open} aria-controls={`${entry.id}-body`} onClick={props.onToggle}>
        <span class={`method ${entry.method}`}>{entry.method.toUpperCase()}</span>
        <span class="op-title">
          <code class="path">{entry.path}</code> <span class="summary">{entry.operation.summary}</span>
        </span>
        <span class={`scope scope-${entry.scope}`} title={`Required scope: ${describeScope(entry.scope)}`}>
          {entry.scope}
        </span>
      </button>
      {props.open && <OperationBody doc={props.doc} entry={entry} />}
    </div>
  );
}

function OperationBody({ doc, entry }: { doc: OpenApiDocument; entry: OperationEntry }) {
  const { operation } = entry;
  const parameters = operation.parameters ?? [];
  const body = jsonContent(operation.requestBody?.content);
  return (
    <div class="op-body" id={`${entry.id}-body`}>
      {operation.description && <p>{operation.description}</p>}
      <p>
        <strong>Required scope:</strong> <code>{entry.scope}</code> — {describeScope(entry.scope)}.
      </p>
      {parameters.length > 0 && (
        <>
          <h3>Parameters</h3>
          <table class="params">
            <thead>
              <tr>
                <th>Name</th>
                <th>In</th>
                <th>Type</th>
                <th>Description</th>
              </tr>
            </thead>
            <tbody>
              {parameters.map((parameter) => (
                <tr key={`${parameter.in}-${parameter.name}`}>
                  <td>
                    <code>{parameter.name}</code>
                    {parameter.required && <span class="required"> required</span>}
                  </td>
                  <td>{parameter.in}</td>
                  <td>{typeName(parameter.schema?.type, parameter.schema?.format)}</td>
                  <td>{parameter.description ?? parameter.schema?.description ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {operation.requestBody && (
        <>
          <h3>Request body {operation.requestBody.required ? <span class="required">required</span> : <span class="muted">optional</span>}</h3>
          {body ? <Example label="Example body" value={requestExample(doc, body)} schema={body.schema} /> : <p class="muted">No JSON body.</p>}
        </>
      )}
      <h3>Responses</h3>
      {Object.entries(operation.responses ?? {}).map(([status, response]) => {
        const media = jsonContent(response.content);
        const other = Object.keys(response.content ?? {}).filter((type) => type !== "application/json");
        return (
          <div class="response" key={status}>
            <p>
              <span class={`status status-${status[0]}`}>{status}</span> {response.description}
              {other.length > 0 && <span class="muted"> ({other.join(", ")})</span>}
            </p>
            {media && <Example label={`Example ${status} response`} value={responseExample(doc, media)} schema={media.schema} />}
          </div>
        );
      })}
      <TryIt doc={doc} entry={entry} />
    </div>
  );
}

const typeName = (type: string | string[] | undefined, format: string | undefined) =>
  `${Array.isArray(type) ? type.join(" | ") : (type ?? "any")}${format ? ` (${format})` : ""}`;

function Example(props: { label: string; value: unknown; schema: unknown }) {
  return (
    <div class="example">
      <figure aria-label={props.label}>
        <pre>{pretty(props.value)}</pre>
      </figure>
      {props.schema !== undefined && (
        <details>
          <summary>Schema</summary>
          <pre>{pretty(props.schema)}</pre>
        </details>
      )}
    </div>
  );
}

interface Outcome {
  status: number;
  statusText: string;
  ms: number;
  contentType: string;
  body: string;
  note?: string;
}

// A stream (a run's live events) is shown for this long, then closed.
const STREAM_MS = 3000;
const MAX_SHOWN = 200_000;

async function send(url: string, init: RequestInit): Promise<Outcome> {
  const started = performance.now();
  const abort = new AbortController();
  const res = await fetch(url, { ...init, signal: abort.signal });
  const contentType = res.headers.get("content-type") ?? "";
  let body = "";
  let note: string | undefined;
  if (contentType.includes("text/event-stream") && res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const stop = setTimeout(() => abort.abort(), STREAM_MS);
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        body += decoder.decode(chunk.value, { stream: true });
      }
    } catch {
      note = `A stream: its first ${STREAM_MS / 1000} seconds are shown.`;
    }
    clearTimeout(stop);
  } else {
    body = await res.text();
    if (contentType.includes("json")) {
      try {
        body = pretty(JSON.parse(body));
      } catch {}
    }
  }
  if (body.length > MAX_SHOWN) {
    body = body.slice(0, MAX_SHOWN);
    note = `Only the first ${MAX_SHOWN.toLocaleString()} characters are shown.`;
  }
  return { status: res.status, statusText: res.statusText, ms: Math.round(performance.now() - started), contentType, body, note };
}

function TryIt({ doc, entry }: { doc: OpenApiDocument; entry: OperationEntry }) {
  const parameters = entry.operation.parameters ?? [];
  const media = jsonContent(entry.operation.requestBody?.content);
  const [values, setValues] = useState<Record<string, string>>({});
  const [body, setBody] = useState(() => (media ? pretty(requestExample(doc, media)) : ""));
  const [problem, setProblem] = useState("");
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const [curl, setCurl] = useState("");
  const label = `Try ${entry.method.toUpperCase()} ${entry.path}`;

  const submit = async (e: Event) => {
    e.preventDefault();
    setProblem("");
    let request: ReturnType<typeof buildTryRequest>;
    try {
      request = buildTryRequest(entry, { origin: location.origin, values, body, token: token.value });
    } catch (error) {
      setProblem((error as Error).message);
      return;
    }
    setCurl(curlCommand(request));
    setBusy(true);
    try {
      setOutcome(await send(request.url, request.init));
    } catch (error) {
      setOutcome(undefined);
      setProblem(`The request failed: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="try" aria-label={label} onSubmit={submit}>
      <h3>Try it</h3>
      {!token.value && entry.scope !== "public" && <p class="note">Enter an API token at the top of the page; without one this call answers 401.</p>}
      {parameters.map((parameter) => (
        <label class="field" key={`${parameter.in}-${parameter.name}`}>
          <span>
            {parameter.name} <span class="muted">({parameter.in})</span>
            {parameter.required && <span class="required"> required</span>}
          </span>
          <input
            value={values[parameter.name] ?? ""}
            placeholder={parameter.schema?.description ?? ""}
            onInput={(e) => setValues({ ...values, [parameter.name]: e.currentTarget.value })}
          />
        </label>
      ))}
      {entry.operation.requestBody && (
        <label class="field">
          <span>Body (JSON)</span>
          <textarea rows={Math.min(16, body.split("\n").length + 1)} spellcheck={false} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
        </label>
      )}
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Sending…" : "Send"}
        </button>
        {problem && (
          <span class="error-text" role="alert">
            {problem}
          </span>
        )}
      </div>
      {outcome && (
        <div class="result" role="region" aria-label="Response">
          <p>
            <span class={`status status-${String(outcome.status)[0]}`}>{outcome.status}</span> {outcome.statusText}{" "}
            <span class="muted">
              · {outcome.ms} ms{outcome.contentType ? ` · ${outcome.contentType}` : ""}
            </span>
          </p>
          {outcome.note && <p class="muted small-text">{outcome.note}</p>}
          <figure aria-label="Response body">
            <pre>{outcome.body}</pre>
          </figure>
        </div>
      )}
      {curl && (
        <details>
          <summary>As curl</summary>
          <pre>{curl}</pre>
        </details>
      )}
    </form>
  );
}
