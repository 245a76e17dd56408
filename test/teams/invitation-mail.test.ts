/**
 * Invitation e-mail (docs/teams.md): with WEFT_SMTP_URL set, an invitation is sent to the invitee through that SMTP
 * server — a real one on loopback (smtp-server, from nodemailer's authors) — and the link it carries joins the
 * workspace; the link is also returned to the inviter. An SMTP server that cannot be reached leaves the invitation
 * made, `emailed: false`, its link shown.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { freePort } from "../support/server";
import { testApp } from "../support/app";

const received: Buffer[] = [];
let smtp: SMTPServer;
let port: number;

beforeAll(async () => {
  port = await freePort();
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
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
});

afterAll(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

test("an invitation is e-mailed through WEFT_SMTP_URL with a link that joins the workspace", async () => {
  const t = await testApp({ WEFT_SMTP_URL: `smtp://127.0.0.1:${port}`, WEFT_SMTP_FROM: "Weft <weft@example.com>" });
  const res = await t.req("POST", "/api/invitations", { body: { email: "mia@example.com", role: "operator" } });
  expect(res.status).toBe(201);
  expect(res.body.data.emailed).toBe(true);
  expect(received).toHaveLength(1);
  const mail = await simpleParser(received[0]!);
  expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : "").toBe("mia@example.com");
  expect(mail.from?.text).toBe('"Weft" <weft@example.com>');
  expect(mail.subject).toContain("Default workspace");
  expect(mail.text).toContain(res.body.data.link);
  expect(mail.text).toContain("as operator");
  const token = /#\/invite\/(\S+)/.exec(mail.text ?? "")![1]!;
  const joined = await t.req("POST", "/api/invitations/accept", { token: null, body: { token, password: "mia's password" } });
  expect(joined.status).toBe(201);
  expect(joined.body.data.user.email).toBe("mia@example.com");
});

test("an SMTP server that cannot be reached: the invitation is made, not e-mailed, its link shown", async () => {
  const closed = await freePort();
  const t = await testApp({ WEFT_SMTP_URL: `smtp://127.0.0.1:${closed}` });
  const res = await t.req("POST", "/api/invitations", { body: { email: "nia@example.com", role: "viewer" } });
  expect(res.status).toBe(201);
  expect(res.body.data.emailed).toBe(false);
  expect(res.body.data.link).toContain(res.body.data.token);
  expect(t.logLines.some((line) => line.includes("invitation e-mail could not be sent"))).toBe(true);
  expect((await t.req("GET", "/api/invitations")).body.data.map((i: any) => i.email)).toEqual(["nia@example.com"]);
});
