/**
 * The email piece against real servers started by the test: Dovecot (Debian `dovecot-imapd`) for IMAP and
 * an SMTP server from nodemailer's authors (smtp-server). New messages appended to the mailbox start
 * exactly one run each — 100 messages with a restart of Weft in the middle give 0 duplicates and 0 misses —
 * the folder dropdown is listed live, a message can be flagged and moved, and a sent message arrives
 * with its subject, body, attachment and headers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ImapFlow } from "imapflow";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { FakeClock } from "../../src/lib/clock";
import { hasDovecot, startDovecot, type DovecotHandle } from "../support/dovecot";
import { freePort } from "../support/server";
import { definition, triggerApp, type TriggerApp } from "../triggers/harness";

if (!hasDovecot()) console.log("email piece: IMAP tests skipped (install the Debian package dovecot-imapd)");

const mail = (n: number, subject = `Message ${n}`) =>
  `From: Sender ${n} <sender${n}@example.com>\r\nTo: weft@example.com\r\nSubject: ${subject}\r\nMessage-ID: <m${n}-${Date.now()}@example.com>\r\nDate: Wed, 25 Nov 2026 08:00:00 +0000\r\nContent-Type: text/plain\r\n\r\nBody of message ${n}\r\n`;

describe.skipIf(!hasDovecot())("email: IMAP", () => {
  let imap: DovecotHandle;
  let h: TriggerApp;
  let conn: string;
  let client: ImapFlow;
  beforeAll(async () => {
    imap = await startDovecot();
    h = await triggerApp({ clock: new FakeClock("2026-11-25T08:00:00.000Z"), env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
    const made = await h.req("POST", "/api/connections", {
      body: {
        pieceId: "email",
        name: "mailbox",
        values: { user: imap.user, password: imap.password, imap_host: "127.0.0.1", imap_port: imap.port, imap_tls: false },
      },
    });
    expect(made.status).toBe(201);
    conn = made.body.data.id;
    client = new ImapFlow({ host: "127.0.0.1", port: imap.port, secure: false, auth: { user: imap.user, pass: imap.password }, logger: false });
    await client.connect();
    await client.mailboxCreate("Archive");
  }, 30_000);
  afterAll(async () => {
    await client?.logout().catch(() => undefined);
    await h?.close();
    await imap?.stop();
  });

  const append = async (from: number, to: number) => {
    for (let n = from; n < to; n++) await client.append("INBOX", mail(n));
  };
  async function fired(): Promise<string[]> {
    const subjects: string[] = [];
    for (const outcome of await h.triggers.poller.tick()) {
      if (outcome.result === "failed") throw new Error(`poll failed: ${outcome.error}`);
      for (const id of outcome.runIds ?? []) subjects.push((await h.run(id)).triggerData.body.subject);
    }
    return subjects;
  }

  test("the folder dropdown lists the mailbox's folders", async () => {
    const res = await h.req("POST", "/api/pieces/email/triggers/new_email/options/folder", { body: { connectionId: conn, config: {} } });
    expect(res.status).toBe(200);
    expect(res.body.data.options.map((o: any) => o.value).sort()).toEqual(["Archive", "INBOX"]);
  });

  test("100 messages with a restart in the middle: each starts exactly one run, parsed", async () => {
    await append(0, 3); // there before publishing: the baseline
    const trigger = {
      name: "trigger",
      type: "poll",
      pieceId: "email",
      actionId: "new_email",
      connectionId: conn,
      config: { folder: "INBOX", poll_interval_seconds: 60 },
    };
    const keep = { name: "keep", type: "PIECE", pieceId: "data", actionId: "set_fields", config: { fields: { subject: "{{trigger.body.subject}}" } } };
    const wf = await h.publishWorkflow(definition(trigger, keep));
    expect(await fired()).toEqual([]);

    const subjects: string[] = [];
    await append(100, 150);
    h.clock.advance(60_000);
    subjects.push(...(await fired()));
    await append(150, 170);
    h = await h.restart();
    await h.triggers.reconcile();
    await append(170, 200);
    h.clock.advance(60_000);
    subjects.push(...(await fired()));
    h.clock.advance(60_000);
    subjects.push(...(await fired())); // nothing new: nothing fires

    const expected = Array.from({ length: 100 }, (_, i) => `Message ${100 + i}`);
    expect([...subjects].sort()).toEqual([...expected].sort());
    expect(new Set(subjects).size).toBe(100);
    const runs = (await h.runsOf(wf.id)).filter((r) => r.triggerType === "poll");
    expect(runs).toHaveLength(100);
    const one = await h.run(runs[0]!.id);
    expect(one.triggerData.body).toMatchObject({
      folder: "INBOX",
      from: { address: expect.stringMatching(/^sender\d+@example\.com$/) },
      to: [{ address: "weft@example.com" }],
      seen: false,
    });
    expect(one.triggerData.body.text).toContain("Body of message");
  }, 60_000);

  test("a message is flagged, then moved to another folder", async () => {
    const lock = await client.getMailboxLock("INBOX");
    const uid = ((await client.search({ subject: "Message 100" }, { uid: true })) as number[])[0]!;
    lock.release();
    const steps = (operation: string, extra: Record<string, unknown>) =>
      definition(
        { name: "trigger", type: "manual", config: {} },
        { name: "act", type: "PIECE", pieceId: "email", actionId: "move_or_flag", connectionId: conn, config: { folder: "INBOX", uid, operation, ...extra } },
      );
    const flagged = await h.run(
      (
        await h.req("POST", `/api/workflows/${(await h.createWorkflow("flag", steps("flag", { flag: "\\Flagged" }))).id}/run?environment=test&wait=10`, {
          body: {},
        })
      ).body.data.id,
    );
    expect(flagged.status).toBe("completed");
    const moved = await h.run(
      (
        await h.req("POST", `/api/workflows/${(await h.createWorkflow("move", steps("move", { to_folder: "Archive" }))).id}/run?environment=test&wait=10`, {
          body: {},
        })
      ).body.data.id,
    );
    expect(moved.status).toBe("completed");
    const archive = await client.mailboxOpen("Archive");
    expect(archive.exists).toBe(1);
    const [message] = await Array.fromAsync(client.fetch("1:*", { envelope: true, flags: true }));
    expect(message!.envelope!.subject).toBe("Message 100");
    expect(message!.flags!.has("\\Flagged")).toBe(true);
  });

  test("without WEFT_ALLOW_CIDRS the mail server on this machine is refused", async () => {
    const strict = await triggerApp({ clock: new FakeClock("2026-11-25T08:00:00.000Z") });
    try {
      const made = await strict.req("POST", "/api/connections", {
        body: {
          pieceId: "email",
          name: "mailbox",
          values: { user: imap.user, password: imap.password, imap_host: "127.0.0.1", imap_port: imap.port, imap_tls: false },
        },
      });
      const res = await strict.req("POST", "/api/pieces/email/triggers/new_email/options/folder", { body: { connectionId: made.body.data.id, config: {} } });
      expect(JSON.stringify(res.body)).toContain("WEFT_ALLOW_CIDRS");
    } finally {
      await strict.close();
    }
  });
});

describe("email: SMTP", () => {
  test("a sent message arrives with its subject, text, HTML, attachment, reply-to and extra header", async () => {
    const received: Buffer[] = [];
    const port = await freePort();
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      onAuth: (auth, _session, cb) =>
        auth.username === "weft@example.com" && auth.password === "pw" ? cb(null, { user: "weft" }) : cb(new Error("bad login")),
      onData: (stream, _session, cb) => {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          received.push(Buffer.concat(chunks));
          cb();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(port, "127.0.0.1", resolve));
    const h = await triggerApp({ env: { WEFT_ALLOW_CIDRS: "127.0.0.0/8" } });
    try {
      const conn = (
        await h.req("POST", "/api/connections", {
          body: {
            pieceId: "email",
            name: "smtp",
            values: {
              user: "weft@example.com",
              password: "pw",
              smtp_host: "127.0.0.1",
              smtp_port: port,
              smtp_security: "none",
              from: "Weft <weft@example.com>",
            },
          },
        })
      ).body.data.id;
      const send = {
        name: "send",
        type: "PIECE",
        pieceId: "email",
        actionId: "send_email",
        connectionId: conn,
        config: {
          to: "ada@example.com",
          subject: "Report {{trigger.body.day}}",
          text: "See attached.",
          html: "<p>See attached.</p>",
          reply_to: "ops@example.com",
          attachments: [{ filename: "report.csv", content: "a,b\n1,2\n" }],
          headers: { "X-Weft-Run": "{{run.id}}" },
        },
      };
      const wf = await h.createWorkflow("mailer", definition({ name: "trigger", type: "manual", config: {} }, send));
      const run = await h.run((await h.req("POST", `/api/workflows/${wf.id}/run?environment=test&wait=10`, { body: { day: "Monday" } })).body.data.id);
      expect(run.status).toBe("completed");
      expect(run.steps[0].outputData.accepted).toEqual(["ada@example.com"]);
      expect(received).toHaveLength(1);
      const parsed = await simpleParser(received[0]!);
      expect(parsed.subject).toBe("Report Monday");
      expect(parsed.text?.trim()).toBe("See attached.");
      expect(parsed.html).toContain("<p>See attached.</p>");
      expect(parsed.replyTo?.text).toBe("ops@example.com");
      expect(parsed.headers.get("x-weft-run")).toBe(run.id);
      expect(parsed.attachments.map((a) => [a.filename, a.content.toString()])).toEqual([["report.csv", "a,b\n1,2\n"]]);
    } finally {
      await h.close();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
  });
});
