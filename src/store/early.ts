/**
 * What the store can start before the program is loaded: `weft serve` calls it first thing, so that a remote
 * database's connection is made while the rest loads. Kept apart from ./open.ts, which loads every migration.
 */
export async function startStoreEarly(databaseUrl: string | undefined): Promise<void> {
  if (databaseUrl && /^postgres(?:ql)?:\/\//.test(databaseUrl)) (await import("./postgres/sync-db")).startEarly(databaseUrl);
}
