/** What the throwaway database servers of the tests (postgres.ts, mariadb.ts) hand back. */
export interface DatabaseServer {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  url: string;
  stop(): Promise<void>;
}
