/**
 * Events as syslog messages (docs/operations.md, "Log streaming"): RFC 5424's format, sent over UDP (one
 * message per datagram, RFC 5426), TCP or TLS (octet-counting framing, `LENGTH SP MESSAGE`, RFC 6587 and
 * RFC 5425) with node's own sockets. The message is the event as one line of JSON; the MSGID its type.
 *
 *   const syslog = new SyslogDestination({ protocol: "tcp", host: "logs", port: 514, facility: 16, queue: 10_000, log });
 *   syslog.send(event); await syslog.flush(); await syslog.close();
 *
 * A stream connection that fails is opened again with a growing pause (up to 30 s); events meanwhile wait
 * in a bounded queue, and past it new ones are dropped and counted. Syslog has no acknowledgements: what
 * the kernel accepted before a connection broke may be lost with it.
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { isIP, connect as connectTcp, type Socket } from "node:net";
import { hostname } from "node:os";
import { connect as connectTls } from "node:tls";
import type { Logger } from "../../http/logger";
import { type Destination, DropCounter, type StreamEvent, type DestinationStats } from "./events";

/** RFC 5424 severities of the event levels. */
const SEVERITY = { error: 3, warning: 4, notice: 5, info: 6 } as const;
/** Longest pause between two attempts to connect, ms. */
const MAX_RECONNECT_MS = 30_000;

export interface SyslogOptions {
  protocol: "udp" | "tcp" | "tls";
  host: string;
  port: number;
  /** 0–23 (16 is local0). */
  facility: number;
  /** Events held while the server is unreachable. */
  queue: number;
  /** PEM of the CA that signed a TLS server's certificate; default the system's CAs. */
  caFile?: string;
  log: Logger;
  /** HOSTNAME of the messages; default this machine's name. */
  hostname?: string;
}

/** RFC 5424 header fields allow printable US-ASCII without spaces; "-" stands for an empty one. */
const headerField = (value: string, max: number) => value.replace(/[^\x21-\x7e]/g, "").slice(0, max) || "-";

/** One RFC 5424 message: `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - MSG` (no structured data; MSG is the event's JSON). */
export function formatSyslog(event: StreamEvent, facility: number, host: string): string {
  const pri = facility * 8 + SEVERITY[event.severity];
  return `<${pri}>1 ${event.time} ${headerField(host, 255)} weft ${process.pid} ${headerField(event.type, 32)} - ${JSON.stringify(event)}`;
}

export class SyslogDestination implements Destination {
  readonly name: string;
  private readonly drops: DropCounter;
  private readonly host: string;
  private sent = 0;
  private udp: UdpSocket | undefined;
  private stream: Socket | undefined;
  private connected = false;
  private blocked = false;
  private closed = false;
  private readonly queue: Buffer[] = [];
  private reconnectMs = 500;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private idleWaiters: (() => void)[] = [];
  private readonly ca: Buffer | undefined;

  constructor(private readonly o: SyslogOptions) {
    this.name = `syslog ${o.protocol}://${o.host}:${o.port}`;
    this.drops = new DropCounter(this.name, o.log);
    this.host = o.hostname ?? hostname();
    this.ca = o.caFile ? readFileSync(o.caFile) : undefined;
  }

  get stats(): DestinationStats {
    return { sent: this.sent, dropped: this.drops.total, queued: this.queue.length, connected: this.connected };
  }

  send(event: StreamEvent): void {
    if (this.closed) return;
    const message = formatSyslog(event, this.o.facility, this.host);
    if (this.o.protocol === "udp") {
      this.sendDatagram(message);
      return;
    }
    if (this.queue.length >= this.o.queue) {
      this.drops.drop(1, "its queue is full (the server is slow or unreachable)");
      return;
    }
    const body = Buffer.from(message);
    this.queue.push(Buffer.concat([Buffer.from(`${body.length} `), body]));
    if (!this.stream) this.open();
    else this.pump();
  }

  /** Resolves once every queued message was handed to the kernel, or after `ms`. */
  async flush(ms = 5_000): Promise<void> {
    if (this.queue.length === 0 && !this.blocked) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      this.idleWaiters.push(done);
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  /** Closes the connection; what is still queued (LogStream.close waited for it a while) is dropped and counted. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.queue.length > 0) this.drops.drop(this.queue.length, "the server stopped before syslog took them");
    this.queue.length = 0;
    clearTimeout(this.reconnectTimer);
    this.udp?.close();
    this.stream?.end();
    this.stream = undefined;
  }

  private sendDatagram(message: string) {
    if (!this.udp) {
      this.udp = createSocket(isIP(this.o.host) === 6 ? "udp6" : "udp4");
      this.udp.on("error", (error) => this.o.log.warn("syslog over UDP failed", { destination: this.name, error: error.message }));
      this.udp.unref();
    }
    this.udp.send(message, this.o.port, this.o.host, (error) => {
      if (error) this.drops.drop(1, `a datagram could not be sent (${error.message})`);
      else this.sent++;
    });
  }

  private open() {
    const { protocol, host, port } = this.o;
    const onConnect = () => {
      this.connected = true;
      this.reconnectMs = 500;
      this.pump();
    };
    const socket =
      protocol === "tls"
        ? connectTls({ host, port, ca: this.ca, servername: isIP(host) ? undefined : host }, onConnect)
        : connectTcp({ host, port }, onConnect);
    this.stream = socket;
    socket.setKeepAlive(true, 60_000);
    socket.unref(); // a shutdown closes it; it never holds the process open
    socket.on("drain", () => {
      this.blocked = false;
      this.pump();
    });
    socket.on("data", () => {}); // a syslog server sends nothing; whatever it sends is read and ignored
    socket.on("error", (error) => {
      this.o.log.warn("syslog connection failed; it is opened again", { destination: this.name, error: error.message, retryInMs: this.reconnectMs });
    });
    socket.on("close", () => {
      if (this.stream !== socket) return;
      this.stream = undefined;
      this.connected = false;
      this.blocked = false;
      if (this.closed) return;
      this.reconnectTimer = setTimeout(() => {
        if (!this.closed && !this.stream && this.queue.length > 0) this.open();
      }, this.reconnectMs);
      this.reconnectTimer.unref?.();
      this.reconnectMs = Math.min(MAX_RECONNECT_MS, this.reconnectMs * 2);
    });
  }

  private pump() {
    const socket = this.stream;
    if (!socket || !this.connected) return;
    while (this.queue.length > 0 && !this.blocked) {
      const frame = this.queue.shift()!;
      this.sent++;
      if (!socket.write(frame)) this.blocked = true;
    }
    if (this.queue.length === 0 && !this.blocked) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const waiter of waiters) waiter();
    }
  }
}
