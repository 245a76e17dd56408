/** One numbered migration, the shape of every file in sqlite/migrations/ and postgres/migrations/. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** What an operator should know while it is applied (logged with the upgrade), e.g. how long it takes. */
  note?: string;
}
