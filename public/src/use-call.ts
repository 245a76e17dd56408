/**
 * How a screen calls the API and shows it (CONTRIBUTING.md, "Add a page that calls the API"): `call(work)`
 * clears the last error, marks the screen busy while `work` runs, and keeps a failure in `error` for
 * <ErrorNote>. It resolves to whether `work` succeeded, so the screen goes on (closes a dialog, clears a
 * field) only then. Calls may nest (an action that reloads the list): busy lasts until the outer one ends.
 *
 * @example
 * const { busy, error, call } = useCall();
 * useEffect(() => void call(load), []);
 * const remove = (id: string) => call(async () => { await api.del(`/api/things/${id}`); await load(); });
 * // <ErrorNote error={error.value} />   <button disabled={busy.value} onClick={() => remove(id)}>Remove</button>
 */
import { type Signal, useSignal } from "@preact/signals";
import { useRef } from "preact/hooks";

export interface Call {
  /** True while a call runs. */
  busy: Signal<boolean>;
  /** The last call's failure (an ApiError with the server's code and message), null after a call succeeds or starts. */
  error: Signal<unknown>;
  call(work: () => Promise<unknown>): Promise<boolean>;
}

/** `startBusy`: the screen loads as it opens, so it is busy before its first call starts. */
export function useCall(startBusy = false): Call {
  const busy = useSignal(startBusy);
  const error = useSignal<unknown>(null);
  const running = useRef(0);
  const call = async (work: () => Promise<unknown>) => {
    error.value = null;
    running.current += 1;
    busy.value = true;
    try {
      await work();
      return true;
    } catch (e) {
      error.value = e;
      return false;
    } finally {
      running.current -= 1;
      busy.value = running.current > 0;
    }
  };
  return { busy, error, call };
}
