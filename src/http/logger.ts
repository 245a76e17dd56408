/** Structured logs: one JSON object per line on stdout (errors on stderr). */
import { writeSync } from "node:fs";
import type { LogLevel } from "../config";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  enabled(level: LogLevel): boolean;
}

export function createLogger(level: LogLevel, sink: (line: string, isError: boolean) => void = defaultSink): Logger {
  const threshold = ORDER[level];
  const write = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }), ORDER[lvl] >= ORDER.warn);
  };
  return {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    enabled: (lvl) => ORDER[lvl] >= threshold,
  };
}

/**
 * Written straight to the descriptor, as Node does for files and pipes on Linux: the first use of
 * process.stdout builds a stream first (~12 ms of a server's start, before its "weft listening" line). A
 * descriptor that refuses to block (EAGAIN: a non-blocking pipe that is full) falls back to the stream.
 */
function defaultSink(line: string, isError: boolean) {
  const bytes = Buffer.from(`${line}\n`);
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(isError ? 2 : 1, bytes, written);
  } catch {
    (isError ? process.stderr : process.stdout).write(bytes.subarray(written));
  }
}
