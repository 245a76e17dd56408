/** Does a workflow definition (FlowVersion JSON) have a trigger or step whose `connectionId` is `id`? */
export function usesConnection(definitionJson: string | null, id: string): boolean {
  if (!definitionJson?.includes(id)) return false;
  let root: unknown;
  try {
    root = JSON.parse(definitionJson);
  } catch {
    return false;
  }
  // Walk every object: steps hide under nextAction, branches[].firstAction, firstLoopAction and onErrorAction.
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    const record = node as Record<string, unknown>;
    if (record.connectionId === id) return true;
    for (const [key, value] of Object.entries(record)) if (key !== "config" && typeof value === "object") stack.push(value);
  }
  return false;
}
