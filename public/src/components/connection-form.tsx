/** A new connection for one piece, with exactly the credential fields its auth declares. */
import { useSignal } from "@preact/signals";
import { api } from "../api";
import { authorizeConnection } from "../connections";
import type { Connection, PieceDetail } from "../types";
import { ErrorNote } from "./error-note";
import { useCall } from "../use-call";
import { bindText } from "../bind";

interface FieldSpec {
  name: string;
  label: string;
  secret?: boolean;
  required?: boolean;
  group?: "config" | "values";
}

/** What the server says about a piece's auth (its AuthDef): the fields the connection form reads. */
interface AuthView {
  kind: string;
  oauth2?: { fromConnectionConfig?: boolean };
  props?: Record<string, { displayName?: string; format?: string; propertyType?: string; required?: boolean }>;
}

function fieldsFor(piece: PieceDetail): FieldSpec[] {
  const auth = piece.auth as AuthView | null;
  switch (auth?.kind) {
    case "oauth2": {
      const fields: FieldSpec[] = [
        { name: "clientId", label: "Client id (leave empty to use the instance's managed app)" },
        { name: "clientSecret", label: "Client secret", secret: true },
      ];
      if (auth.oauth2?.fromConnectionConfig) {
        fields.push(
          { name: "authUrl", label: "Authorize URL", group: "config", required: true },
          { name: "tokenUrl", label: "Token URL", group: "config", required: true },
          { name: "scope", label: "Scope", group: "config" },
        );
      }
      return fields;
    }
    case "api_key":
      return [{ name: "apiKey", label: "API key", secret: true, required: true }];
    case "basic":
      return [
        { name: "username", label: "Username", required: true },
        { name: "password", label: "Password", secret: true, required: true },
      ];
    case "custom":
      return Object.entries(auth.props ?? {}).map(([name, p]) => ({
        name,
        label: p.displayName ?? name,
        secret: p.format === "password" || p.propertyType === "secret_text",
        required: !!p.required,
        group: "values" as const,
      }));
    default:
      return [];
  }
}

export function ConnectionForm({ piece, onCreated }: { piece: PieceDetail; onCreated(connection: Connection): void }) {
  const name = useSignal(`${piece.name} connection`);
  const values = useSignal<Record<string, string>>({});
  const { error, call } = useCall();
  /** What the form waits for now, shown beside the button; null when idle. */
  const busy = useSignal<string | null>(null);
  const fields = fieldsFor(piece);
  /** A credential field's input, but for its type (a secret is a password field). */
  const inputOf = (field: FieldSpec) => ({
    autoComplete: "off",
    required: field.required,
    value: values.value[field.name] ?? "",
    onInput: (e: Event) => {
      values.value = { ...values.value, [field.name]: (e.target as HTMLInputElement).value };
    },
  });
  const submit = async (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { pieceId: piece.id, name: name.value };
    for (const field of fields) {
      const value = values.value[field.name];
      if (!value) continue;
      if (field.group) {
        body[field.group] ??= {};
        (body[field.group] as Record<string, string>)[field.name] = value;
      } else body[field.name] = value;
    }
    busy.value = "Saving…";
    await call(async () => {
      const created = await api.post<Connection>("/api/connections", body);
      let connection = created.data;
      if (piece.auth?.kind === "oauth2" && connection.status === "pending") {
        busy.value = "Waiting for the provider's authorization in the popup…";
        connection = await authorizeConnection(connection.id);
      }
      onCreated(connection);
    });
    busy.value = null;
  };
  return (
    <form class="stack" onSubmit={submit} aria-label={`New ${piece.name} connection`}>
      <label class="field">
        <span>Connection name</span>
        <input required {...bindText(name)} />
      </label>
      {fields.map((field) => (
        // biome-ignore lint/a11y/noLabelWithoutControl: both branches below render the <input> inside this label
        <label class="field" key={field.name}>
          <span>{field.label}</span>
          {field.secret ? <input type="password" {...inputOf(field)} /> : <input type="text" {...inputOf(field)} />}
        </label>
      ))}
      {piece.auth?.kind === "oauth2" && (
        <p class="help">Register {location.origin}/api/oauth2/callback as the redirect URI at the provider (or WEFT_PUBLIC_URL's equivalent).</p>
      )}
      <ErrorNote error={error.value} />
      <div class="row">
        <button type="submit" class="primary" disabled={!!busy.value}>
          {piece.auth?.kind === "oauth2" ? "Connect" : "Save connection"}
        </button>
        {busy.value && (
          <span class="muted" role="status">
            {busy.value}
          </span>
        )}
      </div>
    </form>
  );
}
