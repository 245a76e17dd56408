/** Connections and OAuth2: the service, and what the engine, the gate and the CLI need from it. */
export { Connections, CONNECTION_STATUSES, type ConnectionsOptions } from "./service";
export type { ConnectionRef } from "./auth-resolver";
export { ManagedApps } from "./managed-apps";
export { stateKeyFrom } from "./state-key";
