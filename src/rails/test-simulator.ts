// The Test-mode rail: synthetic, in-process, contacts nothing. Attempts stay pending until the simulate
// endpoint (or the payer page's test buttons) decides; Telecel asks for a verification code (123456).
import { randomToken } from '../lib/ids.ts';
import { VerificationRefusedError, type AttemptForRail, type CollectionRail } from './types.ts';

export const TEST_VERIFICATION_CODE = '123456';

export const testSimulator: CollectionRail = {
  provider: 'sika_test',
  // resend() only records a new prompt: nothing is charged twice, so the page may offer it.
  resendSupported: true,
  async initiate(attempt: AttemptForRail) {
    const verificationRequired = attempt.rail === 'momo' && attempt.network === 'telecel';
    return {
      providerReference: `TEST-${randomToken(16).toUpperCase()}`,
      rawStatus: verificationRequired ? 'AWAITING_VERIFICATION_CODE' : 'PENDING',
      verificationRequired,
      instructions: {},
    };
  },
  async status() {
    // The simulator has no news of its own: outcomes arrive through simulate.
    return { rawStatus: 'PENDING', outcome: 'pending' };
  },
  async authorize(_attempt: AttemptForRail, code: string) {
    if (code !== TEST_VERIFICATION_CODE)
      throw new VerificationRefusedError('The verification code was refused. In Test mode use 123456.');
    return { rawStatus: 'PENDING' };
  },
  async resend() {
    return { rawStatus: 'PROMPT_RESENT' };
  },
};
