/**
 * A value made by its first reader, then kept: for what start-up need not pay for (a module that builds tables
 * when evaluated, a compiled schema check, a cache that allocates all its slots when made) when its first use
 * comes later, or never.
 */
export function lazy<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}
