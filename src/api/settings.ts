/** Instance-wide settings: Settings → Network, the private ranges steps may reach (docs/security.md). */
import { Elysia } from "elysia";
import type { AppDeps } from "./deps";
import { audited } from "./audit";
import { routeOptions } from "./route-options";
import { NetworkPolicyAnswer as Policy, NetworkSettingsBody } from "../schema/network";

const route = routeOptions(["Settings"]);

export const settingsApi = ({ security, network, audit }: AppDeps) =>
  new Elysia({ name: "api-settings" })
    .use(security)
    .get("/api/settings/network", async ({ auth }) => ({ data: await network.policy(auth) }), {
      permission: "workspace:admin",
      ...route.answer(
        Policy,
        "The address policy of outbound requests from steps: what is always refused, what is refused by default, the ranges WEFT_ALLOW_CIDRS allows (read-only) and the stored ranges with who allowed them and when",
      ),
    })
    .put(
      "/api/settings/network",
      async (ctx) => {
        const before = (await network.policy(ctx.auth)).allowedRanges.map((r) => r.cidr);
        const data = await network.replace(ctx.auth, ctx.body.allowedCidrs);
        const after = data.allowedRanges.map((r) => r.cidr);
        return audited(
          audit,
          ctx,
          data,
          "settings.changed",
          { type: "settings", id: "network", name: "Network" },
          { added: after.filter((c) => !before.includes(c)), removed: before.filter((c) => !after.includes(c)) },
        );
      },
      {
        permission: "workspace:admin",
        ...route.answer(
          Policy,
          "Replace the stored allowed ranges (instance owner only). In force at once for new requests of every step, with those of WEFT_ALLOW_CIDRS; anyone who can edit a workflow can then reach every host in them",
        ),
        body: NetworkSettingsBody,
      },
    );
