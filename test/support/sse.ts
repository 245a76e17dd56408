/** Server-sent events as a test reads them: each `event:` block with its numeric id and parsed JSON data. */
export interface SseEvent {
  id: number;
  event: string;
  data: any;
}

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split("\n\n")) {
    const fields: Record<string, string> = {};
    for (const line of block.split("\n")) {
      if (!line || line.startsWith(":")) continue;
      const at = line.indexOf(": ");
      fields[line.slice(0, at)] = line.slice(at + 2);
    }
    if (fields.event) events.push({ id: Number(fields.id), event: fields.event, data: JSON.parse(fields.data!) });
  }
  return events;
}
