// A worker pass over the rows it claimed (payouts, refunds): each moved one step on its own, so one that
// fails is reported and left for a later pass (its claim's hold runs out) without stopping the others.

/** Runs step on each claimed id in turn; a step that throws is handed to failed. Returns how many were claimed. */
export async function stepEachClaimed(
  ids: readonly string[],
  step: (id: string) => Promise<void>,
  failed: (error: unknown, id: string) => void,
): Promise<number> {
  for (const id of ids) {
    try {
      await step(id);
    } catch (error) {
      failed(error, id);
    }
  }
  return ids.length;
}
