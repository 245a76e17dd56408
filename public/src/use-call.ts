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
 *
 * A screen that shows what `load` reads says it once with `useLoadedCall(load)`: `load` runs as the screen opens,
 * and `act(work)` runs `work` and then `load` again, in one call:
 * const { error, act } = useLoadedCall(load);
 * const remove = (id: string) => act(() => api.del(`/api/things/${id}`));
 */
import { type Signal, useSignal } from "@preact/signals";
import { useEffect, useRef } from "preact/hooks";
import { api, type Query } from "./api";

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

export interface LoadedCall extends Call {
  /** Runs `work`, then loads again, as one call. */
  act(work: () => Promise<unknown>): Promise<boolean>;
}

/** useCall for a screen that shows what `load` reads: it loads as the screen opens, and after each `act`. */
export function useLoadedCall(load: () => Promise<unknown>): LoadedCall {
  const calls = useCall();
  useEffect(() => {
    void calls.call(load);
  }, []);
  const act = (work: () => Promise<unknown>) =>
    calls.call(async () => {
      await work();
      await load();
    });
  return { ...calls, act };
}

/**
 * What GET `path` lists, read once as the screen opens, for a list the screen only offers (the workflows to
 * filter by, the templates to start from): it stays empty when the call fails, and says nothing of it.
 */
export function useListed<T>(path: string, query?: Query): Signal<T[]> {
  const list = useSignal<T[]>([]);
  useEffect(() => {
    api
      .get<T[]>(path, query)
      .then((res) => {
        list.value = res.data;
      })
      .catch(() => undefined);
  }, []);
  return list;
}
