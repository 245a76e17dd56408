/**
 * Email: send through SMTP (nodemailer), start a run for each new message in an IMAP folder (imapflow,
 * parsed with mailparser), and move or flag a message. One connection holds the account: its SMTP and
 * IMAP servers and the login both use. Hosts pass the SSRF policy first (allowedAddress): a mail server
 * on the LAN needs WEFT_ALLOW_CIDRS. With TLS, the certificate is checked for the host name.
 */
import type { ImapFlow } from "imapflow";
import type { AddressObject } from "mailparser";
import { action, allowedAddress, Auth, definePiece, labelled, loadOnce, Property, trigger } from "../../src/pieces-sdk";
import type { DynamicOptionsContext, GuardedFetch, PollContext, ResolvedAuth } from "../../src/pieces-sdk/types";

/** The protocol libraries, loaded with the first email step or poll. */
const imapflow = loadOnce(() => import("imapflow"));
const mailparser = loadOnce(() => import("mailparser"));
const nodemailer = loadOnce(() => import("nodemailer"));

/** Attachments in a run's trigger data are kept up to this size each (base64), larger ones are listed without content. */
const MAX_ATTACHMENT_BYTES = 1024 * 1024;
/** How many of the newest messages a poll looks at. */
const POLL_WINDOW = 100;

function account(auth: ResolvedAuth | undefined): Record<string, unknown> {
  if (auth?.kind !== "custom") throw new Error("this step needs an email connection (SMTP/IMAP servers and login); set its connectionId");
  return auth.values;
}

async function imapClient(fetch: GuardedFetch, auth: ResolvedAuth | undefined): Promise<ImapFlow> {
  const a = account(auth);
  const host = String(a.imap_host ?? "").trim();
  if (!host) throw new Error("the email connection has no IMAP host");
  const secure = a.imap_tls !== false;
  const address = await allowedAddress(fetch, host);
  const { ImapFlow } = await imapflow();
  const client = new ImapFlow({
    host: secure ? host : address,
    port: Number(a.imap_port ?? (secure ? 993 : 143)),
    secure,
    auth: { user: String(a.user ?? ""), pass: String(a.password ?? "") },
    logger: false,
    tls: secure ? { servername: host } : undefined,
    connectionTimeout: 15_000,
  });
  client.on("error", () => undefined); // failures surface through the awaited calls
  await client.connect().catch((error: Error) => {
    throw new Error(`IMAP: could not log in to ${host}: ${(error as Error & { responseText?: string }).responseText ?? error.message}`);
  });
  return client;
}

async function withImap<T>(fetch: GuardedFetch, auth: ResolvedAuth | undefined, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
  const client = await imapClient(fetch, auth);
  try {
    return await fn(client);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

const addresses = (value: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(value) ? value : value ? [value] : []).flatMap((a) => a.value).map((v) => ({ name: v.name || null, address: v.address ?? null }));

/** A message as a run's trigger body. */
async function parsedMessage(source: Buffer, uid: number, uidValidity: bigint | number, folder: string, flags: Set<string> | undefined) {
  const mail = await (await mailparser()).simpleParser(source);
  return {
    id: `${uidValidity}:${uid}`,
    uid,
    folder,
    messageId: mail.messageId ?? null,
    date: mail.date ? mail.date.toISOString() : null,
    from: addresses(mail.from)[0] ?? null,
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    subject: mail.subject ?? "",
    text: mail.text ?? "",
    html: typeof mail.html === "string" ? mail.html : null,
    seen: flags?.has("\\Seen") ?? false,
    attachments: mail.attachments.map((att) => ({
      filename: att.filename ?? null,
      contentType: att.contentType,
      size: att.size,
      content: att.size <= MAX_ATTACHMENT_BYTES ? att.content.toString("base64") : null,
    })),
  };
}

const folderProp = (displayName: string, required = true) =>
  Property.dropdown({
    displayName,
    required,
    refreshers: ["auth"],
    description: "listed from the server",
    options: async (ctx: DynamicOptionsContext) => {
      const list = await withImap(ctx.fetch, ctx.auth, (client) => client.list());
      return { options: list.map((m) => ({ label: m.path, value: m.path })) };
    },
  });

const contains = (haystack: string | null | undefined, needle: unknown) =>
  !needle ||
  String(haystack ?? "")
    .toLowerCase()
    .includes(String(needle).toLowerCase());

async function pollNewEmail(ctx: PollContext) {
  const folder = String(ctx.config.folder ?? "INBOX");
  return withImap(ctx.fetch, ctx.auth, async (client) => {
    const lock = await client.getMailboxLock(folder, { readOnly: true });
    try {
      const box = client.mailbox as { exists: number; uidValidity: bigint };
      if (!box || box.exists === 0) return [];
      const from = Math.max(1, box.exists - POLL_WINDOW + 1);
      const items = [];
      for await (const message of client.fetch(`${from}:*`, { uid: true, flags: true, source: true })) {
        if (!message.source) continue;
        const item = await parsedMessage(message.source, message.uid, box.uidValidity, folder, message.flags);
        if (ctx.config.unseen_only === true && item.seen) continue;
        if (!contains(item.from?.address, ctx.config.from_contains) && !contains(item.from?.name, ctx.config.from_contains)) continue;
        if (!contains(item.subject, ctx.config.subject_contains)) continue;
        items.push(item);
      }
      return items.reverse(); // newest first, as feeds are
    } finally {
      lock.release();
    }
  });
}

export default definePiece({
  id: "email",
  name: "Email",
  version: "1.0.0",
  icon: "✉️",
  description: "Send email over SMTP; new messages in an IMAP folder; move and flag messages",
  auth: Auth.custom({
    user: Property.shortText({ displayName: "Login", required: true, description: "usually your address" }),
    password: Property.secretText({ displayName: "Password", required: true, description: "or an app password" }),
    smtp_host: Property.shortText({ displayName: "SMTP host", description: "for sending, e.g. smtp.example.com" }),
    smtp_port: Property.integer({ displayName: "SMTP port", min: 1, max: 65535, description: "587 (STARTTLS), 465 (TLS) or 25" }),
    smtp_security: Property.staticDropdown({
      displayName: "SMTP security",
      default: "starttls",
      options: labelled({ starttls: "STARTTLS", tls: "TLS", none: "None (LAN only)" }),
    }),
    imap_host: Property.shortText({ displayName: "IMAP host", description: "for reading, e.g. imap.example.com" }),
    imap_port: Property.integer({ displayName: "IMAP port", min: 1, max: 65535, description: "993 (TLS) or 143" }),
    imap_tls: Property.checkbox({ displayName: "IMAP over TLS", default: true }),
    from: Property.shortText({ displayName: "From address", description: "default sender, e.g. Weft <weft@example.com>" }),
  }),
  actions: [
    action({
      id: "send_email",
      name: "Send email",
      description: "Send a message through the connection's SMTP server",
      sideEffects: "external",
      props: {
        to: Property.shortText({ displayName: "To", required: true, description: "one or more addresses, comma-separated" }),
        cc: Property.shortText({ displayName: "Cc" }),
        bcc: Property.shortText({ displayName: "Bcc" }),
        from: Property.shortText({ displayName: "From", description: "defaults to the connection's From address" }),
        reply_to: Property.shortText({ displayName: "Reply-To" }),
        subject: Property.shortText({ displayName: "Subject", required: true }),
        text: Property.longText({ displayName: "Text" }),
        html: Property.longText({ displayName: "HTML" }),
        attachments: Property.json({
          displayName: "Attachments",
          description: 'e.g. [{"filename": "report.csv", "content": "{{report.output.csv}}"}] — content as text, or base64 with "encoding": "base64"',
        }),
        headers: Property.keyValue({ displayName: "Extra headers" }),
      },
      sampleData: { messageId: "<1a2b3c@example.com>", accepted: ["ada@example.com"], rejected: [], response: "250 OK" },
      async run(ctx) {
        const a = account(ctx.auth);
        const c = ctx.config as Record<string, unknown>;
        const host = String(a.smtp_host ?? "").trim();
        if (!host) throw new Error("the email connection has no SMTP host");
        const security = String(a.smtp_security ?? "starttls");
        const address = await allowedAddress(ctx.fetch, host);
        const attachments = c.attachments === undefined || c.attachments === null || c.attachments === "" ? [] : c.attachments;
        if (!Array.isArray(attachments)) throw new Error("attachments must be a list of {filename, content}");
        if (!c.text && !c.html) throw new Error("an email needs text or html");
        const transport = (await nodemailer()).createTransport({
          host: security === "none" ? address : host,
          port: Number(a.smtp_port ?? (security === "tls" ? 465 : security === "none" ? 25 : 587)),
          secure: security === "tls",
          requireTLS: security === "starttls",
          ignoreTLS: security === "none",
          auth: a.user ? { user: String(a.user), pass: String(a.password ?? "") } : undefined,
          tls: { servername: host },
          connectionTimeout: 15_000,
        });
        try {
          const info = await transport.sendMail({
            from: String(c.from || a.from || a.user),
            to: String(c.to),
            cc: c.cc ? String(c.cc) : undefined,
            bcc: c.bcc ? String(c.bcc) : undefined,
            replyTo: c.reply_to ? String(c.reply_to) : undefined,
            subject: String(c.subject ?? ""),
            text: c.text ? String(c.text) : undefined,
            html: c.html ? String(c.html) : undefined,
            headers: (c.headers ?? {}) as Record<string, string>,
            attachments: (attachments as Array<Record<string, unknown>>).map((att, i) => {
              if (!att || typeof att !== "object" || !att.filename) throw new Error(`attachments[${i}] needs a filename and content`);
              return {
                filename: String(att.filename),
                content: String(att.content ?? ""),
                encoding: att.encoding === "base64" ? "base64" : undefined,
                contentType: att.contentType ? String(att.contentType) : undefined,
              };
            }),
          });
          return { messageId: info.messageId, accepted: info.accepted.map(String), rejected: info.rejected.map(String), response: info.response };
        } catch (error) {
          throw new Error(`SMTP: ${(error as Error).message}`);
        } finally {
          transport.close();
        }
      },
    }),
    action({
      id: "move_or_flag",
      name: "Move or flag a message",
      description: "Move a message (by its UID from the new-email trigger) to another folder, or set or clear a flag",
      sideEffects: "write",
      props: {
        folder: folderProp("Folder of the message"),
        uid: Property.integer({ displayName: "Message UID", required: true, min: 1, description: "{{trigger.body.uid}}" }),
        operation: Property.staticDropdown({ displayName: "Do", default: "flag", options: ["move", "flag", "unflag"] }),
        to_folder: folderProp("Move to", false),
        flag: Property.staticDropdown({ displayName: "Flag", default: "\\Seen", options: ["\\Seen", "\\Flagged", "\\Answered", "\\Deleted"] }),
      },
      sampleData: { uid: 42, operation: "move", folder: "INBOX", toFolder: "Archive" },
      async run(ctx) {
        const c = ctx.config as Record<string, unknown>;
        const folder = String(c.folder ?? "INBOX");
        const uid = Number(c.uid);
        const operation = String(c.operation ?? "flag");
        return withImap(ctx.fetch, ctx.auth, async (client) => {
          const lock = await client.getMailboxLock(folder);
          try {
            if (operation === "move") {
              if (!c.to_folder) throw new Error("operation move needs to_folder");
              const moved = await client.messageMove(String(uid), String(c.to_folder), { uid: true });
              if (!moved) throw new Error(`message ${uid} was not found in ${folder}`);
              return { uid, operation, folder, toFolder: String(c.to_folder) };
            }
            if (operation !== "flag" && operation !== "unflag") throw new Error(`operation "${operation}" is unknown; use move, flag or unflag`);
            const changed =
              operation === "flag"
                ? await client.messageFlagsAdd(String(uid), [String(c.flag ?? "\\Seen")], { uid: true })
                : await client.messageFlagsRemove(String(uid), [String(c.flag ?? "\\Seen")], { uid: true });
            if (!changed) throw new Error(`message ${uid} was not found in ${folder}`);
            return { uid, operation, folder, flag: String(c.flag ?? "\\Seen") };
          } finally {
            lock.release();
          }
        });
      },
    }),
  ],
  triggers: [
    trigger({
      id: "new_email",
      name: "New email",
      description: "Polls an IMAP folder and starts a run for each new message (the first poll after publishing takes a baseline)",
      type: "poll",
      props: {
        folder: folderProp("Folder"),
        from_contains: Property.shortText({ displayName: "From contains" }),
        subject_contains: Property.shortText({ displayName: "Subject contains" }),
        unseen_only: Property.checkbox({ displayName: "Only unread messages", default: false }),
        poll_interval_seconds: Property.integer({
          displayName: "Check every (seconds)",
          min: 1,
          description: "default WEFT_POLL_INTERVAL (300); never more often than WEFT_POLL_MIN_INTERVAL (60)",
        }),
      },
      sampleData: {
        id: "1732500000:42",
        uid: 42,
        folder: "INBOX",
        messageId: "<x@example.com>",
        date: "2026-11-25T08:00:00.000Z",
        from: { name: "Ada", address: "ada@example.com" },
        to: [{ name: null, address: "me@example.com" }],
        cc: [],
        subject: "Hello",
        text: "Hi!",
        html: null,
        seen: false,
        attachments: [],
      },
      poll: pollNewEmail,
      dedupe: { strategy: "id", key: (item) => item.id },
    }),
  ],
});
