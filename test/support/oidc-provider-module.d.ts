// oidc-provider ships no type declarations (a devDependency used only by test/support/oidc-provider.ts): the little
// the tests use is typed there.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
