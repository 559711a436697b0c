// A part of a transaction that may fail without ending it: a use case that retries a step on a failed
// statement (a unique violation, a deadlock) does so inside the caller's transaction only through this.
import type { Queryable } from './types.ts';

/**
 * Runs fn behind a savepoint of the transaction `tx`: when fn throws, what it wrote is rolled back and the
 * transaction goes on (PostgreSQL aborts the whole transaction on a failed statement otherwise).
 */
export async function withSavepoint<T>(tx: Queryable, fn: () => Promise<T>): Promise<T> {
  await tx.query('SAVEPOINT sika_step');
  try {
    const result = await fn();
    await tx.query('RELEASE SAVEPOINT sika_step');
    return result;
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT sika_step');
    throw error;
  }
}
