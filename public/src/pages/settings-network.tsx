/**
 * Settings → Network: which private addresses steps may reach. The ranges WEFT_ALLOW_CIDRS sets (read-only
 * here) and the ones stored on the server, which the instance owner adds and removes; a change is in force
 * for the next request of every step, without a restart. Also says, in plain words, what stays refused.
 */
import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api } from "../api";
import { ErrorNote, StatusNote } from "../components/error-note";
import { when } from "../format";
import type { NetworkPolicy } from "../types";
import { useCall } from "../use-call";
import { Table } from "../components/table";
import { bindText } from "../bind";

const PATH = "/api/settings/network";

export function NetworkTab() {
  const policy = useSignal<NetworkPolicy | null>(null);
  const range = useSignal("");
  const done = useSignal<string | null>(null);
  const { busy, error, call } = useCall();
  useEffect(() => {
    void call(async () => {
      policy.value = (await api.get<NetworkPolicy>(PATH)).data;
    });
  }, []);
  /** Stores `cidrs` as the whole list of stored ranges; the answer is the policy now in force. */
  const save = (cidrs: string[], message: string) => {
    done.value = null;
    return call(async () => {
      policy.value = (await api.put<NetworkPolicy>(PATH, { allowedCidrs: cidrs })).data;
      done.value = message;
    });
  };
  const p = policy.value;
  const stored = p?.allowedRanges.map((r) => r.cidr) ?? [];
  const empty = p && p.environment.allowedCidrs.length === 0 && p.allowedRanges.length === 0;
  return (
    <section aria-labelledby="network-title">
      <h2 id="network-title">Network</h2>
      <p class="help">
        Steps — HTTP requests, databases, MQTT and e-mail servers, Activepieces pieces — may reach public addresses only. An address on the Weft machine or on
        your network is refused unless a range below allows it. A change is in force for the next request, without a restart.
      </p>
      <p class="note" role="note">
        <strong>Trade-off:</strong> anyone who can edit a workflow can reach every host in an allowed range.
      </p>
      <ErrorNote error={error.value} />
      <StatusNote message={done.value} />
      <h3>Allowed ranges</h3>
      {p?.canChange && (
        <form
          class="row"
          onSubmit={async (event) => {
            event.preventDefault();
            const cidr = range.value.trim();
            if (await save([...stored, cidr], `Allowed ${cidr}: steps reach its hosts from the next request on.`)) range.value = "";
          }}
        >
          <label class="field inline">
            <span>Range (CIDR)</span>
            <input required class="mono" placeholder="192.168.1.0/24" disabled={busy.value} {...bindText(range)} />
          </label>
          <button type="submit" class="primary" disabled={busy.value}>
            Allow range
          </button>
        </form>
      )}
      {empty && <p class="empty">No range is allowed: steps reach public addresses only.</p>}
      {p && !empty && (
        <Table label="Allowed ranges" columns={["Range", "Allowed by", "Since"]} actions="Actions">
          {p.environment.allowedCidrs.map((cidr) => (
            <tr key={`env-${cidr}`}>
              <td>
                <code>{cidr}</code>
              </td>
              <td class="small-text">
                set by <code>{p.environment.variable}</code>
              </td>
              <td class="small-text">server start</td>
              <td class="small-text muted">change it where the server is started</td>
            </tr>
          ))}
          {p.allowedRanges.map((r) => (
            <tr key={r.cidr}>
              <td>
                <code>{r.cidr}</code>
              </td>
              <td class="small-text">{r.addedBy}</td>
              <td class="small-text">{when(r.addedAt)}</td>
              <td>
                {p.canChange && (
                  <button
                    type="button"
                    class="small danger"
                    disabled={busy.value}
                    aria-label={`Remove ${r.cidr}`}
                    onClick={() =>
                      void save(
                        stored.filter((cidr) => cidr !== r.cidr),
                        `Removed ${r.cidr}: its hosts are refused from the next request on.`,
                      )
                    }
                  >
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {p && !p.canChange && <p class="help">Only the instance owner can change the stored ranges.</p>}
      {p && (
        <>
          <h3>Refused unless a range allows them</h3>
          <ul class="list">
            {p.refusedByDefault.map((group) => (
              <li key={group.what}>
                {group.what}: <code>{group.ranges.join(", ")}</code>
              </li>
            ))}
          </ul>
          <h3>Always refused</h3>
          <p class="help">
            {p.alwaysRefused.what}, even inside an allowed range: <code>{[...p.alwaysRefused.addresses, ...p.alwaysRefused.names].join(", ")}</code>.
          </p>
        </>
      )}
    </section>
  );
}
