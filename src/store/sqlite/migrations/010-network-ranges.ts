/**
 * The ranges an admin allows in Settings → Network: private addresses steps may reach, instance-wide, in
 * addition to WEFT_ALLOW_CIDRS. `added_by` says who, as the API showed them then (an e-mail, or a token).
 */
export default {
  version: 10,
  name: "network-ranges",
  sql: `
CREATE TABLE network_allowed_ranges (
  cidr TEXT NOT NULL PRIMARY KEY,
  added_by TEXT NOT NULL,
  added_at TEXT NOT NULL
);
`,
};
