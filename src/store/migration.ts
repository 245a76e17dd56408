/** One numbered migration, the shape of every file in sqlite/migrations/ and postgres/migrations/. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** What an operator should know while it is applied (logged with the upgrade), e.g. how long it takes. */
  note?: string;
}

/** Pending migrations as an upgrade names them (`18 compact-runs`), with what each costs. */
export const describePending = (pending: Migration[]) => ({
  migrations: pending.map((m) => `${m.version} ${m.name}`),
  notes: pending.flatMap((m) => (m.note ? [`${m.version} ${m.name}: ${m.note}`] : [])),
});

/** A migrations folder's files (its files.ts, one export a file) as the list its database applies, in version order. */
export const inVersionOrder = (files: Record<string, Migration>): Migration[] => Object.values(files).sort((a, b) => a.version - b.version);
