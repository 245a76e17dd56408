/** Settings → Network: the address policy of outbound requests and the ranges an admin allows (GET/PUT /api/settings/network). */
import { t } from "elysia";
import { DateTime } from "./common";

/** Most ranges one instance keeps; a list longer than this is a sign of allowing hosts one by one. */
export const MAX_ALLOWED_RANGES = 100;

export const NetworkSettingsBody = t.Object(
  {
    allowedCidrs: t.Array(t.String({ minLength: 1, maxLength: 60, description: "a CIDR range, e.g. 192.168.1.0/24 or fd00::/8" }), {
      maxItems: MAX_ALLOWED_RANGES,
      description: "every stored range (the list replaces the stored one; ranges from WEFT_ALLOW_CIDRS stay as they are)",
    }),
  },
  { additionalProperties: false },
);

export const AllowedRange = t.Object({
  cidr: t.String(),
  addedBy: t.String({ description: "who allowed it: the user's e-mail, or the API token's name and prefix" }),
  addedAt: DateTime,
});

export const NetworkPolicy = t.Object({
  alwaysRefused: t.Object(
    {
      addresses: t.Array(t.String()),
      names: t.Array(t.String()),
      what: t.String(),
    },
    { description: "refused whatever range is allowed" },
  ),
  refusedByDefault: t.Array(t.Object({ ranges: t.Array(t.String()), what: t.String() }), { description: "refused unless a range allows them" }),
  environment: t.Object(
    { variable: t.Literal("WEFT_ALLOW_CIDRS"), allowedCidrs: t.Array(t.String()) },
    { description: "ranges allowed by the server's environment (read-only here)" },
  ),
  allowedRanges: t.Array(AllowedRange, { description: "ranges allowed in Settings → Network" }),
  effective: t.Array(t.String(), { description: "what steps may reach although not public: both lists together" }),
});

/** GET and PUT /api/settings/network answer the policy and whether the caller may change it. */
export const NetworkPolicyAnswer = t.Composite([
  NetworkPolicy,
  t.Object({ canChange: t.Boolean({ description: "the caller is the instance owner and may change the stored ranges" }) }),
]);
