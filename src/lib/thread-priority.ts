/**
 * Background threads give way to the thread that serves HTTP. On a machine whose cores are all busy (two
 * cores, 20 run-list reads at once), the kernel shares them between runnable threads by their nice value:
 * a reader thread at nice 0 holds a core for its whole time slice while /healthz or a webhook waits for it.
 * At a higher nice value the kernel runs the serving thread first whenever it wakes, and the background
 * thread still gets every core nobody else wants, so a machine with spare cores loses nothing.
 *
 * Linux only: there the nice value belongs to a thread, and `setPriority(0, n)` (setpriority(2) with
 * PRIO_PROCESS and 0) changes the calling thread's alone. On macOS and BSD the same call changes the whole
 * process, the serving thread included, so elsewhere this does nothing.
 */
import { setPriority } from "node:os";

/** The nice value of a thread that yields: low enough that a woken serving thread preempts it at once. */
export const BACKGROUND_NICE = 10;

/** Lowers the calling thread's priority (see above); false where the platform cannot do it for one thread. */
export function yieldToServingThread(): boolean {
  if (process.platform !== "linux") return false;
  try {
    setPriority(0, BACKGROUND_NICE);
    return true;
  } catch {
    // A sandbox that forbids setpriority(2) (seccomp): the thread keeps its priority, which is only slower.
    return false;
  }
}
